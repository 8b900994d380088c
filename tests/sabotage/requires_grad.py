"""Ways to break `requires_grad` (spec/requires_grad.md)."""

import torch

_requires_grad_ = torch.Tensor.requires_grad_
_backward = torch.Tensor.backward


def requires_grad_method_ignores_integers():
    """`requires_grad_()` on an integer tensor silently does nothing instead of raising."""

    def requires_grad_(self, requires_grad=True):
        if requires_grad and not (self.is_floating_point() or self.is_complex()):
            return self
        return _requires_grad_(self, requires_grad)

    torch.Tensor.requires_grad_ = requires_grad_


def requires_grad_method_rejects_non_leaves():
    """`requires_grad_(True)` on a non-leaf raises instead of being a no-op."""

    def requires_grad_(self, requires_grad=True):
        if not self.is_leaf:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        return _requires_grad_(self, requires_grad)

    torch.Tensor.requires_grad_ = requires_grad_


def backward_without_grad_is_silent():
    """`backward()` of a tensor that does not require grad returns quietly ("no backpropagation")."""

    def backward(self, *args, **kwargs):
        if not self.requires_grad:
            return None
        return _backward(self, *args, **kwargs)

    torch.Tensor.backward = backward


def detach_keeps_the_graph():
    """`detach()` returns an alias that stays in the graph (`view_as`): it requires grad when its input does."""
    torch.Tensor.detach = lambda self: self.view_as(self)


def views_are_cut_from_the_graph():
    """`t()`, `view` and `unsqueeze` return detached aliases: they never require grad."""
    for name in ("t", "view", "unsqueeze"):
        original = getattr(torch.Tensor, name)
        setattr(torch.Tensor, name, lambda self, *a, _original=original, **k: _original(self, *a, **k).detach())


def half_precision_cannot_require_grad():
    """`requires_grad_()` refuses `float16` (as if only float32/float64/complex could require grad)."""

    def requires_grad_(self, requires_grad=True):
        if requires_grad and self.dtype == torch.float16:
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        return _requires_grad_(self, requires_grad)

    torch.Tensor.requires_grad_ = requires_grad_


def no_grad_view_flag_refused():
    """`requires_grad_(False)` on a view taken under no_grad raises, as on a non-leaf, instead of doing nothing."""

    def requires_grad_(self, requires_grad=True):
        if self._is_view() and self.is_leaf and not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        return _requires_grad_(self, requires_grad)

    torch.Tensor.requires_grad_ = requires_grad_


CASES = [
    ("detach_keeps_the_graph", "test_requires_grad.py", {"REQGRAD-40"}),
    ("views_are_cut_from_the_graph", "test_requires_grad.py", {"REQGRAD-9"}),
    ("requires_grad_method_ignores_integers", "test_requires_grad.py", {"REQGRAD-3"}),
    ("requires_grad_method_rejects_non_leaves", "test_requires_grad.py", {"REQGRAD-8"}),
    ("backward_without_grad_is_silent", "test_requires_grad.py", {"REQGRAD-11"}),
    ("half_precision_cannot_require_grad", "test_requires_grad.py", {"REQGRAD-5"}),
    ("no_grad_view_flag_refused", "test_requires_grad.py", {"REQGRAD-14"}),
]
