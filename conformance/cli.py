"""torch-update-spec: run the conformance suite on the torch of this environment, and compare with the recorded results.

    torch-update-spec run [--device cpu,meta] [--mode eager,compile,inductor] [--results PATH] [-- PYTEST-ARGS]
    torch-update-spec diff [--results PATH] [--against VERSION]

`run` runs the suite installed with this package against the torch that `python` imports here (a ROCm, XPU, custom
or nightly build as well as a release) and prints the outcome of each clause; its results go to PATH ('{device}' in
PATH: one file per device; default: torch-update-spec-results/{device}.json). `diff` compares the results of the last
`run` in this folder (or --results PATH) with the recorded results of the same torch release (same major.minor: the
window records the newest patch of each), else of the newest recorded release older than it (or --against VERSION),
and prints each clause whose outcome changed.
Exit status: run: pytest's (0 every test passed, 1 some failed, 2 and more: the run did not complete);
diff: 0 nothing changed, 1 something changed, 2 usage or any other error. Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

from conformance.commands import (
    OneLineParser,
    UsageError,
    check_against,
    compare,
    one_line_errors,
    recorded,
    recorded_documents,
    release_pages,
    shown,
    split_pytest_args,
)
from conformance.harness import diff, registry, results

PROG = "torch-update-spec"
SUITE = Path(__file__).resolve().parent
# The suite's pytest settings: given with -c, so that no pytest.ini, pyproject.toml or conftest.py of the folder the
# command runs in (the user's own project) applies to the suite.
SUITE_INI = SUITE / "suite.ini"
DEFAULT_RESULTS = Path("torch-update-spec-results")
LAST_RUN = DEFAULT_RESULTS / "last-run.json"  # where `diff` finds the results `run` wrote


class Parser(OneLineParser):
    help_hint = f"{PROG} --help"


def parser() -> OneLineParser:
    top = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    run = commands.add_parser("run", help="run the suite on the torch of this environment")
    run.add_argument("--device", help="comma-separated devices (cpu,meta,cuda,mps); default: every present one")
    every_mode = ",".join(registry.MODES)
    run.add_argument("--mode", default=every_mode, help=f"comma-separated modes; default: {every_mode}")
    run.add_argument("--results", metavar="PATH", default=str(DEFAULT_RESULTS / "{device}.json"))
    against = commands.add_parser("diff", help="compare the last run with the recorded results")
    against.add_argument("--results", metavar="PATH", help="results of a run (default: the last run in this folder)")
    against.add_argument("--against", metavar="VERSION", help="recorded version to compare with")
    return top


def main(argv=None) -> int:
    return one_line_errors(lambda: command(sys.argv[1:] if argv is None else list(argv)), PROG)


def command(argv: list[str]) -> int:
    argv, passed_on = split_pytest_args(argv)
    args = parser().parse_args(argv)
    if args.command == "run":
        return run(args, passed_on)
    if passed_on:
        raise UsageError("diff takes no pytest arguments after --")
    return against_recorded(args)


def files(template: str) -> list[Path]:
    """The results files a ``--results`` template names: the one file, or one per device."""
    found = results.targets(str(Path(template).resolve()))
    return [found] if isinstance(found, Path) else list(found.values())


def run(args, pytest_args: list[str]) -> int:
    if importlib.util.find_spec("torch") is None:
        raise UsageError(f"torch is not installed for {sys.executable}: install the torch to check first")
    template = str(Path(args.results).resolve())
    results.check_writable(template)  # the recorded results too: a run never writes over them
    # Files of an earlier run stay until this run replaces them (a refused run keeps them); which ones it wrote is
    # told by their inode and mtime, so an old file never passes for this run's.
    before = results.stamps(files(args.results))
    argv = [sys.executable, "-m", "pytest", str(SUITE), "-c", str(SUITE_INI), "--rootdir", str(SUITE.parent)]
    argv += ["-p", "no:cacheprovider", "--results", template, "--mode", args.mode]
    if args.device:
        argv += ["--device", args.device]
    code = subprocess.run([*argv, *pytest_args]).returncode
    written = results.rewritten(before)
    if code in (0, 1) and not written:
        raise UsageError(f"the suite exited {code} but wrote no results to {args.results}; see its output above")
    if code in (0, 1):
        shown_files = ", ".join(shown(p) for p in written)
        try:
            LAST_RUN.parent.mkdir(parents=True, exist_ok=True)
            LAST_RUN.write_text(json.dumps({"results": [str(p) for p in written]}), encoding="utf-8")
            print(f"results: {shown_files}; compare them with the recorded ones: {PROG} diff")
        except OSError as exc:  # a read-only folder: the results are written, only the note for `diff` is not
            print(
                f"results: {shown_files} (no note of this run in {LAST_RUN.parent}: {exc.strerror}); compare them "
                f"with the recorded ones: {PROG} diff --results {args.results}"
            )
    return code


def last_run(path: str | None) -> list[Path]:
    """The results files to compare: those PATH names, else those the last `run` in this folder wrote."""
    if path is not None:
        found = [p for p in files(path) if p.is_file()]
        if not found:
            raise UsageError(f"--results {path}: no such results file")
        return found
    if not LAST_RUN.is_file():
        raise UsageError(f"no run to compare in this folder ({LAST_RUN} is missing): run `{PROG} run` first")
    try:
        paths = json.loads(LAST_RUN.read_text(encoding="utf-8"))["results"]
        if not (isinstance(paths, list) and paths and all(isinstance(p, str) for p in paths)):
            raise ValueError("'results' is not a list of paths")
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read {LAST_RUN} ({exc}); run `{PROG} run` again") from None
    return [Path(p) for p in paths]


def nearest(version: str, versions: list[str]) -> tuple[str, str]:
    """The recorded release to compare a torch with, and why that one. Clause ranges are minor releases and the window
    records the newest patch of each, so: the same public version (a local build, `2.13.0+rocm6.2`), else the recorded
    patch of the same minor (`2.4.0` -> 2.4.1, `2.15.0rc1` -> 2.15.0), else the newest older release (a nightly of
    the next minor, `2.16.0a0+git...` -> 2.15.0)."""
    public = Version(Version(version).public)
    for v in versions:
        if Version(v) == public:
            return v, "the same version"
    same_minor = [v for v in versions if Version(v).release[:2] == public.release[:2]]
    if same_minor:
        return same_minor[-1], f"the recorded patch of torch {public.major}.{public.minor}"
    older = [v for v in versions if Version(v) < public]
    if not older:
        raise UsageError(f"no recorded release as old as torch {version}; recorded: {', '.join(versions)}")
    return older[-1], f"the newest recorded release older than {public}"


def load_run(paths: list[Path]) -> dict[str, dict]:
    """The run's results per device: one document per device, all of one torch and of the installed suite."""
    new: dict[str, dict] = {}
    for path in paths:
        try:
            doc = results.load(path)
        except results.ResultsError as exc:
            raise UsageError(str(exc)) from None
        new.update({device: {**doc, "devices": {device: table}} for device, table in doc["devices"].items()})
    if len({repr([doc[key] for key in results.HEADER]) for doc in new.values()}) > 1:
        raise UsageError(f"the results {', '.join(map(shown, paths))} are of different runs; run `{PROG} run` again")
    if not any(diff.ran(table) for doc in new.values() for _, table in results.tables(doc)):
        raise UsageError(f"no test ran in the run of {', '.join(map(shown, paths))}: nothing to compare")
    return new


def against_recorded(args) -> int:
    new = load_run(last_run(args.results))
    version = next(iter(new.values()))["torch"]
    versions = recorded()
    against, why = check_against(args.against, versions) if args.against is not None else nearest(version, versions)
    code = compare(
        new,
        recorded_documents(against),
        against,
        f"torch {version} (this run) against recorded {against} ({why}):",
    )
    if (SUITE.parent / "docs").is_dir() and (pages := release_pages(against, Version(version).public)):
        print(pages)  # the site's release pages exist in a clone only
    return code


if __name__ == "__main__":
    sys.exit(main())
