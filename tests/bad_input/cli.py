"""Bad input of the `torch-update-spec` command (conformance/cli.py), run as `python -m conformance.cli`.

The demo project stands in for the installed package; a setup records valid demo results (as for the release check)
and writes the file through which `diff` finds the last run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from . import PYTEST, Case
from .release_check import RECORDED, record
from .run import PREVIOUS, extra_test

CLI = (sys.executable, "-m", "conformance.cli")
LAST_RUN = "torch-update-spec-results/last-run.json"


def broken_last_run(project: Path) -> None:
    record(project)
    (project / LAST_RUN).parent.mkdir()
    (project / LAST_RUN).write_text("{not json")


def note_folder_is_a_file(project: Path) -> None:
    """Where `run` keeps its note for `diff` cannot be written (as in a read-only folder: root writes anywhere)."""
    (project / LAST_RUN).parent.write_text("a file where the note's folder would go\n")


def eager_run(project: Path) -> None:
    """Recorded demo results, and the results of a run of eager mode on cpu only (run.json)."""
    record(project)
    subprocess.run(
        [*PYTEST, "--device", "cpu", "--mode", "eager", "--results", "run.json"],
        cwd=project,
        check=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(project)},
    )


def recorded_patch(project: Path) -> None:
    record(project, "2.12.1")


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
    Case(
        id="cli-run-refused-keeps-file",
        what="torch-update-spec run --results FILE that pytest then refuses (an unknown device)",
        argv=CLI + ("run", "--results", PREVIOUS, "--device", "tpu"),
        says="unknown device 'tpu'",
        exit=4,
        setup=lambda p: (p / PREVIOUS).write_text("important\n"),
        keeps=(PREVIOUS,),
    ),
    Case(
        id="cli-run-into-the-recording",
        what="torch-update-spec run --results into the package's recorded results",
        argv=CLI + ("run", "--results", "conformance/results/2.13.0/{device}.json"),
        says="lies in the recorded results (conformance/results/), which only a recording writes",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="cli-run-exits-without-results",
        what="torch-update-spec run whose suite ends the process with exit 0 before writing results",
        argv=CLI + ("run", "--results", PREVIOUS, "--device", "cpu", "--mode", "eager"),
        says="the suite exited 0 but wrote no results to r.json",
        exit=2,
        setup=extra_test("""
            import os, pytest
            @pytest.mark.clause("DEMO-1")
            def test_ends_the_process(device):
                os._exit(0)
         """),
        keeps=(PREVIOUS,),
    ),
    Case(
        id="cli-run-no-note",
        what="torch-update-spec run where its note for `diff` cannot be written (a read-only folder)",
        argv=CLI + ("run", "--results", "out/{device}.json", "--device", "cpu", "--mode", "eager"),
        says="(no note of this run in torch-update-spec-results: File exists); compare them with the recorded ones: "
        "torch-update-spec diff --results out/{device}.json",
        exit=0,
        setup=note_folder_is_a_file,
        keeps=("torch-update-spec-results",),
    ),
    Case(
        id="cli-diff-names-what-it-did-not-compare",
        what="torch-update-spec diff after a run of one device and one mode",
        argv=CLI + ("diff", "--results", "run.json"),
        says=(
            "(not compared: cpu compile, cpu inductor, meta compile, meta eager: recorded for torch 2.13.0, "
            "not run in this run)"
        ),
        exit=0,
        setup=eager_run,
        keeps=(RECORDED,),
    ),
    Case(
        id="cli-diff-against-empty",
        what="torch-update-spec diff --against ''",
        argv=CLI + ("diff", "--results", RECORDED, "--against", ""),
        says="--against '' is not a version",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="cli-diff-against-a-minor-release",
        what="torch-update-spec diff --against a minor release (2.12: its recorded patch, as diff itself maps 2.12.x)",
        argv=CLI + ("diff", "--results", "conformance/results/2.12.1/cpu.json", "--against", "2.12"),
        says="against recorded 2.12.1 (--against 2.12: its recorded patch)",
        exit=0,
        setup=recorded_patch,
        keeps=("conformance/results/2.12.1/cpu.json",),
    ),
]
