"""Sabotage: break one torch behaviour in a pytest run, to prove the conformance tests notice.

Loaded as a plugin (``-p tests.sabotage``) with ``SABOTAGE=<module>:<function>``;
``tests/sabotage/<module>.py`` (one per spec page, same stem) holds the functions
that monkeypatch torch, and a ``CASES`` table: ``(function, test file, clauses
that must fail)``. ``tests/test_sensitivity.py`` runs every case.
"""

import importlib
import os


def pytest_configure(config):
    spec = os.environ.get("SABOTAGE")
    if spec:
        module, function = spec.split(":")
        getattr(importlib.import_module(f"tests.sabotage.{module}"), function)()
