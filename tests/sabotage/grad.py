"""Ways to break `.grad` (spec/grad.md)."""

import warnings

import torch

_grad = torch.Tensor.grad
_backward = torch.Tensor.backward
_opt_zero_grad = torch.optim.Optimizer.zero_grad
_module_zero_grad = torch.nn.Module.zero_grad


def backward_overwrites_grad():
    """`backward()` that replaces `.grad` of the leaves instead of adding to it."""

    def leaves(fn, seen):
        if fn is None or fn in seen:
            return
        seen.add(fn)
        if hasattr(fn, "variable"):
            yield fn.variable
        for nxt, _ in fn.next_functions:
            yield from leaves(nxt, seen)

    def backward(self, *args, **kwargs):
        for leaf in leaves(self.grad_fn, set()):
            leaf.grad = None
        return _backward(self, *args, **kwargs)

    torch.Tensor.backward = backward


def zero_grad_keeps_tensors():
    """`zero_grad()` defaults to `set_to_none=False` (the torch < 2.0 behaviour)."""
    torch.optim.Optimizer.zero_grad = lambda self, set_to_none=False: _opt_zero_grad(self, set_to_none)
    torch.nn.Module.zero_grad = lambda self, set_to_none=False: _module_zero_grad(self, set_to_none)


def grad_setter_copies():
    """`x.grad = g` stores a copy of `g`, not `g` itself."""
    torch.Tensor.grad = property(_grad.__get__, lambda self, g: _grad.__set__(self, None if g is None else g.clone()))


def non_leaf_grad_silent():
    """Reading `.grad` of a non-leaf gives None without the UserWarning."""

    def getter(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _grad.__get__(self)

    torch.Tensor.grad = property(getter, _grad.__set__)


CASES = [
    ("backward_overwrites_grad", "test_grad.py", {"GRAD-2", "GRAD-8"}),
    ("zero_grad_keeps_tensors", "test_grad.py", {"GRAD-4"}),
    ("grad_setter_copies", "test_grad.py", {"GRAD-7"}),
    ("non_leaf_grad_silent", "test_grad.py", {"GRAD-16"}),
]
