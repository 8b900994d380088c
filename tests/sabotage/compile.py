"""Ways to break what spec/compile.md states, and the harness's compile mode itself."""

import functools

import torch

from conformance.harness import modes

_requires_grad_ = torch.Tensor.requires_grad_


def requires_grad_ignored():
    """`requires_grad_()` returns the tensor unchanged: freezing, unfreezing and flipping do nothing."""

    @functools.wraps(_requires_grad_)
    def requires_grad_(self, requires_grad=True):
        return self

    torch.Tensor.requires_grad_ = requires_grad_
    torch.nn.Module.requires_grad_ = lambda self, requires_grad=True: self


_register_parameter = torch.nn.Module.register_parameter


def parameter_replacement_dropped():
    """A parameter assigned to a name that holds one already is dropped: the old parameter stays registered."""

    @functools.wraps(_register_parameter)
    def register_parameter(self, name, param):
        if self._parameters.get(name) is None:
            _register_parameter(self, name, param)

    torch.nn.Module.register_parameter = register_parameter


def run_ignores_mode():
    """The ``run`` fixture runs every step eagerly, whatever the mode: compile mode tests nothing compiled."""
    modes.Runner.function = lambda self, step: step


def run_ignores_backend():
    """The ``run`` fixture compiles with aot_eager in the inductor mode too: the inductor mode tests aot_eager."""
    init = modes.Runner.__init__

    def patched(self, mode):
        init(self, mode)
        if mode == "inductor":
            self.backend = modes.BACKEND

    modes.Runner.__init__ = patched


# run_ignores_backend: tests/test_sensitivity.py::test_run_ignoring_the_backend_fails_the_inductor_divergences.
# run_ignores_mode is checked by tests/test_sensitivity.py::test_run_ignoring_the_mode_fails_the_divergences.
CASES = [
    ("requires_grad_ignored", "test_compile.py", {"COMPILE-1", "COMPILE-5"}),
    ("parameter_replacement_dropped", "test_compile.py", {"COMPILE-11"}),
]
