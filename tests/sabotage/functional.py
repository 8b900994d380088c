"""Ways to break functional updates (spec/functional.md)."""

import functools

import torch
from torch.nn.utils import parametrize

_functional_call = torch.func.functional_call
_register = parametrize.register_parametrization


def functional_call_writes_parameters():
    """`functional_call` copies the replacements into the module's parameters and calls the module."""

    def functional_call(module, params, args, kwargs=None, **rest):
        named = dict(module.named_parameters())
        with torch.no_grad():
            for name, value in params.items():
                if name in named:
                    named[name].copy_(value)
        args = args if isinstance(args, tuple) else (args,)
        return module(*args, **(kwargs or {}))

    torch.func.functional_call = functools.wraps(_functional_call)(functional_call)


def parametrization_applied_once():
    """`register_parametrization` applies the function once to the weight's values and registers nothing."""

    def register(module, tensor_name, parametrization, *args, **kwargs):
        tensor = getattr(module, tensor_name)
        with torch.no_grad():
            tensor.copy_(parametrization(tensor))
        return module

    parametrize.register_parametrization = functools.wraps(_register)(register)


def parametrization_result_copied():
    """`module.weight` is a copy of what the parametrization returns, even when that is `original` itself."""

    class Copied(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, X):
            return self.inner(X).clone()

    def register(module, tensor_name, parametrization, *args, **kwargs):
        return _register(module, tensor_name, Copied(parametrization), *args, **kwargs)

    parametrize.register_parametrization = functools.wraps(_register)(register)


_vmap, _grad = torch.func.vmap, torch.func.grad


def vmap_as_a_loop():
    """`vmap(f)(x)` calls `f` on a copy of each row of `x` and stacks the results: no batched tensors at all."""

    def vmap(f, *args, **kwargs):
        return lambda x: torch.stack([f(row.clone()) for row in x.unbind(0)])

    torch.func.vmap = functools.wraps(_vmap)(vmap)


def grad_by_autograd():
    """`grad(f)(x)` differentiates `f` at a copy of `x` with torch.autograd.grad: no functorch wrappers."""

    def grad(f, *args, **kwargs):
        def gradient(x):
            t = x.detach().clone().requires_grad_(True)
            return torch.autograd.grad(f(t), t)[0]

        return gradient

    torch.func.grad = functools.wraps(_grad)(grad)


_stack_module_state = torch.func.stack_module_state


def stacked_state_tied_to_models():
    """`stack_module_state` makes each model's parameters views of the stacked ones (shared memory)."""

    def stack_module_state(models):
        params, buffers = _stack_module_state(models)
        for i, model in enumerate(models):
            for name, p in model.named_parameters():
                p.data = params[name].data[i]
        return params, buffers

    torch.func.stack_module_state = functools.wraps(_stack_module_state)(stack_module_state)


def _forced(**options):
    """`functional_call` called with these keyword arguments, whatever its caller passes."""

    @functools.wraps(_functional_call)
    def functional_call(*args, **kwargs):
        return _functional_call(*args, **{**kwargs, **options})

    torch.func.functional_call = functional_call


def tie_weights_ignored():
    """`functional_call` never keeps the module's tied weights tied (as with `tie_weights=False`)."""
    _forced(tie_weights=False)


def strict_ignored():
    """`functional_call` never checks the keys (as with `strict=False`)."""
    _forced(strict=False)


CASES = [
    ("functional_call_writes_parameters", "test_functional.py", {"FUNC-2", "FUNC-3", "FUNC-4", "FUNC-5", "FUNC-30"}),
    ("parametrization_applied_once", "test_functional.py", {"FUNC-7", "FUNC-9", "FUNC-10", "FUNC-11", "FUNC-12"}),
    ("parametrization_result_copied", "test_functional.py", {"FUNC-15"}),
    ("vmap_as_a_loop", "test_functional.py", {"FUNC-16", "FUNC-17", "FUNC-19", "FUNC-20"}),
    ("grad_by_autograd", "test_functional.py", {"FUNC-21", "FUNC-24", "FUNC-26"}),
    ("stacked_state_tied_to_models", "test_functional.py", {"FUNC-31"}),
    ("tie_weights_ignored", "test_functional.py", {"FUNC-32"}),
    ("strict_ignored", "test_functional.py", {"FUNC-33"}),
]
