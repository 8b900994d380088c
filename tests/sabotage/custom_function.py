"""Ways to break what spec/custom_function.md states (`ctx.mark_dirty` makes an input updated in place the output)."""

import torch
from torch.autograd.function import FunctionCtx

_mark_dirty = FunctionCtx.mark_dirty
_apply = torch.autograd.Function.apply.__func__
_mul = torch.Tensor.mul_


def mark_dirty_ignored():
    """`ctx.mark_dirty` that does nothing: every Function behaves as one that did not mark its input."""
    FunctionCtx.mark_dirty = lambda self, *args: None


def mark_dirty_checks_nothing():
    """`ctx.mark_dirty` of the input's detached alias: no leaf refused, nothing to check that it is returned."""

    def mark_dirty(self, *args):
        with torch.no_grad():
            for tensor in args:
                torch.autograd.graph.increment_version(tensor)

    FunctionCtx.mark_dirty = mark_dirty


def apply_without_grad():
    """Functions applied with grad mode off: their output has no node, their input is never replaced."""

    @classmethod
    def apply(cls, *args, **kwargs):
        with torch.no_grad():
            return _apply(cls, *args, **kwargs)

    torch.autograd.Function.apply = apply


def function_output_copied():
    """`apply` returning a copy of what forward returned: never the input itself, never a view of it."""

    @classmethod
    def apply(cls, *args, **kwargs):
        out = _apply(cls, *args, **kwargs)
        return out.clone() if isinstance(out, torch.Tensor) else out

    torch.autograd.Function.apply = apply


def leaves_passed_as_copies():
    """`apply` handing `forward` a copy of each leaf input, so that a leaf is never changed."""

    @classmethod
    def apply(cls, *args, **kwargs):
        copies = [a.detach().clone() if isinstance(a, torch.Tensor) and a.is_leaf else a for a in args]
        return _apply(cls, *copies, **kwargs)

    torch.autograd.Function.apply = apply


def mul_unversioned():
    """`mul_` writing through `.data`: the version counter does not move."""

    def mul_(self, other):
        _mul(self.data, other)
        return self

    torch.Tensor.mul_ = mul_


CASES = [
    ("mark_dirty_ignored", "test_custom_function.py", {"CUSTOMFN-1", "CUSTOMFN-3", "CUSTOMFN-7"}),
    ("mark_dirty_checks_nothing", "test_custom_function.py", {"CUSTOMFN-1", "CUSTOMFN-3"}),
    ("apply_without_grad", "test_custom_function.py", {"CUSTOMFN-1", "CUSTOMFN-2", "CUSTOMFN-4"}),
    ("function_output_copied", "test_custom_function.py", {"CUSTOMFN-1", "CUSTOMFN-4"}),
    ("leaves_passed_as_copies", "test_custom_function.py", {"CUSTOMFN-5"}),
    ("mul_unversioned", "test_custom_function.py", {"CUSTOMFN-6"}),
]
