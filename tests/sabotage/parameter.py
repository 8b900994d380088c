"""Ways to break `nn.Parameter` and module attribute assignment (spec/parameter.md)."""

import torch
from torch import nn

_new = nn.Parameter.__new__
_setattr = nn.Module.__setattr__


def parameter_copies_data():
    """`nn.Parameter(t)` as a copy of `t`: no shared storage, no shared version counter."""

    def new(cls, data=None, requires_grad=True):
        return _new(cls, None if data is None else data.clone(), requires_grad)

    nn.Parameter.__new__ = new


def assigning_parameter_copies_into_old():
    """`module.weight = p` as an in-place copy into the existing parameter (identity kept)."""

    def setattr_(self, name, value):
        params = self.__dict__.get("_parameters")
        old = params.get(name) if params is not None else None
        if isinstance(value, nn.Parameter) and old is not None and old.shape == value.shape:
            with torch.no_grad():
                old.copy_(value)
            return
        _setattr(self, name, value)

    nn.Module.__setattr__ = setattr_


def parameter_slot_accepts_tensors():
    """A plain tensor assigned to a parameter name is wrapped in `nn.Parameter` instead of refused."""

    def setattr_(self, name, value):
        params = self.__dict__.get("_parameters")
        if params is not None and name in params and isinstance(value, torch.Tensor):
            value = nn.Parameter(value.detach())
        _setattr(self, name, value)

    nn.Module.__setattr__ = setattr_


CASES = [
    ("parameter_copies_data", "test_parameter.py", {"PARAM-10", "PARAM-11", "PARAM-12"}),
    ("assigning_parameter_copies_into_old", "test_parameter.py", {"PARAM-1", "PARAM-2", "PARAM-3"}),
    ("parameter_slot_accepts_tensors", "test_parameter.py", {"PARAM-4", "PARAM-5"}),
]
