"""Bad input: placeholder."""

from . import PYTEST, RELEASE_CHECK, Case  # noqa: F401

CASES: list[Case] = []
