"""Check a new torch release against the newest recorded results, in one command.

    python conformance/release_check.py 2.16.0              # a PyPI version (pre-releases too)
    python conformance/release_check.py ./torch-2.16.0-....whl
    python conformance/release_check.py https://download.pytorch.org/whl/nightly/cpu   # an index URL
    python conformance/release_check.py 2.15.0 --against 2.0.1
    python conformance/release_check.py 2.16.0 -- -k DATA   # arguments after -- go to pytest

Installs that torch into its own environment (uv), runs the suite on every
present device, writes conformance/results/<version>/<device>.json, and prints
what changed against the newest recorded version (or --against VERSION).
The torch argument, the recorded results and --against are checked before
anything is installed.
Exit status: 0 nothing changed, 1 something changed, 2 usage error or any
other error (a version the index does not have, an unreadable wheel, stale or
incomplete recorded results, a suite run that did not complete, ...), 130
interrupted. Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename  # noqa: E402
from packaging.version import InvalidVersion, Version  # noqa: E402

from conformance.commands import (  # noqa: E402
    OneLineParser,
    UsageError,
    check_against,
    compare,
    lines,
    one_line_errors,
    recorded,
    recorded_documents,
    release_pages,
    shown,
    split_pytest_args,
)
from conformance.harness import modes, results  # noqa: E402
from conformance.harness.devices import KNOWN  # noqa: E402
from conformance.window import numpy_requirement  # noqa: E402

ENVS = ROOT / ".nox" / "release-check"


def requirements(spec: str) -> tuple[list[str], str]:
    """uv pip install arguments for a torch spec, and a slug naming its environment.

    A spec is an http(s):// or file:// index URL, a path to a torch wheel, or any PEP 440 version
    ("2.16.0", "2.16.0rc1", "v2.15.0", "2", "1!2.13.0"); anything else is a UsageError.
    """
    if spec.startswith(("http://", "https://", "file://")):
        url = urlsplit(spec)
        if not (url.netloc if url.scheme in ("http", "https") else url.path.strip("/")):
            raise UsageError(f"index URL {spec!r} names no {'host' if url.scheme != 'file' else 'folder'}")
        # An extra index: uv takes torch from it (it ranks before PyPI), and the suite's packages, which PyTorch's
        # indexes do not carry, from PyPI.
        return ["--pre", "torch", "--extra-index-url", spec], "index-" + re.sub(r"\W+", "-", spec)[-40:]
    if spec.endswith(".whl"):
        path = Path(spec).resolve()
        if not path.is_file():
            raise UsageError(f"cannot read wheel {spec}: no such file")
        if not zipfile.is_zipfile(path):
            raise UsageError(f"cannot read wheel {spec}: not a zip archive")
        try:
            name = parse_wheel_filename(path.name)[0]
        except InvalidWheelFilename as exc:
            raise UsageError(f"cannot read wheel {spec}: {exc}") from None
        if name != canonicalize_name("torch"):
            raise UsageError(f"wheel {spec} is {name}, not torch")
        return [str(path)], path.stem
    try:
        version = Version(spec)
    except InvalidVersion:
        raise UsageError(f"{spec!r} is neither a torch version, a wheel file nor an index URL") from None
    slug = re.sub(r"[^\w.+-]", "-", str(version))
    return [f"torch=={version}", numpy_requirement(spec), "--prerelease", "allow"], f"torch-{slug}"


def _uv(argv: list[str], what: str) -> subprocess.CompletedProcess:
    # Compiled bytecode: without .pyc files every `import torch` in the suite recompiles its sources.
    try:
        return subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "UV_COMPILE_BYTECODE": "1"})
    except FileNotFoundError:
        raise UsageError(f"cannot {what}: uv is not installed (pip install uv)") from None


# What importing torch's operator database (conformance/harness/opdb.py) needs on some releases.
OPDB_NEEDS = ("expecttest", "pyyaml", "setuptools")


def install(spec: str) -> Path:
    args, slug = requirements(spec)
    env = ENVS / slug
    python = env / "bin" / "python"
    if not python.exists():
        proc = _uv(["uv", "venv", "-q", "-p", "3.11", str(env)], f"create {shown(env)}")
        if proc.returncode:
            reason = (lines(proc.stderr) or ["uv venv failed"])[-1]
            raise UsageError(f"cannot create {shown(env)}: {reason.removeprefix('error: ')}")
    packages = ("pytest", "pytest-xdist", "packaging", *OPDB_NEEDS)
    proc = _uv(
        ["uv", "pip", "install", "-q", "--python", str(python), *args, *packages],
        f"install {spec}",
    )
    if proc.returncode:
        stderr = lines(proc.stderr)
        reason = next(
            (ln for ln in stderr if "no version" in ln or "not found" in ln.lower()), stderr[-1] if stderr else ""
        )
        shutil.rmtree(env, ignore_errors=True)
        raise UsageError(f"cannot install {spec}: {reason.removeprefix('cause: ')}")
    return python


def newest_recorded(exclude: str | None = None, versions: list[str] | None = None) -> str:
    """The newest recorded version other than ``exclude`` (that one itself when it is the only one)."""
    if versions is None:
        versions = results.recorded_versions(results.RESULTS_DIR)
    others = [v for v in versions if exclude is None or Version(v) != Version(exclude)]
    candidates = others or versions
    if not candidates:
        raise UsageError("no recorded results to compare with; record some with: nox -s conformance")
    return candidates[-1]


def _suite_failure(output: str) -> str:
    """The line of the suite's output that says what went wrong (its last line when none does)."""
    said = lines(output)
    errors = [ln for ln in said if not ln.startswith("=") and re.search(r"error", ln, re.IGNORECASE)]
    return ((errors or said or ["no output"])[0 if errors else -1])[:300]


