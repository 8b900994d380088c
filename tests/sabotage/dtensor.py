"""Ways to break updates of distributed parameters (spec/dtensor.md)."""

import functools
import importlib
import os
import signal
import time

import torch

_add_, _mul_, _zero_, _copy_ = torch.Tensor.add_, torch.Tensor.mul_, torch.Tensor.zero_, torch.Tensor.copy_
_detach = torch.Tensor.detach


def _dtensor():
    return _api().DTensor


def _api():
    """DTensor's module, as the tests find it (their ``_api``: the public one from 2.5, ``_tensor`` before)."""
    from conformance.tests.test_dtensor import _api

    return _api()


def no_grad_update_of_dtensor_ignored():
    """An in-place update of a DTensor under no_grad returns it unchanged (as `p.data = t` does, DTENSOR-2)."""

    def ignoring(original):
        @functools.wraps(original)
        def update(self, *args, **kwargs):
            if isinstance(self, _dtensor()) and not torch.is_grad_enabled():
                return self
            return original(self, *args, **kwargs)

        return update

    for name, original in (("add_", _add_), ("mul_", _mul_), ("zero_", _zero_), ("copy_", _copy_)):
        setattr(torch.Tensor, name, ignoring(original))


def plain_operand_distributed():
    """A plain tensor operand of a DTensor's update is made a DTensor like it first: the update goes through."""

    def distributing(original):
        @functools.wraps(original)
        def update(self, other, *args, **kwargs):
            dtensor = _dtensor()
            if isinstance(self, dtensor) and isinstance(other, torch.Tensor) and not isinstance(other, dtensor):
                other = dtensor.from_local(other, self.device_mesh, self.placements)
            return original(self, other, *args, **kwargs)

        return update

    torch.Tensor.add_, torch.Tensor.copy_ = distributing(_add_), distributing(_copy_)


def dtensor_detach_copies():
    """`detach()` of a DTensor returns a copy, with memory and version counter of its own."""

    @functools.wraps(_detach)
    def detach(self):
        out = _detach(self)
        return out.clone() if isinstance(self, _dtensor()) else out

    torch.Tensor.detach = detach


_data = torch._C.TensorBase.data  # the C property that torch.Tensor inherits


def data_assignment_writes_through():
    """`p.data = t` on a DTensor writes `t`'s values into its local shard (what pytorch/pytorch#157391 asks about)."""

    def set_data(self, value):
        dtensor = _dtensor()
        if isinstance(self, dtensor):
            with torch.no_grad():
                self._local_tensor.copy_(value.to_local() if isinstance(value, dtensor) else value)
        else:
            _data.__set__(self, value)

    torch.Tensor.data = property(_data.__get__, set_data)


_grad = torch._C.TensorBase.grad  # the C property, as _data


def plain_grad_distributed():
    """`p.grad = t` of a plain tensor on a DTensor parameter distributes `t` as `p` first."""

    def set_grad(self, value):
        dtensor = _dtensor()
        if isinstance(self, dtensor) and isinstance(value, torch.Tensor) and not isinstance(value, dtensor):
            value = _api().distribute_tensor(value, self.device_mesh, self.placements)
        _grad.__set__(self, value)

    torch.Tensor.grad = property(_grad.__get__, set_grad, _grad.__delete__)


def _fsdp():
    """FSDP2's module: public ``torch.distributed.fsdp`` from 2.6, ``torch.distributed._composable.fsdp`` before."""
    import torch.distributed.fsdp as fsdp

    return fsdp if hasattr(fsdp, "fully_shard") else importlib.import_module("torch.distributed._composable.fsdp")


def reshard_skipped():
    """`m.reshard()` of an FSDP2 module does nothing: its parameters stay as its forward left them."""
    _fsdp().FSDPModule.reshard = lambda self: None


def forward_keeps_parameters_unsharded():
    """`fully_shard(m, ...)` always means `reshard_after_forward=False`."""
    fsdp = _fsdp()
    original = fsdp.fully_shard

    @functools.wraps(original)
    def fully_shard(module, **kwargs):
        return original(module, **{**kwargs, "reshard_after_forward": False})

    fsdp.fully_shard = fully_shard


# What a hung or crashed rank does to the tests of a mesh of two (conformance/harness/ranks.py), run by
# tests/test_sensitivity.py's test of hung ranks: each is called in the test process (CONFORMANCE_RANK unset) and
# again in each rank, before the rank joins its process group.
HUNG_RANK_BOUND = 20  # seconds: CONFORMANCE_RANK_TIMEOUT of the run that hangs (tests/test_sensitivity.py reads it)


def second_rank_hangs():
    """Rank 1 never joins its process group: it sleeps; rank 0 waits for it."""
    if os.environ.get("CONFORMANCE_RANK") is None:
        os.environ["CONFORMANCE_RANK_TIMEOUT"] = str(HUNG_RANK_BOUND)
    elif os.environ["CONFORMANCE_RANK"] == "1":
        time.sleep(3600)


def second_rank_crashes():
    """Rank 1 dies of a segmentation fault before it joins its process group."""
    if os.environ.get("CONFORMANCE_RANK") == "1":
        os.kill(os.getpid(), signal.SIGSEGV)


CASES = [
    ("no_grad_update_of_dtensor_ignored", "test_dtensor.py", {"DTENSOR-1", "DTENSOR-15", "DTENSOR-32"}),
    ("plain_operand_distributed", "test_dtensor.py", {"DTENSOR-5", "DTENSOR-6"}),
    ("plain_grad_distributed", "test_dtensor.py", {"DTENSOR-18", "DTENSOR-19", "DTENSOR-20"}),
    ("reshard_skipped", "test_dtensor.py", {"DTENSOR-22"}),
    ("forward_keeps_parameters_unsharded", "test_dtensor.py", {"DTENSOR-23"}),
    ("dtensor_detach_copies", "test_dtensor.py", {"DTENSOR-11"}),
    ("data_assignment_writes_through", "test_dtensor.py", {"DTENSOR-2", "DTENSOR-14", "DTENSOR-16", "DTENSOR-17"}),
]
