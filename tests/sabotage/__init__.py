"""Sabotage: break one torch behaviour in a pytest run, to prove the conformance tests notice.

Loaded as a plugin (``-p tests.sabotage``) with ``SABOTAGE=<module>:<function>``;
``tests/sabotage/<module>.py`` (one per spec page, same stem) holds the functions
that monkeypatch torch, and a ``CASES`` table: ``(function, test file, clauses
that must fail)``. ``tests/test_sensitivity.py`` runs every case.
"""

import importlib
import os

# The MUST clauses that no sabotage case breaks yet: a list that may only shrink
# (tests/test_sensitivity.py::test_every_must_clause_has_a_sabotage_case). A new MUST clause needs a case in
# tests/sabotage/<page>.py, or, for a compiled divergence, a place in test_sensitivity's DIVERGENT. The exception: a
# compiled clause that says its eager twin holds compiled on releases before the tests' torch only (SET-98), where no
# case that these tests run can reach it.
WITHOUT_CASE = frozenset(
    """
    CLONE-2 CLONE-8 CLONE-12
    COMPILE-2 COMPILE-3 COMPILE-4 COMPILE-6 COMPILE-8
    COPY-4 COPY-9 COPY-10 COPY-12 COPY-14 COPY-16
    DATA-1 DATA-2 DATA-5 DATA-7 DATA-10 DATA-11 DATA-12 DATA-14 DATA-92 DATA-99 DATA-100
    DETACH-2 DETACH-7 DETACH-8 DETACH-11
    FUNC-1 FUNC-6 FUNC-8 FUNC-13 FUNC-14
    GRAD-1 GRAD-3 GRAD-6 GRAD-9 GRAD-10 GRAD-11 GRAD-12 GRAD-13 GRAD-14 GRAD-15 GRAD-17 GRAD-18 GRAD-22 GRAD-23
    GRAD-24 GRAD-25 GRAD-67 GRAD-90
    INDEX-2 INDEX-3 INDEX-9
    INFER-7 INFER-8 INFER-10 INFER-15 INFER-16 INFER-17 INFER-18 INFER-24
    INPLACE-4 INPLACE-6 INPLACE-9 INPLACE-16 INPLACE-17
    INPLACE-83 INPLACE-94
    LOADSD-5 LOADSD-7 LOADSD-9 LOADSD-11 LOADSD-66
    NEW-2 NEW-3 NEW-4 NEW-6 NEW-8 NEW-15
    NOGRAD-5 NOGRAD-6 NOGRAD-8 NOGRAD-9 NOGRAD-11 NOGRAD-12 NOGRAD-15 NOGRAD-16 NOGRAD-17
    OOP-5 OOP-6
    PARAM-6 PARAM-7 PARAM-8 PARAM-9 PARAM-13
    PUPD-1 PUPD-2 PUPD-3 PUPD-4 PUPD-7 PUPD-8 PUPD-10 PUPD-12 PUPD-91
    REBIND-1 REBIND-2 REBIND-11
    REQGRAD-1 REQGRAD-2 REQGRAD-4 REQGRAD-6 REQGRAD-7 REQGRAD-10 REQGRAD-12 REQGRAD-13
    SET-4 SET-5 SET-7 SET-9 SET-11 SET-98
    SWAP-2 SWAP-6 SWAP-7 SWAP-91
    VAR-5 VAR-6 VAR-7
    VERSION-3 VERSION-7 VERSION-10 VERSION-13 VERSION-14 VERSION-15 VERSION-66 VERSION-90 VERSION-92
    VIEW-2 VIEW-4 VIEW-5 VIEW-7 VIEW-12 VIEW-18 VIEW-90 VIEW-92
    """.split()
)


def pytest_configure(config):
    # A sabotage run asks whether the named clauses' tests fail, and runs only those tests: the harness's collection
    # of every other test module (so that a results file says which tests did not run) would cost most of its time.
    from conformance.harness.manifest import Manifest

    Manifest.add_uncollected = lambda self, session, why_not: None
    spec = os.environ.get("SABOTAGE")
    if spec:
        module, function = spec.split(":")
        getattr(importlib.import_module(f"tests.sabotage.{module}"), function)()
        # the processes that tests start for the ranks of a process group (conformance/harness/ranks.py) too
        os.environ["CONFORMANCE_RANK_SETUP"] = f"tests.sabotage.{module}:{function}"
