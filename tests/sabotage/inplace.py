"""Ways to break in-place operations under autograd (spec/inplace.md)."""

import functools

import torch

_METHODS = ["add_", "sub_", "mul_", "div_", "zero_", "fill_", "clamp_", "copy_", "__iadd__", "__imul__"]


def _patch_methods(make):
    for name in _METHODS:
        setattr(torch.Tensor, name, make(getattr(torch.Tensor, name)))


def inplace_on_leaf_allowed():
    """In-place ops on a leaf that requires grad run as if under no_grad, instead of raising."""

    def make(original):
        @functools.wraps(original)
        def method(self, *args, **kwargs):
            if self.is_leaf and self.requires_grad and torch.is_grad_enabled():
                with torch.no_grad():
                    return original(self, *args, **kwargs)
            return original(self, *args, **kwargs)

        return method

    _patch_methods(make)


def inplace_skips_version_counter():
    """In-place ops that autograd does not record write through `.data`: no version bump."""

    def make(original):
        @functools.wraps(original)
        def method(self, *args, **kwargs):
            if torch.is_grad_enabled() and self.requires_grad:
                return original(self, *args, **kwargs)
            original(self.data, *args, **kwargs)
            return self

        return method

    _patch_methods(make)


def backward_error_has_old_hint():
    """The modified-saved-tensor error carries the hint text of torch before 2.11."""
    original = torch.Tensor.backward

    @functools.wraps(original)
    def backward(self, *args, **kwargs):
        try:
            return original(self, *args, **kwargs)
        except RuntimeError as exc:
            text = str(exc).replace("set_detect_anomaly(True, check_nan=False).", "set_detect_anomaly(True).")
            raise RuntimeError(text) from None

    torch.Tensor.backward = backward


CASES = [
    ("inplace_on_leaf_allowed", "test_inplace.py", {"INPLACE-1", "INPLACE-2", "INPLACE-3"}),
    ("inplace_skips_version_counter", "test_inplace.py", {"INPLACE-5", "INPLACE-7", "INPLACE-10", "INPLACE-11"}),
    ("backward_error_has_old_hint", "test_inplace.py", {"INPLACE-14"}),
]
