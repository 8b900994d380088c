"""Executes every {example} block of the spec pages as a doctest, tagged with the clauses it shows."""

import doctest

import pytest
import torch

from conformance.harness import registry

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _params():
    return [
        pytest.param(example, id=example.name, marks=pytest.mark.clause(*example.clauses))
        for example in registry.default().examples
    ]


@pytest.mark.only_devices("cpu")  # examples are written for the default device
@pytest.mark.parametrize("example", _params())
def test_spec_example(example, device):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(example.code, {"torch": torch}, example.name, f"spec/{example.page}.md", example.line)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, f"spec/{example.name}: example output differs:\n" + "".join(out)
