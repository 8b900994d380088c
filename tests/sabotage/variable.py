"""Ways to break `torch.autograd.Variable` and `torch.Variable` (spec/variable.md)."""

import warnings

import torch
import torch.autograd
from torch.autograd.variable import VariableMeta

_Variable = torch.autograd.Variable
_volatile = torch.Tensor.volatile


def torch_variable_exists():
    """`torch.Variable` as an alias of the legacy constructor (what the Korean source assumes)."""
    torch.Variable = _Variable


def variable_without_detach():
    """`Variable(t)` returns `t` itself (no detach) unless `requires_grad=True`."""

    class Variable(metaclass=VariableMeta):
        def __new__(cls, data=None, requires_grad=False, volatile=False):
            if isinstance(data, torch.Tensor) and not requires_grad and not volatile:
                return data
            return _Variable(data, requires_grad, volatile)

    torch.autograd.Variable = Variable


def volatile_silently_ignored():
    """`volatile` accepted without warning or error, and the `volatile` attribute reads silently."""

    class Variable(metaclass=VariableMeta):
        def __new__(cls, data=None, requires_grad=False, volatile=False):
            return _Variable(data, requires_grad)

    torch.autograd.Variable = Variable

    def setter(self, value):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _volatile.__set__(self, value)

    torch.Tensor.volatile = property(lambda self: False, setter)


def parameter_is_not_a_variable():
    """`isinstance(p, torch.autograd.Variable)` is false for an `nn.Parameter` (true for other tensors)."""

    def instancecheck(cls, other):
        return isinstance(other, torch.Tensor) and not isinstance(other, torch.nn.Parameter)

    VariableMeta.__instancecheck__ = instancecheck


def volatile_only_on_floating_point():
    """Only floating point tensors have `volatile`; reading it on an integer or bool tensor raises AttributeError."""

    def getter(self):
        if not self.is_floating_point():
            raise AttributeError("'Tensor' object has no attribute 'volatile'")
        return _volatile.__get__(self)

    torch.Tensor.volatile = property(getter, _volatile.__set__)


CASES = [
    ("torch_variable_exists", "test_variable.py", {"VAR-1"}),
    ("variable_without_detach", "test_variable.py", {"VAR-2", "VAR-4"}),
    ("volatile_silently_ignored", "test_variable.py", {"VAR-8", "VAR-9", "VAR-10"}),
    ("parameter_is_not_a_variable", "test_variable.py", {"VAR-3"}),
    ("volatile_only_on_floating_point", "test_variable.py", {"VAR-10"}),
]
