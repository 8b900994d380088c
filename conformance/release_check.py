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
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import unquote, urlsplit, urlunsplit
from urllib.request import Request, url2pathname, urlopen

import tomllib

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
from conformance.window import companions  # noqa: E402

ENVS = ROOT / ".nox" / "release-check"


def requirements(spec: str) -> tuple[list[str], str]:
    """uv pip install arguments for a torch spec, and a slug naming its environment.

    A spec is an http(s):// or file:// index URL, a path to a torch wheel, or any PEP 440 version
    ("2.16.0", "2.16.0rc1", "v2.15.0", "2", "1!2.13.0"); anything else is a UsageError.
    """
    if spec.startswith(("http://", "https://", "file://")):
        url = urlsplit(spec)
        try:
            url.port  # noqa: B018  (raises ValueError for a port that is no number or out of range)
        except ValueError as exc:
            raise UsageError(f"index URL {redacted(spec)!r}: {exc}") from None
        if not (url.hostname if url.scheme in ("http", "https") else url.path.strip("/")):
            raise UsageError(f"index URL {redacted(spec)!r} names no {'host' if url.scheme != 'file' else 'folder'}")
        # An extra index: uv takes torch from it (it ranks before PyPI), and the suite's packages, which PyTorch's
        # indexes do not carry, from PyPI. served_versions() checks first that it serves torch at all.
        return ["--pre", "torch", "--extra-index-url", spec], "index-" + re.sub(r"\W+", "-", redacted(spec))[-40:]
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
    return [f"torch=={version}", "--prerelease", "allow"], f"torch-{slug}"


def redacted(spec: str) -> str:
    """A torch spec as it may be shown: an index URL's user name and password replaced by ***."""
    url = urlsplit(spec)
    if not spec.startswith(("http://", "https://", "file://")) or "@" not in url.netloc:
        return spec
    return urlunsplit(url._replace(netloc="***@" + url.netloc.rpartition("@")[2]))


def served_versions(index: str) -> set[Version]:
    """The torch versions an index URL serves (its simple-API page for torch: index/torch/), read before anything
    is installed: an index that does not answer or serves no torch is an error, never a reason to take torch from
    PyPI instead (which uv would do)."""
    url = urlsplit(index)
    where = f"index URL {redacted(index)}"
    page = index.rstrip("/") + "/torch/"
    try:
        if url.scheme == "file":
            folder = Path(url2pathname(url.path))
            if not folder.is_dir():
                raise UsageError(f"{where}: no such folder")
            if not (folder / "torch" / "index.html").is_file():
                raise UsageError(f"{where} serves no torch: it has no torch/index.html")
            html = (folder / "torch" / "index.html").read_text(encoding="utf-8", errors="replace")
        else:
            request = Request(urlunsplit(urlsplit(page)._replace(netloc=url.netloc.rpartition("@")[2])))
            if url.username is not None:
                token = base64.b64encode(f"{unquote(url.username)}:{unquote(url.password or '')}".encode()).decode()
                request.add_header("Authorization", f"Basic {token}")
            with urlopen(request, timeout=60) as answer:
                html = answer.read().decode("utf-8", errors="replace")
    except HTTPError as exc:
        raise UsageError(f"{where} serves no torch: {redacted(page)} answers HTTP {exc.code} {exc.reason}") from None
    except (URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
        raise UsageError(f"{where} does not answer: {reason}") from None
    versions = set()
    for name in re.findall(r"torch-[^\s\"'<>/#]+?\.whl", unquote(html)):
        try:
            versions.add(parse_wheel_filename(name)[1])
        except InvalidWheelFilename:
            continue
    if not versions:
        raise UsageError(f"{where} serves no torch: its page {redacted(page)} lists no torch wheel")
    return versions


def _uv(argv: list[str], what: str) -> subprocess.CompletedProcess:
    # Compiled bytecode: without .pyc files every `import torch` in the suite recompiles its sources.
    try:
        return subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "UV_COMPILE_BYTECODE": "1"})
    except FileNotFoundError:
        raise UsageError(f"cannot {what}: uv is not installed (pip install uv)") from None


# What the suite needs beside torch: the package's own dependencies (pyproject.toml; noxfile.py reads the same list),
# and numpy, whose version goes with the torch (conformance/window.py).
SUITE_NEEDS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]


