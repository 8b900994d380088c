"""The bad-input table (tests/bad_input/, rendered in docs/usage.md): one test per row."""

import os
import stat

import pytest

from tests.bad_input import all_cases
from tests.conftest import command


def kept(path):
    """What must not change: a regular file's bytes; a special file or a link stays the same file, never read (a pipe
    would block) and never replaced by a regular one."""
    st = os.lstat(path)
    if stat.S_ISREG(st.st_mode):
        return path.read_bytes()
    return stat.S_IFMT(st.st_mode), st.st_ino, os.readlink(path) if stat.S_ISLNK(st.st_mode) else None


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.id)
def test_bad_input(demo, case):
    if case.setup:
        case.setup(demo)
    before = {name: kept(demo / name) for name in case.keeps}
    code, output = command(demo, case.argv)
    assert "Traceback" not in output, output[-3000:]
    assert case.says in output, f"expected {case.says!r} in:\n{output[-3000:]}"
    assert code == case.exit, f"exit {code}, expected {case.exit}:\n{output[-3000:]}"
    for name, content in before.items():
        assert kept(demo / name) == content, f"{name} was changed by a refused command"
    for secret in case.never:
        assert secret not in output, f"{secret!r} shown in:\n{output[-3000:]}"
