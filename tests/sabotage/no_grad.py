"""Ways to break grad mode (spec/no_grad.md)."""

import functools

import torch

from tests.sabotage.inference_mode import grad_fn_never_regenerated  # noqa: F401 - a case of this page too


def no_grad_does_nothing():
    """`torch.no_grad` as a context manager and decorator that leaves grad mode alone."""

    class no_grad:
        def __enter__(self):
            return None

        def __exit__(self, *exc):
            return False

        def __call__(self, func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                return func(*args, **kwargs)

            return wrapper

    torch.no_grad = no_grad


def no_grad_does_not_restore():
    """Leaving `torch.no_grad()` enables grad mode instead of restoring the previous mode."""
    cls = torch.autograd.grad_mode.no_grad

    def __exit__(self, *exc):
        torch.set_grad_enabled(True)
        return False

    cls.__exit__ = __exit__


def set_grad_enabled_decorator_keeps_mode():
    """Applying `@torch.set_grad_enabled(False)` leaves grad mode disabled (the torch < 2.2 behaviour)."""
    cls = torch.autograd.grad_mode.set_grad_enabled
    call = torch.utils._contextlib._DecoratorContextManager.__call__
    cls.__call__ = lambda self, func: call(self, func)


def no_grad_views_are_detached():
    """With grad mode disabled, view methods return a detached alias: not a view, not requiring grad."""
    for name in ("__getitem__", "view", "t", "transpose", "unsqueeze", "reshape", "split", "unbind"):
        original = getattr(torch.Tensor, name)

        def patched(self, *args, _original=original, **kwargs):
            out = _original(self, *args, **kwargs)
            if torch.is_grad_enabled():
                return out
            return tuple(o.detach() for o in out) if isinstance(out, tuple) else out.detach()

        setattr(torch.Tensor, name, functools.wraps(original)(patched))


def eval_runs_under_no_grad():
    """A module in eval mode runs its forward under `torch.no_grad()` (the common belief that eval() disables grad)."""
    call = torch.nn.Module.__call__

    def __call__(self, *args, **kwargs):
        if not self.training:
            with torch.no_grad():
                return call(self, *args, **kwargs)
        return call(self, *args, **kwargs)

    torch.nn.Module.__call__ = __call__


_new_zeros = torch.Tensor.new_zeros
_masked_fill_ = torch.Tensor.masked_fill_


def new_zeros_drops_requires_grad_under_no_grad():
    """`x.new_zeros(..., requires_grad=True)` with grad mode disabled returns a tensor that does not require grad."""

    def new_zeros(self, *args, **kwargs):
        if not torch.is_grad_enabled():
            kwargs.pop("requires_grad", None)
        return _new_zeros(self, *args, **kwargs)

    torch.Tensor.new_zeros = new_zeros


def masked_fill_under_no_grad_through_data():
    """`t.masked_fill_(m, v)` with grad mode disabled writes through `t.data`: `_version` stays, the check is lost."""

    def masked_fill_(self, mask, value):
        if not torch.is_grad_enabled():
            self.data.masked_fill_(mask, value)
            return self
        return _masked_fill_(self, mask, value)

    torch.Tensor.masked_fill_ = masked_fill_


CASES = [
    ("eval_runs_under_no_grad", "test_no_grad.py", {"NOGRAD-60"}),
    ("no_grad_views_are_detached", "test_no_grad.py", {"NOGRAD-40"}),
    ("new_zeros_drops_requires_grad_under_no_grad", "test_no_grad.py", {"NOGRAD-3"}),
    ("masked_fill_under_no_grad_through_data", "test_no_grad.py", {"NOGRAD-4", "NOGRAD-7"}),
    ("no_grad_does_nothing", "test_no_grad.py", {"NOGRAD-1", "NOGRAD-2", "NOGRAD-4", "NOGRAD-7", "NOGRAD-10"}),
    ("no_grad_does_not_restore", "test_no_grad.py", {"NOGRAD-1", "NOGRAD-10"}),
    ("set_grad_enabled_decorator_keeps_mode", "test_no_grad.py", {"NOGRAD-13"}),
    ("grad_fn_never_regenerated", "test_no_grad.py", {"NOGRAD-18", "NOGRAD-19"}),
]
