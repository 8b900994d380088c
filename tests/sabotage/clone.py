"""Ways to break what spec/clone.md states (a clone has its own storage and stays in the graph)."""

import torch

_clone = torch.Tensor.clone


def clone_is_a_view():
    """`x.clone()` as a view: shares storage and version counter with `x`."""
    torch.Tensor.clone = lambda self, *args, **kwargs: self.view_as(self)


def clone_detaches():
    """`x.clone()` that is not recorded by autograd."""
    torch.Tensor.clone = lambda self, *args, **kwargs: _clone(self.detach(), *args, **kwargs)


def out_is_differentiable():
    """`torch.add(y, 1, out=y)` accepted on a tensor that requires grad (as an in-place add)."""
    add = torch.add

    def add_out(input, other, *args, out=None, **kwargs):
        if out is not None and out is input:
            return input.add_(other)
        return add(input, other, *args, out=out, **kwargs) if out is not None else add(input, other, *args, **kwargs)

    torch.add = add_out


def detach_keeps_the_graph():
    """`x.detach()` returns a view that stays in the graph: a copy made through it is not cut from `x`."""
    torch.Tensor.detach = lambda self: self.view_as(self)


def clone_of_channels_last_is_contiguous():
    """`x.clone()` of a channels-last tensor returns a contiguous one; every other kind keeps its strides."""

    def clone(self, *args, **kwargs):
        if self.dim() == 4 and self.is_contiguous(memory_format=torch.channels_last) and not self.is_contiguous():
            return _clone(self, memory_format=torch.contiguous_format)
        return _clone(self, *args, **kwargs)

    torch.Tensor.clone = clone


CASES = [
    ("clone_is_a_view", "test_clone.py", {"CLONE-1", "CLONE-5", "CLONE-6", "CLONE-13"}),
    ("clone_detaches", "test_clone.py", {"CLONE-3", "CLONE-4", "CLONE-7"}),
    ("out_is_differentiable", "test_clone.py", {"CLONE-9"}),
    ("detach_keeps_the_graph", "test_clone.py", {"CLONE-10", "CLONE-11"}),
    ("clone_of_channels_last_is_contiguous", "test_clone.py", {"CLONE-1"}),
]
