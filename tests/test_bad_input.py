"""The bad-input table (tests/bad_input/, rendered in docs/usage.md): one test per row."""

import pytest

from tests.bad_input import all_cases
from tests.conftest import command


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.id)
def test_bad_input(demo, case):
    if case.setup:
        case.setup(demo)
    kept = {name: (demo / name).read_bytes() for name in case.keeps}
    code, output = command(demo, case.argv)
    assert "Traceback" not in output, output[-3000:]
    assert case.says in output, f"expected {case.says!r} in:\n{output[-3000:]}"
    assert code == case.exit, f"exit {code}, expected {case.exit}:\n{output[-3000:]}"
    for name, content in kept.items():
        assert (demo / name).read_bytes() == content, f"{name} was changed by a refused command"
