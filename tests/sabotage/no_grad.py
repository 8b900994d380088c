"""Ways to break grad mode (spec/no_grad.md)."""

import functools

import torch


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


CASES = [
    ("no_grad_does_nothing", "test_no_grad.py", {"NOGRAD-1", "NOGRAD-2", "NOGRAD-4", "NOGRAD-7", "NOGRAD-10"}),
    ("no_grad_does_not_restore", "test_no_grad.py", {"NOGRAD-1", "NOGRAD-10"}),
    ("set_grad_enabled_decorator_keeps_mode", "test_no_grad.py", {"NOGRAD-13"}),
]
