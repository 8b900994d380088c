"""Ways to break what spec/rebinding.md states (the objects a rebinding leaves behind and creates)."""

import functools

import torch


def factories_require_grad():
    """Fresh floating tensors from factory functions require grad (as if rebinding kept `requires_grad`)."""

    def wrap(factory):
        @functools.wraps(factory)
        def made(*args, **kwargs):
            out = factory(*args, **kwargs)
            if out.is_floating_point() and not out.requires_grad and torch.is_grad_enabled():
                out.requires_grad_()
            return out

        return made

    for name in ("tensor", "zeros", "randn"):
        setattr(torch, name, wrap(getattr(torch, name)))


def optimizer_copies_params():
    """An optimizer that holds copies of its parameters, not the tensors it was given."""
    init = torch.optim.SGD.__init__

    def copying_init(self, params, *args, **kwargs):
        params = [p.detach().clone().requires_grad_(p.requires_grad) for p in params]
        init(self, params, *args, **kwargs)

    torch.optim.SGD.__init__ = copying_init


def backward_is_noop():
    """`backward()` that does nothing: old graphs no longer reach the old tensor."""
    torch.Tensor.backward = lambda self, *args, **kwargs: None


def non_leaf_grad_silent():
    """`.grad` of a non-leaf returns None without the UserWarning."""
    grad = torch.Tensor.grad

    def getter(self):
        if not self.is_leaf:
            return None
        return grad.__get__(self)

    torch.Tensor.grad = property(getter, grad.__set__, grad.__delete__)


CASES = [
    ("factories_require_grad", "test_rebinding.py", {"REBIND-4"}),
    ("optimizer_copies_params", "test_rebinding.py", {"REBIND-9", "REBIND-10"}),
    ("backward_is_noop", "test_rebinding.py", {"REBIND-3", "REBIND-5", "REBIND-7"}),
    ("non_leaf_grad_silent", "test_rebinding.py", {"REBIND-8"}),
]
