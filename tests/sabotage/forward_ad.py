"""Ways to break what spec/forward_ad.md states (in-place updates of dual tensors carry their tangents)."""

import functools

import torch
import torch.autograd.forward_ad as fwAD

_make_dual = fwAD.make_dual
_unpack_dual = fwAD.unpack_dual
_copy = torch.Tensor.copy_
_detach = torch.Tensor.detach
_no_grad_enter = torch.no_grad.__enter__
_level_exit = fwAD.dual_level.__exit__
ARITHMETIC = ("add_", "sub_", "mul_", "div_", "neg_", "pow_", "clamp_", "__iadd__", "__imul__")


def inplace_skips_tangent():
    """In-place arithmetic on the primal alone, as if forward AD did not see it."""
    for name in ARITHMETIC:
        original = getattr(torch.Tensor, name)

        def update(self, *args, _original=original, **kwargs):
            _original(fwAD.unpack_dual(self).primal, *args, **kwargs)
            return self

        setattr(torch.Tensor, name, functools.wraps(original)(update))


def copy_drops_tangent():
    """`copy_` copies the primal of its source only."""

    def copy_(self, src, non_blocking=False):
        return _copy(self, fwAD.unpack_dual(src).primal, non_blocking)

    torch.Tensor.copy_ = functools.wraps(_copy)(copy_)


def no_grad_stops_forward_ad():
    """`torch.no_grad()` turning forward AD off too (it does not: its docs say so)."""

    def enter(self):
        _no_grad_enter(self)
        torch._C._set_fwd_grad_enabled(False)

    torch.no_grad.__enter__ = enter
    _exit = torch.no_grad.__exit__

    def exit_(self, *args):
        torch._C._set_fwd_grad_enabled(True)
        return _exit(self, *args)

    torch.no_grad.__exit__ = exit_


def inference_mode_keeps_forward_ad():
    """`torch.inference_mode()` that leaves forward AD on, as `torch.no_grad()` does."""
    torch.inference_mode = torch.no_grad


def detach_keeps_the_graph():
    """`detach()` returning the tensor itself, tangent and all."""
    torch.Tensor.detach = lambda self: self


def make_dual_copies():
    """`make_dual` of a copy of the primal: no memory shared, no view of a leaf."""
    fwAD.make_dual = lambda tensor, tangent, *, level=None: _make_dual(tensor.detach().clone(), tangent, level=level)


def level_never_ends():
    """Leaving `dual_level()` without ending the level: tangents stay."""
    fwAD.dual_level.__exit__ = lambda self, *args: None


def tangent_copied_on_read():
    """`unpack_dual` handing out a copy of the tangent, so that no update is seen through an earlier one."""

    def unpack_dual(tensor, *, level=None):
        primal, tangent = _unpack_dual(tensor, level=level)
        return fwAD.UnpackedDualTensor(primal, None if tangent is None else tangent.clone())

    fwAD.unpack_dual = unpack_dual


def every_tensor_has_a_tangent():
    """A zero tangent read off every tensor that has none (an int64 one, a result in inference mode ...)."""

    def unpack_dual(tensor, *, level=None):
        primal, tangent = _unpack_dual(tensor, level=level)
        return fwAD.UnpackedDualTensor(primal, torch.zeros_like(primal) if tangent is None else tangent)

    fwAD.unpack_dual = unpack_dual


CASES = [
    ("inplace_skips_tangent", "test_forward_ad.py", {"FWAD-1", "FWAD-3", "FWAD-5"}),
    ("copy_drops_tangent", "test_forward_ad.py", {"FWAD-3"}),
    ("no_grad_stops_forward_ad", "test_forward_ad.py", {"FWAD-5"}),
    ("inference_mode_keeps_forward_ad", "test_forward_ad.py", {"FWAD-6"}),
    ("detach_keeps_the_graph", "test_forward_ad.py", {"FWAD-7"}),
    ("make_dual_copies", "test_forward_ad.py", {"FWAD-8"}),
    ("level_never_ends", "test_forward_ad.py", {"FWAD-9"}),
    ("tangent_copied_on_read", "test_forward_ad.py", {"FWAD-2"}),
    ("every_tensor_has_a_tangent", "test_forward_ad.py", {"FWAD-3", "FWAD-4", "FWAD-6", "FWAD-7", "FWAD-9"}),
]
