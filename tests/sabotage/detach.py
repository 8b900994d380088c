"""Ways to break `detach()` and `detach_()` (spec/detach.md)."""

import torch

_detach = torch.Tensor.detach
_detach_ = torch.Tensor.detach_


def detach_returns_data():
    """`detach()` as `.data`: same storage, but a version counter of its own (autograd's check is bypassed)."""
    torch.Tensor.detach = lambda self: self.data


def detach_returns_copy():
    """`detach()` as `detach().clone()`: no shared storage, writes do not reach the original."""
    torch.Tensor.detach = lambda self: _detach(self).clone()


def detach_in_place_accepts_views():
    """`detach_()` on a view silently does nothing instead of raising."""

    def detach_(self):
        if self._base is not None:
            return self
        return _detach_(self)

    torch.Tensor.detach_ = detach_


def detach_copies_bfloat16():
    """`detach()` of a bfloat16 tensor returns a copy; every other kind of TENSOR_KINDS is detached as before."""
    torch.Tensor.detach = lambda self: _detach(self).clone() if self.dtype == torch.bfloat16 else _detach(self)


def detach_in_place_skips_non_leaves():
    """`detach_()` on a non-leaf returns it unchanged: it still requires grad and keeps its `grad_fn`."""
    torch.Tensor.detach_ = lambda self: self if not self.is_leaf else _detach_(self)


CASES = [
    ("detach_in_place_skips_non_leaves", "test_detach.py", {"DETACH-9", "DETACH-12"}),
    ("detach_returns_data", "test_detach.py", {"DETACH-3", "DETACH-4", "DETACH-6"}),
    ("detach_returns_copy", "test_detach.py", {"DETACH-1", "DETACH-3", "DETACH-5", "DETACH-6"}),
    ("detach_in_place_accepts_views", "test_detach.py", {"DETACH-10"}),
    ("detach_copies_bfloat16", "test_detach.py", {"DETACH-1", "DETACH-3"}),
]
