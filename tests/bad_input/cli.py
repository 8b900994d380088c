"""Bad input of the `torch-update-spec` command (conformance/cli.py), run as `python -m conformance.cli`.

The demo project stands in for the installed package; a setup records valid demo results (as for the release check)
and writes the file through which `diff` finds the last run.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import Case
from .release_check import RECORDED, record

CLI = (sys.executable, "-m", "conformance.cli")
LAST_RUN = "torch-update-spec-results/last-run.json"


def broken_last_run(project: Path) -> None:
    record(project)
    (project / LAST_RUN).parent.mkdir()
    (project / LAST_RUN).write_text("{not json")


CASES: list[Case] = [
    Case(
        id="cli-no-command",
        what="torch-update-spec without a command",
        argv=CLI,
        says="the following arguments are required: command",
        exit=2,
    ),
    Case(
        id="cli-unknown-command",
        what="torch-update-spec with an unknown command",
        argv=CLI + ("check",),
        says="invalid choice: 'check'",
        exit=2,
    ),
    Case(
        id="cli-diff-before-any-run",
        what="torch-update-spec diff in a folder where no run was made",
        argv=CLI + ("diff",),
        says="no run to compare in this folder",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="cli-diff-missing-results",
        what="torch-update-spec diff of a results file that does not exist",
        argv=CLI + ("diff", "--results", "nope.json"),
        says="--results nope.json: no such results file",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="cli-diff-broken-last-run",
        what="torch-update-spec diff when the note of the last run is damaged",
        argv=CLI + ("diff",),
        says="cannot read torch-update-spec-results/last-run.json",
        exit=2,
        setup=broken_last_run,
        keeps=(RECORDED,),
    ),
    Case(
        id="cli-diff-against-unrecorded",
        what="torch-update-spec diff --against a release that was not recorded",
        argv=CLI + ("diff", "--results", RECORDED, "--against", "1.0"),
        says="no recorded results for torch 1.0",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="cli-diff-pytest-arguments",
        what="torch-update-spec diff with pytest arguments after --",
        argv=CLI + ("diff", "--", "-k", "DATA"),
        says="diff takes no pytest arguments after --",
        exit=2,
    ),
    Case(
        id="cli-run-unknown-device",
        what="torch-update-spec run on an unknown device (pytest's usage error, passed on)",
        argv=CLI + ("run", "--device", "tpu"),
        says="unknown device 'tpu'",
        exit=4,
    ),
]
