"""Ways to break `Tensor.set_` (spec/set.md)."""

import functools

import torch

_set = torch.Tensor.set_


def set_through_data():
    """`x.set_(s)` as `x.data = s`: storage swapped behind autograd's back (no check, no version bump, no node)."""

    def set_(self, source=None, *args, **kwargs):
        if isinstance(source, torch.Tensor) and not args and not kwargs:
            self.data = source
            return self
        tmp = self.detach()
        _set(tmp, *(() if source is None else (source,)), *args, **kwargs)
        self.data = tmp
        return self

    torch.Tensor.set_ = functools.wraps(_set)(set_)


def set_copies_values():
    """`x.set_(s)` as resize + copy: same values and shape, but no shared storage."""

    def set_(self, source=None, *args, **kwargs):
        if isinstance(source, torch.Tensor) and not args and not kwargs:
            with torch.no_grad():
                self.resize_(source.shape).copy_(source)
            return self
        return _set(self, *(() if source is None else (source,)), *args, **kwargs)

    torch.Tensor.set_ = functools.wraps(_set)(set_)


def set_keeps_shape():
    """`x.set_(s)` takes the storage of `s` but keeps the shape and strides of `x`."""

    def set_(self, source=None, *args, **kwargs):
        if isinstance(source, torch.Tensor) and not args and not kwargs:
            return _set(self, source.untyped_storage(), self.storage_offset(), self.shape, self.stride())
        return _set(self, *(() if source is None else (source,)), *args, **kwargs)

    torch.Tensor.set_ = functools.wraps(_set)(set_)


CASES = [
    ("set_through_data", "test_set.py", {"SET-3", "SET-6", "SET-8", "SET-10"}),
    ("set_copies_values", "test_set.py", {"SET-1", "SET-2", "SET-10"}),
    ("set_keeps_shape", "test_set.py", {"SET-1", "SET-12"}),
]
