"""Ways to break what spec/new_tensor.md states about new tensors and `backward()`."""

import functools
import warnings

import torch

_backward = torch.Tensor.backward
_grad = torch.Tensor.grad
_round = torch.round
_zeros = torch.zeros


def backward_without_graph_is_a_no_op():
    """`t.backward()` on a tensor that does not require grad silently does nothing."""

    def backward(self, gradient=None, *args, **kwargs):
        if not self.requires_grad:
            return None
        return _backward(self, gradient, *args, **kwargs)

    torch.Tensor.backward = backward


def implicit_gradient_for_non_scalar():
    """`t.backward()` on a non-scalar uses a gradient of ones instead of raising."""

    def backward(self, gradient=None, *args, **kwargs):
        if gradient is None and self.requires_grad and self.numel() != 1:
            gradient = torch.ones_like(self)
        return _backward(self, gradient, *args, **kwargs)

    torch.Tensor.backward = backward


def round_is_straight_through():
    """`torch.round` with a straight-through gradient (1 instead of 0)."""

    @functools.wraps(_round)
    def round_(x, *args, **kwargs):
        return x + (_round(x, *args, **kwargs) - x).detach()

    torch.round = round_


def zeros_require_grad_by_default():
    """Floating `torch.zeros(...)` requires grad unless told otherwise."""

    @functools.wraps(_zeros)
    def zeros(*args, requires_grad=None, **kwargs):
        t = _zeros(*args, **kwargs)
        if requires_grad is None:
            requires_grad = t.dtype.is_floating_point
        return t.requires_grad_(requires_grad) if t.is_floating_point() or requires_grad else t

    torch.zeros = zeros


def grad_of_leaf_warns():
    """Reading `.grad` of any tensor warns."""

    def getter(self):
        warnings.warn("The .grad attribute is being accessed", UserWarning, stacklevel=2)
        return _grad.__get__(self)

    torch.Tensor.grad = property(getter, _grad.__set__, _grad.__delete__)


def implicit_gradient_is_two():
    """`t.backward()` on a one-element tensor uses the gradient 2 instead of 1."""

    def backward(self, gradient=None, *args, **kwargs):
        if gradient is None and self.requires_grad and self.numel() == 1:
            gradient = torch.full_like(self, 2.0)
        return _backward(self, gradient, *args, **kwargs)

    torch.Tensor.backward = backward


def implicit_gradient_for_complex_scalar():
    """`t.backward()` on a one-element complex tensor uses the gradient 1+0j instead of raising (torch 2.0, NEW-17)."""

    def backward(self, gradient=None, *args, **kwargs):
        if gradient is None and self.requires_grad and self.is_complex() and self.numel() == 1:
            gradient = torch.ones_like(self)
        return _backward(self, gradient, *args, **kwargs)

    torch.Tensor.backward = backward


CASES = [
    ("backward_without_graph_is_a_no_op", "test_new_tensor.py", {"NEW-5", "NEW-12"}),
    ("implicit_gradient_for_non_scalar", "test_new_tensor.py", {"NEW-9"}),
    ("round_is_straight_through", "test_new_tensor.py", {"NEW-13", "NEW-14"}),
    ("zeros_require_grad_by_default", "test_new_tensor.py", {"NEW-1"}),
    ("grad_of_leaf_warns", "test_new_tensor.py", {"NEW-7"}),
    ("implicit_gradient_is_two", "test_new_tensor.py", {"NEW-10", "NEW-11"}),
    # on torch from 2.1 (the tests' torch), where NEW-16 holds
    ("implicit_gradient_for_complex_scalar", "test_new_tensor.py", {"NEW-16"}),
]
