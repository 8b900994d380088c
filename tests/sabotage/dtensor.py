"""Ways to break updates of distributed parameters (spec/dtensor.md)."""

import functools

import torch

_add_, _mul_, _zero_, _copy_ = torch.Tensor.add_, torch.Tensor.mul_, torch.Tensor.zero_, torch.Tensor.copy_
_detach = torch.Tensor.detach


def _dtensor():
    try:
        from torch.distributed.tensor import DTensor
    except ImportError:
        from torch.distributed._tensor import DTensor
    return DTensor


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


CASES = [
    ("no_grad_update_of_dtensor_ignored", "test_dtensor.py", {"DTENSOR-1"}),
    ("plain_operand_distributed", "test_dtensor.py", {"DTENSOR-5", "DTENSOR-6"}),
    ("dtensor_detach_copies", "test_dtensor.py", {"DTENSOR-11"}),
    ("data_assignment_writes_through", "test_dtensor.py", {"DTENSOR-2", "DTENSOR-14"}),
]
