"""torch-update-spec: run the conformance suite on the torch of this environment, and compare with the recorded results.

    torch-update-spec run [--device cpu,meta] [--mode eager,compile] [--results PATH] [-- PYTEST-ARGS]
    torch-update-spec diff [--results PATH] [--against VERSION]

`run` runs the suite installed with this package against the torch that `python` imports here (a ROCm, XPU, custom
or nightly build as well as a release) and prints the outcome of each clause; its results go to PATH ('{device}' in
PATH: one file per device; default: torch-update-spec-results/{device}.json). `diff` compares the results of the last
`run` in this folder (or --results PATH) with the recorded results of the same public torch version, else of the
newest recorded release older than it (or --against VERSION), and prints each clause whose outcome changed.
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

from conformance.harness import diff, results
from conformance.harness.devices import KNOWN
from conformance.release_check import UsageError, check_against, one_line_errors, recorded, release_pages, shown

DEFAULT_RESULTS = Path("torch-update-spec-results")
LAST_RUN = DEFAULT_RESULTS / "last-run.json"  # where `diff` finds the results `run` wrote
PROG = "torch-update-spec"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        raise UsageError(f"{message} (see: {PROG} --help)")


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = commands.add_parser("run", help="run the suite on the torch of this environment")
    run.add_argument("--device", help="comma-separated devices (cpu,meta,cuda,mps); default: every present one")
    run.add_argument("--mode", default="eager,compile", help="comma-separated modes; default: eager,compile")
    run.add_argument("--results", metavar="PATH", default=str(DEFAULT_RESULTS / "{device}.json"))
    against = commands.add_parser("diff", help="compare the last run with the recorded results")
    against.add_argument("--results", metavar="PATH", help="results of a run (default: the last run in this folder)")
    against.add_argument("--against", metavar="VERSION", help="recorded version to compare with")
    return top


def main(argv=None) -> int:
    return one_line_errors(lambda: command(sys.argv[1:] if argv is None else list(argv)), PROG)


def command(argv: list[str]) -> int:
    passed_on = []
    if "--" in argv:
        argv, passed_on = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    args = parser().parse_args(argv)
    if args.command == "run":
        return run(args, passed_on)
    if passed_on:
        raise UsageError("diff takes no pytest arguments after --")
    return compare(args)


def run(args, pytest_args: list[str]) -> int:
    if importlib.util.find_spec("torch") is None:
        raise UsageError(f"torch is not installed for {sys.executable}: install the torch to check first")
    template = str(Path(args.results).resolve())
    suite = Path(__file__).resolve().parent
    argv = [sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "-p", "no:logging"]
    argv += ["--strict-markers", "-W", "ignore:Failed to initialize NumPy", "--results", template, "--mode", args.mode]
    if args.device:
        argv += ["--device", args.device]
    code = subprocess.run([*argv, *pytest_args], cwd=suite.parent).returncode
    written = results.targets(template)
    files = [written] if isinstance(written, Path) else [p for p in written.values() if p.is_file()]
    if code in (0, 1) and files:
        LAST_RUN.parent.mkdir(parents=True, exist_ok=True)
        LAST_RUN.write_text(json.dumps({"results": [str(p) for p in files]}), encoding="utf-8")
        print(f"results: {', '.join(shown(p) for p in files)}; compare them with the recorded ones: {PROG} diff")
    return code


def last_run(path: str | None) -> list[Path]:
    """The results files to compare: those PATH names, else those the last `run` in this folder wrote."""
    if path is not None:
        written = results.targets(str(Path(path).resolve()))
        files = [written] if isinstance(written, Path) else [p for p in written.values() if p.is_file()]
        if not files or not all(p.is_file() for p in files):
            raise UsageError(f"--results {path}: no such results file")
        return files
    if not LAST_RUN.is_file():
        raise UsageError(f"no run to compare in this folder ({LAST_RUN} is missing): run `{PROG} run` first")
    try:
        return [Path(p) for p in json.loads(LAST_RUN.read_text(encoding="utf-8"))["results"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read {LAST_RUN} ({exc}); run `{PROG} run` again") from None


def nearest(version: str, versions: list[str]) -> tuple[str, str]:
    """The recorded release to compare a torch with, and why that one: the same public version (a local build,
    `2.13.0+rocm6.2`), else the newest older one (a pre-release or nightly, `2.16.0a0+git...`)."""
    public = Version(Version(version).public)
    same = [v for v in versions if Version(v) == Version(public.base_version) and not public.is_prerelease]
    if same:
        return same[-1], "the same public version"
    older = [v for v in versions if Version(v) < public]
    if not older:
        raise UsageError(f"no recorded release as old as torch {version}; recorded: {', '.join(versions)}")
    return older[-1], f"the newest recorded release older than {public}"


def compare(args) -> int:
    new = {}
    for path in last_run(args.results):
        try:
            doc = results.load(path)
        except results.ResultsError as exc:
            raise UsageError(str(exc)) from None
        new.update({device: {**doc, "devices": {device: table}} for device, table in doc["devices"].items()})
    version = next(iter(new.values()))["torch"]
    versions = recorded()
    if args.against:
        against, why = check_against(args.against, versions), "--against"
    else:
        against, why = nearest(version, versions)
    changes = []
    for device, doc in new.items():
        recorded_file = results.RESULTS_DIR / against / f"{device}.json"
        if device in KNOWN and recorded_file.is_file():
            changes += diff.compare(results.load(recorded_file), doc)
    # A clause this run did not run (a partial run: -k, one device) says nothing new: left out, and said so.
    not_run = [c for c in changes if c.after == "not-run"]
    changes = [c for c in changes if c.after != "not-run"]
    print(f"torch {version} (this run) against recorded {against} ({why}):")
    print(diff.report(changes))
    if not_run:
        print(f"({len(not_run)} clause outcomes not compared: this run did not run them)")
    if pages := release_pages(against, Version(version).public):
        print(pages)
    return 1 if changes else 0


if __name__ == "__main__":
    sys.exit(main())