def install(spec: str) -> tuple[Path, str]:
    """An environment with that torch and what the suite needs; its python and the torch version it imports."""
    args, slug = requirements(spec)
    served = served_versions(spec) if "--extra-index-url" in args else None
    env = ENVS / slug
    python = env / "bin" / "python"
    if not python.exists():
        proc = _uv(["uv", "venv", "-q", "-p", "3.11", str(env)], f"create {shown(env)}")
        if proc.returncode:
            reason = (lines(proc.stderr) or ["uv venv failed"])[-1]
            raise UsageError(f"cannot create {shown(env)}: {reason.removeprefix('error: ')}")
    _install(python, [*args, *SUITE_NEEDS], spec, env)
    proc = subprocess.run([str(python), "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    if proc.returncode:
        raise UsageError(f"the torch installed from {redacted(spec)} does not import: {_cause(proc.stderr)}")
    version = lines(proc.stdout)[-1]
    if served is not None and Version(version) not in served:
        raise UsageError(
            f"uv installed torch {version}, which index URL {redacted(spec)} does not serve; it came from elsewhere"
        )
    _install(python, companions(version), spec, env)  # op_db needs numpy (the one that goes with the torch)
    return python, version


def _install(python: Path, args: list[str], spec: str, env: Path) -> None:
    proc = _uv(["uv", "pip", "install", "-q", "--python", str(python), *args], f"install {redacted(spec)}")
    if proc.returncode:
        stderr = lines(proc.stderr)
        reason = next(
            (ln for ln in stderr if "no version" in ln or "not found" in ln.lower()), stderr[-1] if stderr else ""
        )
        shutil.rmtree(env, ignore_errors=True)
        raise UsageError(f"cannot install {redacted(spec)}: {reason.removeprefix('cause: ')}")


def newest_recorded(exclude: str | None = None, versions: list[str] | None = None) -> str:
    """The newest recorded version other than ``exclude`` (that one itself when it is the only one)."""
    if versions is None:
        versions = results.recorded_versions(results.RESULTS_DIR)
    others = [v for v in versions if exclude is None or Version(v) != Version(exclude)]
    candidates = others or versions
    if not candidates:
        raise UsageError("no recorded results to compare with; record some with: nox -s conformance")
    return candidates[-1]


def _cause(output: str) -> str:
    """The line of a command's output that says what went wrong: a usage error (``ERROR: ...``), else the last
    exception raised (also inside pytest's INTERNALERROR block), else a line that speaks of an error, else the last."""
    said = [ln.removeprefix("INTERNALERROR>").strip() for ln in lines(output)]
    said = [ln for ln in said if ln and not ln.startswith("=")]
    usage = [ln for ln in said if ln.startswith("ERROR: ")]
    raised = [ln for ln in said if EXCEPTION_LINE.match(ln)]
    errors = [ln for ln in said if re.search(r"error", ln, re.IGNORECASE)]
    return (usage[:1] or raised[-1:] or errors[:1] or said[-1:] or ["no output"])[0].removeprefix("E ").strip()[:300]


# "ModuleNotFoundError: No module named 'torch'", "E   RuntimeError: ...", "torch._dynamo.exc.Unsupported: ..."
EXCEPTION_LINE = re.compile(r"^(?:E\s+)?(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failed)\b:? ")


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
        reason = _cause(proc.stdout + proc.stderr)
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
    against = check_against(args.against, versions)[0] if args.against is not None else None

    python, _ = install(args.torch)
    with tempfile.TemporaryDirectory() as tmp:
        new = run_suite(python, Path(tmp), redacted(args.torch), pytest_args)
        version = Version(next(iter(new.values()))["torch"]).public
        against = against or newest_recorded(exclude=version, versions=versions)
        old = recorded_documents(against)  # read before anything is written: --against may be this version
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
                results.hold(str(written / "{device}.json"))  # not while a recording of that release runs
                results.write(whole, str(written / "{device}.json"))
    code = compare(new, old, against, f"torch {version} against recorded {against}:")
    if pages := release_pages(against, version):
        print(pages)
    if written:
        print(f"results written to {shown(written)}/")
    return code


if __name__ == "__main__":
    sys.exit(main())
