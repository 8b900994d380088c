"""Ways to break indexed and sliced assignment under autograd (spec/indexing.md)."""

import functools

import torch

_setitem = torch.Tensor.__setitem__


def _patch(setitem):
    torch.Tensor.__setitem__ = functools.wraps(_setitem)(setitem)


def setitem_on_leaf_allowed():
    """`x[...] = v` on a leaf that requires grad runs as if under no_grad, instead of raising."""

    def setitem(self, index, value):
        if self.is_leaf and self.requires_grad and torch.is_grad_enabled():
            with torch.no_grad():
                return _setitem(self, index, value)
        return _setitem(self, index, value)

    _patch(setitem)


def setitem_detaches_value():
    """The assigned value is detached: no gradient reaches it, a plain tensor never starts requiring grad."""

    def setitem(self, index, value):
        if isinstance(value, torch.Tensor):
            value = value.detach()
        return _setitem(self, index, value)

    _patch(setitem)


def setitem_bypasses_autograd():
    """Assignment writes through `.data`: no graph node, no version bump."""

    def setitem(self, index, value):
        if isinstance(value, torch.Tensor):
            value = value.detach()
        return _setitem(self.data, index, value)

    _patch(setitem)


_where = torch.where


def where_detached():
    """`torch.where(c, a, b)` returns a result cut from the graph (as if computed under no_grad)."""
    torch.where = lambda condition, *args, **kwargs: _where(condition, *args, **kwargs).detach()


def where_swapped():
    """`torch.where(c, a, b)` takes `b` where `c` is True and `a` elsewhere."""
    torch.where = lambda condition, a, b: _where(~condition, a, b)


CASES = [
    ("where_detached", "test_indexing.py", {"INDEX-60", "INDEX-61"}),
    ("where_swapped", "test_indexing.py", {"INDEX-61"}),
    ("setitem_on_leaf_allowed", "test_indexing.py", {"INDEX-1", "INDEX-6", "INDEX-7"}),
    ("setitem_detaches_value", "test_indexing.py", {"INDEX-17", "INDEX-18", "INDEX-19"}),
    (
        "setitem_bypasses_autograd",
        "test_indexing.py",
        {"INDEX-8", "INDEX-10", "INDEX-11", "INDEX-16", "INDEX-20"},
    ),
]