def run_suite(python: Path, out_dir: Path, spec: str, pytest_args: list[str]) -> dict[str, dict]:
    """Run the suite with that python; its results per device, or a UsageError when the run proves nothing."""
    print(f"running the suite on torch {spec} ...", flush=True)
    proc = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            "conformance",
            "-q",
            "-p",
            "no:cacheprovider",
            "--results",
            str(out_dir / "{device}.json"),
            "--mode",
            ",".join(modes.KNOWN),  # a recording holds both modes
            *pytest_args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    log = python.parent.parent / "suite-output.txt"
    log.write_text(proc.stdout + proc.stderr, encoding="utf-8")
    where = f"(pytest exit {proc.returncode}; its output is in {shown(log)})"
    if proc.returncode not in (0, 1):  # 0: every test passed, 1: some failed; anything else is no complete run
        reason = _suite_failure(proc.stdout + proc.stderr)
        raise UsageError(f"the suite did not complete on torch {spec} {where}: {reason}")
    files = sorted(out_dir.glob("*.json"))
    if not files:
        raise UsageError(f"the suite wrote no results on torch {spec} {where}")
    new = {}
    for path in files:
        try:
            new[path.stem] = results.load(path)
        except results.ResultsError as exc:
            raise UsageError(f"the suite wrote invalid results {where}: {exc}") from None
    if len({doc["torch"] for doc in new.values()}) > 1:
        raise UsageError(f"the suite's results name different torch versions {where}")
    if not any(
        entry["outcome"] in ("pass", "fail")
        for doc in new.values()
        for _, table in results.tables(doc)
        for entry in table.values()
    ):
        raise UsageError(f"no test of the suite ran on any device, nothing to compare {where}")
    return new


def main(argv=None) -> int:
    """Exit status 0 nothing changed, 1 something changed, 2 any error, 130 interrupted; never a traceback."""
    return one_line_errors(lambda: check(argv), "release check")


def check(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    argv, pytest_args = split_pytest_args(argv)
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("torch", help="a PyPI version, a wheel file, or an index URL")
    parser.add_argument("--against", metavar="VERSION", help="recorded version to compare with (default: newest)")
    parser.add_argument("--no-write", action="store_true", help="do not write the new results into the tree")
    args = parser.parse_args(argv)

    # Everything that can be checked without installing is checked first.
    requirements(args.torch)
    versions = recorded()
    against = check_against(args.against, versions) if args.against else None

    python = install(args.torch)
    with tempfile.TemporaryDirectory() as tmp:
        new = run_suite(python, Path(tmp), args.torch, pytest_args)
        version = Version(next(iter(new.values()))["torch"]).public
        against = against or newest_recorded(exclude=version, versions=versions)
        old = recorded_documents(against, new)  # read before anything is written: --against may be this version
        written = None
        if not args.no_write:
            # What is written must pass as a recording later: every device, and every clause run where present.
            not_run = [key for doc in new.values() for key in results.partial(doc)]
            if missing := [d for d in KNOWN if d not in new]:
                why = f"this run has none for {', '.join(missing)} (a recording holds every device)"
            elif not_run:
                cid, device, mode = not_run[0]
                why = f"a partial run ({len(not_run)} clauses not run, e.g. {cid} [{device}, {mode}])"
            if missing or not_run:
                print(f"release check: results not written: {why}", file=sys.stderr)
            else:
                # One document of the run (all device files share its header); written all or none.
                whole = {**next(iter(new.values())), "devices": {d: new[d]["devices"][d] for d in KNOWN}}
                written = results.RESULTS_DIR / version
                results.write(whole, str(written / "{device}.json"))
    code = compare(new, old, against, f"torch {version} against recorded {against}:")
    if pages := release_pages(against, version):
        print(pages)
    if written:
        print(f"results written to {shown(written)}/")
    return code


if __name__ == "__main__":
    sys.exit(main())
