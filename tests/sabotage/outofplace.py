"""Ways to break what spec/outofplace.md states (`y = x + 2` leaves `x` alone and is recorded)."""

import torch

_add = torch.Tensor.__add__


def add_updates_x():
    """`x + v` as an in-place update of `x` behind autograd's back, returning `x` itself."""

    def add(self, other):
        with torch.no_grad():
            return self.add_(other)

    torch.Tensor.__add__ = add
    torch.Tensor.__radd__ = add
    torch.Tensor.add = add
    torch.add = add


def results_are_detached():
    """Operators that return results cut from the graph."""
    for name in ("__add__", "__radd__", "__sub__", "__mul__", "__truediv__", "add"):
        original = getattr(torch.Tensor, name)
        setattr(torch.Tensor, name, lambda self, *args, _f=original, **kwargs: _f(self, *args, **kwargs).detach())
    add = torch.add
    torch.add = lambda *args, **kwargs: add(*args, **kwargs).detach()


CASES = [
    ("add_updates_x", "test_outofplace.py", {"OOP-1", "OOP-2", "OOP-3"}),
    ("results_are_detached", "test_outofplace.py", {"OOP-3", "OOP-4", "OOP-7"}),
]
