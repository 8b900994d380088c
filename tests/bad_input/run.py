"""Bad input of a suite run (``python -m pytest conformance ...``, and so of ``nox -s conformance``).

Usage errors stop the run before any test runs (exit 4, one ``ERROR:`` line, no results written); a run that
is partial says so, and under ``--record`` writes nothing.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from . import PYTEST, Case

PREVIOUS = "r.json"  # results a setup leaves in place: a refused run must not touch them


def previous_results(project: Path) -> None:
    (project / PREVIOUS).write_text('{"recorded": "before"}\n')


def extra_test(source: str):
    """A setup adding conformance/tests/test_extra.py (and previous results) to the demo."""

    def setup(project: Path) -> None:
        previous_results(project)
        (project / "conformance" / "tests" / "test_extra.py").write_text(textwrap.dedent(source))

    return setup


def _run(id, what, args, says, exit=4, setup=previous_results, keeps=(PREVIOUS,)) -> Case:
    return Case(id=f"run-{id}", what=what, argv=PYTEST + tuple(args), says=says, exit=exit, setup=setup, keeps=keeps)


RECORD = ("--record", "--results", PREVIOUS)


def a_pipe(project: Path) -> None:
    """A special file of the test's own (a named pipe), standing for /dev/null: never the machine's own."""
    previous_results(project)
    os.mkfifo(project / "special")


def a_dangling_link(project: Path) -> None:
    previous_results(project)
    (project / "link.json").symlink_to(project / "gone" / "r.json")


def recorded_results(project: Path) -> None:
    from .release_check import record

    previous_results(project)
    record(project)


RECORDED_FOLDER = "conformance/results/2.13.0"
_HELD = []  # folder locks this test process holds, as a recording in progress would


def a_recording_running(project: Path) -> None:
    """Recorded results of 2.13.0, and their folder locked as by another recording of that release, running now."""
    import fcntl

    recorded_results(project)
    fd = os.open(project / RECORDED_FOLDER, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _HELD.append(fd)


CASES = [
    _run(
        "record-twice-at-once",
        "record a release while another recording of it runs (two `nox -s conformance` at once)",
        ["--record", "--results", f"{RECORDED_FOLDER}/{{device}}.json"],
        f"{RECORDED_FOLDER}: another recording is writing results there now; wait for it to end",
        setup=a_recording_running,
        keeps=(PREVIOUS, f"{RECORDED_FOLDER}/cpu.json", f"{RECORDED_FOLDER}/meta.json"),
    ),
    _run(
        "clauses-unknown", "refresh a clause the spec does not have", ["--clauses", "NOPE-1"], "'NOPE-1' is no clause"
    ),
    _run("clauses-twice", "name a clause twice", ["--clauses", "DEMO-1,DEMO-1"], "give each clause ID once"),
    _run("clauses-empty", "give --clauses no clause", ["--clauses", ","], "give each clause ID once"),
    _run(
        "clauses-into-nothing",
        "refresh clauses in results that were never recorded",
        ["--clauses", "DEMO-1", "--results", "new/{device}.json"],
        "new/cpu.json does not exist: --clauses refreshes recorded results; record all first",
    ),
    _run(
        "clauses-into-no-results",
        "refresh clauses in a file that holds no results",
        ["--clauses", "DEMO-1", "--results", PREVIOUS],
        "r.json: keys ['recorded'] differ",
    ),
    _run(
        "unknown-mode", "ask for a mode the suite does not have", ["--mode", "jit"], "unknown mode 'jit'; known modes"
    ),
    _run("mode-twice", "name a mode twice", ["--mode", "eager,eager"], "--mode 'eager,eager' names mode eager twice"),
    _run("no-mode", "give --mode an empty list", ["--mode", ","], "--mode ',' names no mode; give e.g. --mode eager,"),
    _run(
        "unknown-device",
        "ask for a device torch does not know",
        ["--device", "tpu"],
        "unknown device 'tpu'; known devices: cpu, meta, cuda, mps",
    ),
    _run(
        "absent-device",
        "ask for a device this machine does not have",
        ["--device", "mps"],
        "device 'mps' was asked for but is not present here",
    ),
    _run(
        "no-device",
        "give --device an empty list",
        ["--device", ","],
        "--device ',' names no device; give e.g. --device cpu,meta",
    ),
    _run("empty-device", "give --device an empty string", ["--device", ""], "--device '' names no device"),
    _run("results-empty", "give --results an empty path", ["--results", ""], "--results needs a file path"),
    _run(
        "results-directory",
        "give --results a folder",
        ["--results", "spec"],
        "--results spec: is a directory; give a file path",
    ),
    _run(
        "results-template",
        "use another placeholder than {device}",
        ["--results", "{device}-{run}.json"],
        "only {device} may stand in braces",
    ),
    _run(
        "results-under-a-file",
        "put --results below a file",
        ["--results", "pyproject.toml/r.json"],
        "pyproject.toml is a file, not a folder",
    ),
    _run(
        "results-unwritable",
        "give --results a place that cannot be written",
        ["--results", "/proc/r.json"],
        "--results /proc/r.json: cannot write in /proc",
    ),
    _run(
        "results-special-file",
        "give --results a special file (/dev/null, a pipe: here one the test makes)",
        ["--results", "special"],
        "--results special: not a regular file (a device, pipe or socket); results go to files only",
        setup=a_pipe,
        keeps=(PREVIOUS, "special"),
    ),
    _run(
        "results-dangling-link",
        "give --results a symbolic link to nothing",
        ["--results", "link.json"],
        "--results link.json: a symbolic link to nothing",
        setup=a_dangling_link,
        keeps=(PREVIOUS, "link.json"),
    ),
    _run(
        "results-too-long",
        "give --results a path longer than the system allows",
        ["--results", "r" * 5000 + ".json"],
        "File name too long",
    ),
    _run(
        "results-into-the-recording",
        "write a run that is not a recording into the recorded results",
        ["--results", "conformance/results/2.13.0/{device}.json", "--device", "meta", "-k", "version"],
        "lies in the recorded results (conformance/results/), which only a recording writes: nox -s conformance",
        setup=recorded_results,
        keeps=(PREVIOUS, "conformance/results/2.13.0/cpu.json", "conformance/results/2.13.0/meta.json"),
    ),
    _run(
        "results-double-braces",
        "escape the braces of {device} ('{{device}}')",
        ["--results", "r/{{device}}.json"],
        "only {device} may stand in braces",
    ),
    _run(
        "results-upper-case-placeholder",
        "write the placeholder in capitals ('{DEVICE}')",
        ["--results", "{DEVICE}.json"],
        "only {device} may stand in braces",
    ),
    _run("results-empty-braces", "leave the braces empty ('{}')", ["--results", "{}.json"], "may stand in braces"),
    _run("results-open-brace", "leave a brace open ('{device')", ["--results", "{device.json"], "may stand in braces"),
    _run(
        "device-with-space",
        "put a space in a device name",
        ["--device", " cpu"],
        "--device ' cpu': ' cpu' is no device name (no spaces, no empty names)",
    ),
    _run("device-twice", "name a device twice", ["--device", "cpu,cpu"], "--device 'cpu,cpu' names device cpu twice"),
    _run(
        "no-skipping-plugin",
        "turn pytest's skipping plugin off",
        ["-p", "no:skipping", "--results", PREVIOUS],
        "-p no:skipping: the suite cannot run without pytest's skipping plugin",
    ),
    _run(
        "no-recorder",
        "turn the suite's recorder off",
        ["-p", "no:conformance-recorder", "--results", PREVIOUS],
        "-p no:conformance-recorder: the suite cannot run without its recorder",
    ),
    _run(
        "unknown-clause",
        "name a clause the spec does not define",
        [],
        "unknown clause 'NOPE-7' (not defined in spec/*.md)",
        setup=extra_test("""
            import pytest
            @pytest.mark.clause("NOPE-7")
            def test_x(device):
                pass
         """),
    ),
    _run(
        "no-clause-marker",
        "write a test without a clause marker",
        [],
        "test has no @pytest.mark.clause(...) marker",
        setup=extra_test("def test_unmarked(device):\n    pass\n"),
    ),
    _run(
        "clauses-with-different-ranges",
        "name two clauses with different version ranges in one test",
        [],
        "clauses DEMO-1, DEMO-3 differ in version range; split the test",
        setup=extra_test("""
            import pytest
            @pytest.mark.clause("DEMO-1", "DEMO-3")
            def test_x(device):
                pass
         """),
    ),
    _run(
        "clauses-on-different-devices",
        "name a metadata clause and a values clause in one test",
        [],
        "do not all apply on meta (DEMO-4: clause needs values; meta tensors have none)",
        setup=extra_test("""
            import pytest
            @pytest.mark.clause("DEMO-1", "DEMO-4")
            def test_x(device):
                pass
         """),
    ),
    _run(
        "record-keyword",
        "record results of a run narrowed with -k",
        [*RECORD, "-k", "version"],
        "--record needs the whole suite; -k selects part of it",
    ),
    _run(
        "record-marker",
        "record results of a run narrowed with -m",
        [*RECORD, "-m", "slow"],
        "--record needs the whole suite; -m selects part of it",
    ),
    _run(
        "record-exitfirst",
        "record results of a run that stops at the first failure",
        [*RECORD, "-x"],
        "--record needs the whole suite; -x/--maxfail selects part of it",
    ),
    _run(
        "record-maxfail",
        "record results of a run that stops after N failures",
        [*RECORD, "--maxfail", "3"],
        "-x/--maxfail selects part of it",
    ),
    _run(
        "record-deselect",
        "record results of a run with --deselect",
        [*RECORD, "--deselect", "conformance/tests/test_demo.py::test_version"],
        "--record needs the whole suite; --deselect selects part of it",
    ),
    Case(
        id="run-record-last-failed",
        what="record results of a --lf run",
        argv=(*PYTEST[:4], *RECORD, "--lf"),  # --lf needs pytest's cache plugin, which PYTEST turns off
        says="--record needs the whole suite; --lf selects part of it",
        exit=4,
        setup=previous_results,
        keeps=(PREVIOUS,),
    ),
    _run(
        "record-one-file",
        "record results of one test file",
        [*RECORD, "conformance/tests/test_demo.py"],
        "--record needs the whole suite; the argument conformance/tests/test_demo.py selects part of it",
    ),
    _run(
        "record-one-test",
        "record results of one test",
        [*RECORD, "conformance/tests/test_demo.py::test_version"],
        "the argument conformance/tests/test_demo.py::test_version selects part of it",
    ),
    _run(
        "partial-run",
        "write results of a run narrowed with -k",
        ["--results", PREVIOUS, "-k", "test_version"],
        "partial run: 4 clauses on present devices are not-run",
        exit=0,
        keeps=(),
    ),
    _run(
        "suite-edited-during-the-run",
        "edit a test file while the suite runs",
        ["--results", PREVIOUS],
        "results not written to r.json: the tests or the spec changed while the suite ran",
        setup=extra_test("""
            import pathlib, pytest
            @pytest.mark.clause("DEMO-1")
            def test_edits_the_suite(device):
                path = pathlib.Path(__file__)
                new = "@pytest.mark.clause('DEMO-1')\\ndef test_new(device):\\n    pass\\n"
                path.write_text(path.read_text() + new)
         """),
    ),
    _run(
        "ignore-ranges-with-results",
        "ask --ignore-ranges to write results",
        ["--ignore-ranges", "--device", "cpu", "--results", PREVIOUS],
        "outside its range: fails, boundary confirmed",
        exit=0,
    ),
]
