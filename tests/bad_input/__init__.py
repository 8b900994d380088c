"""Every bad input a user can give, what they see, and the exit code.

Each ``Case`` is one row of the table in docs/usage.md ("Bad input") and one
test in tests/test_bad_input.py, which runs the command in a demo project
(tests/conftest.py) after ``setup`` has broken what the case needs broken, and
checks the exit code, the one line the user sees, that no traceback is
printed, and that nothing already recorded was lost: each file it keeps is
byte-identical, and a special file or link it keeps is still that same file. The submodules group the
cases by the command they concern.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PYTEST = (sys.executable, "-m", "pytest", "conformance", "-p", "no:cacheprovider")
RELEASE_CHECK = (sys.executable, "conformance/release_check.py")
RESULTS_CHECK = (sys.executable, "-m", "conformance.harness.results")


@dataclass(frozen=True)
class Case:
    id: str  # stable, short: the test id
    what: str  # what the user does, in words (first column of the table)
    argv: tuple[str, ...]  # the command, run in the demo project's root
    says: str  # a fragment of the one line the user sees
    exit: int
    setup: Callable[[Path], None] | None = None  # prepares the demo project (a broken page, a results folder ...)
    keeps: tuple[str, ...] = ()  # files (relative to the demo) that setup made and the command must leave unchanged
    never: tuple[str, ...] = ()  # what the output must not hold (a password given in a URL)

    @property
    def shown(self) -> str:
        """The command as the table shows it."""
        # What a user types: `python`, and without the cache switch the tests add to keep the demo clean.
        words = ["python" if w == sys.executable else w for w in self.argv]
        if words[:3] == ["python", "-m", "conformance.cli"]:  # the installed package's console command
            words = ["torch-update-spec", *words[3:]]
        words = [w for i, w in enumerate(words) if not (w == "-p" and words[i + 1 : i + 2] == ["no:cacheprovider"])]
        words = [w for w in words if w != "no:cacheprovider"]
        return " ".join(w if w and " " not in w and "{" not in w else repr(w) for w in words)


def all_cases() -> list[Case]:
    from . import bench, cli, release_check, results, run, spec

    cases = [case for module in (run, spec, results, release_check, cli, bench) for case in module.CASES]
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "bad-input case ids must be unique"
    return cases
