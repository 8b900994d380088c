"""Assertion helpers whose failure messages explain themselves (expected vs observed)."""

from __future__ import annotations

import re
from contextlib import contextmanager

import pytest


def same_storage(a, b) -> bool:
    """Whether two tensors use the same storage object (works on meta, where data_ptr is 0)."""
    return a.untyped_storage()._cdata == b.untyped_storage()._cdata


def assert_values(tensor, expected, what: str = "tensor") -> None:
    """Compare values on devices that have them; callers on meta must not call this (clause needs values)."""
    observed = tensor.detach().cpu().tolist()
    assert observed == expected, f"{what}: expected {expected}, observed {observed}"


@contextmanager
def raises(exc_type, fragment: str):
    """pytest.raises with a literal message fragment; the failure names both."""
    with pytest.raises(exc_type, match=re.escape(fragment)) as info:
        yield info


def leaf(device, values=(1.0, 2.0)):
    """A leaf that requires grad, holding the given values (float32)."""
    import torch

    return torch.tensor(list(values), device=device, requires_grad=True)


# Message fragments that several pages assert; each is identical on every release of the window.
SAVED_MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"
NO_GRAD_FN = "element 0 of tensors does not require grad and does not have a grad_fn"


def by_mode(eager_clause: str, compiled_clause: str, eager, compiled, as_eager: str | None = None) -> list:
    """Parameters of a test whose update step diverges under torch.compile: ``eager`` is what it checks for
    ``eager_clause`` (``:modes: eager``), ``compiled`` for its sibling ``compiled_clause`` (``:modes: compile``);
    one body serves both, and each parameter runs only in its clause's mode. ``as_eager`` names a
    compiled clause of other releases (its range says which) under which the compiled step does what eager code
    does: checked with ``eager``."""
    clause = pytest.mark.clause
    params = [
        pytest.param(eager, marks=clause(eager_clause), id=eager_clause),
        pytest.param(compiled, marks=clause(compiled_clause), id=compiled_clause),
    ]
    if as_eager:
        params.append(pytest.param(eager, marks=clause(as_eager), id=as_eager))
    return params


def compiled_since(release: str, params: list, ids, before: str, **mark_options) -> list:
    """``params`` (plain values or ``pytest.param``) with those whose id is in ``ids`` marked
    ``compiled_since(release, before=...)``: their compiled behaviour differs before that release and the
    compile-only clauses ``before`` names state how (mark options: harness/modes.CompiledSince)."""
    mark = pytest.mark.compiled_since(release, before=before, **mark_options)
    out = []
    for p in params:
        if isinstance(p, str):
            p = pytest.param(p, id=p)
        out.append(pytest.param(*p.values, id=p.id, marks=[*p.marks, *([mark] if p.id in ids else [])]))
    return out


def layout(t) -> tuple:
    """What a tensor's memory looks like from outside: shape, strides, offset, dtype, device."""
    return t.shape, t.stride(), t.storage_offset(), t.dtype, t.device


def view_and_base_targets(view_ops) -> list:
    """(view op, "y" or "b") for each member of ``view_ops`` (VIEW_OPS) with one output: a test updates the view `y`
    or its base `b`. An in-place update of `b.expand(3, 2, 2)` itself is refused in every mode (its elements
    overlap): only its base is updated (NOGRAD-18, INFER-21)."""
    from .populations import MULTI_OUTPUT_VIEWS

    return [
        pytest.param(fn, target, id=f"{mid}-{target}")
        for mid, fn in view_ops.available()
        if mid not in MULTI_OUTPUT_VIEWS
        for target in ("y", "b")
        if (mid, target) != ("x.expand(3, 2, 2)", "y")
    ]
