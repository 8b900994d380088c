"""Executes every {example} block of the spec pages, and the corrected snippet of every erratum, as a doctest, tagged
with the clauses it shows."""

import contextlib
import doctest

import pytest
import torch

from conformance.harness import registry

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _params(compiled: bool, meta: bool = False):
    """The examples of clauses about eager mode (or both), or of clauses about compile mode only; of clauses about
    the meta device only (``meta``), or the others."""
    clauses = registry.default().clauses
    return [
        pytest.param(example, id=example.name, marks=pytest.mark.clause(*example.clauses))
        for example in registry.default().examples
        if all(clauses[c].modes == ("compile",) for c in example.clauses) == compiled
        and all(clauses[c].devices == ("meta",) for c in example.clauses) == meta
    ]


def _run(example, run=None):
    """Run the doctest; inside ``run.compiling()`` when ``run`` is given (an example that calls torch.compile)."""
    parser = doctest.DocTestParser()
    test = parser.get_doctest(example.code, {"torch": torch}, example.name, example.path, example.line)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out = []
    # Globals kept: torch.compile puts entries in them that its own clean-up deletes later (KeyError otherwise).
    with run.compiling() if run else contextlib.nullcontext():
        runner.run(test, out=out.append, clear_globs=False)
    assert runner.failures == 0, f"{example.path}: example output differs:\n" + "".join(out)


@pytest.mark.only_devices("cpu")  # examples are written for the default device
@pytest.mark.parametrize("example", _params(compiled=False))
def test_spec_example(example, device):
    _run(example)


# An example of what compiled code does calls torch.compile itself; it runs in compile mode only (run_mode), so
# that it is not-applicable where torch.compile is (torch 2.0 on Python 3.11) and never counts for eager mode.
@pytest.mark.only_devices("cpu")
@pytest.mark.parametrize("example", _params(compiled=True))
def test_compiled_spec_example(example, device, run):
    _run(example, run)


# An example of a clause about the meta device only makes its own meta tensors; it runs in the meta item.
@pytest.mark.only_devices("meta")
@pytest.mark.parametrize("example", _params(compiled=True, meta=True))
def test_compiled_meta_spec_example(example, device, run):
    _run(example, run)
