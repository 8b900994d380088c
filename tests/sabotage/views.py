"""Ways to break views and in-place operations under autograd (spec/views.md)."""

import functools

import torch


def multi_output_returns_copies():
    """`unbind`/`split`/`chunk` return clones instead of views: no shared storage, in-place allowed."""
    for owner in (torch, torch.Tensor):
        for name in ("unbind", "split", "chunk"):
            original = getattr(owner, name)

            def copies(*args, _original=original, **kwargs):
                return tuple(t.clone() for t in _original(*args, **kwargs))

            setattr(owner, name, functools.wraps(original)(copies))


def views_forget_their_base():
    """`_base` is always None and `_is_view()` always False."""
    torch.Tensor._base = property(lambda self: None)
    torch.Tensor._is_view = lambda self: False


def inplace_on_view_under_no_grad():
    """In-place methods on a view run as if under no_grad: no refusal, no rebase of the base's history."""
    for name in ("add_", "mul_", "copy_", "zero_", "fill_", "__iadd__", "__imul__"):
        original = getattr(torch.Tensor, name)

        def method(self, *args, _original=original, **kwargs):
            if self._is_view():
                with torch.no_grad():
                    return _original(self, *args, **kwargs)
            return _original(self, *args, **kwargs)

        setattr(torch.Tensor, name, functools.wraps(original)(method))


def no_inplace_on_views_under_no_grad():
    """`add_`/`mul_` on a view refuse under `torch.no_grad()` (as if no_grad did not lift the view checks)."""
    for name in ("add_", "mul_"):
        original = getattr(torch.Tensor, name)

        def patched(self, *args, _original=original, **kwargs):
            if self._is_view() and not torch.is_grad_enabled():
                raise RuntimeError("a view is being modified inplace under no_grad")
            return _original(self, *args, **kwargs)

        setattr(torch.Tensor, name, functools.wraps(original)(patched))


def views_usable_after_no_grad_update():
    """Reading `grad_fn` or `is_leaf` of a view whose base was modified under no_grad gives `None` / True instead of
    raising."""
    for name, fallback in (("grad_fn", None), ("is_leaf", True)):
        original = next(k.__dict__[name] for k in torch.Tensor.__mro__ if name in k.__dict__)

        def get(self, _original=original, _fallback=fallback):
            try:
                return _original.__get__(self, type(self))
            except RuntimeError:
                return _fallback

        setattr(torch.Tensor, name, property(get))


CASES = [
    ("multi_output_returns_copies", "test_views.py", {"VIEW-14", "VIEW-15", "VIEW-16", "VIEW-17"}),
    ("views_forget_their_base", "test_views.py", {"VIEW-1", "VIEW-8", "VIEW-10", "VIEW-14"}),
    ("inplace_on_view_under_no_grad", "test_views.py", {"VIEW-3", "VIEW-8", "VIEW-9", "VIEW-11", "VIEW-15"}),
    ("no_inplace_on_views_under_no_grad", "test_views.py", {"VIEW-6", "VIEW-13", "VIEW-17"}),
    ("views_usable_after_no_grad_update", "test_views.py", {"VIEW-19", "VIEW-20"}),
]
