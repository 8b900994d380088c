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
