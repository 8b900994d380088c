"""Bad input of the benchmark (benchmarks/bench.py), copied into the demo project, whose .nox/ keeps no environment."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from . import Case

BENCH = Path(__file__).parents[2] / "benchmarks" / "bench.py"


def copy_bench(project: Path) -> None:
    (project / "benchmarks").mkdir()
    shutil.copy(BENCH, project / "benchmarks")


CASES: list[Case] = [
    Case(
        id="bench-release-not-kept",
        what="the per-release benchmark for a release whose nox environment is not kept (or a typo)",
        argv=(sys.executable, "benchmarks/bench.py", "--modes-per-version", "--versions", "2.13.0,2.13.9"),
        says="no kept environment under .nox/ for --versions 2.13.0,2.13.9",
        exit=1,
        setup=copy_bench,
    ),
    Case(
        id="bench-modes-without-eager",
        what="the per-release benchmark asked for modes that do not start with eager (its ratios are to eager)",
        argv=(sys.executable, "benchmarks/bench.py", "--modes-per-version", "--modes", "inductor"),
        says="--modes must start with eager and name eager, compile, inductor: inductor",
        exit=1,
        setup=copy_bench,
    ),
]
