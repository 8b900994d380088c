"""Check a new torch release against the newest recorded results, in one command.

    python conformance/release_check.py 2.16.0              # a PyPI version (pre-releases too)
    python conformance/release_check.py ./torch-2.16.0-....whl
    python conformance/release_check.py https://download.pytorch.org/whl/nightly/cpu   # an index URL
    python conformance/release_check.py 2.15.0 --against 2.0.1

Installs that torch into its own environment (uv), runs the suite on every
present device, writes conformance/results/<version>/<device>.json, and prints
what changed against the newest recorded version (or --against VERSION).
Exit status: 0 nothing changed, 1 something changed, 2 usage error (a version
the index does not have, an unreadable wheel, stale recorded results, ...).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from packaging.version import InvalidVersion, Version  # noqa: E402

from conformance.harness import diff, results  # noqa: E402
from conformance.window import numpy_requirement  # noqa: E402

ENVS = ROOT / ".nox" / "release-check"


class UsageError(Exception):
    pass


def requirements(spec: str) -> tuple[list[str], str]:
    """uv pip install arguments for a torch spec, and a slug naming its environment."""
    if spec.startswith(("http://", "https://", "file://")):
        return ["--pre", "torch", "--index-url", spec], "index-" + re.sub(r"\W+", "-", spec)[-40:]
    if spec.endswith(".whl"):
        path = Path(spec).resolve()
        if not path.is_file():
            raise UsageError(f"cannot read wheel {spec}")
        return [str(path)], path.stem
    try:
        version = Version(spec)
    except InvalidVersion:
        raise UsageError(f"{spec!r} is neither a torch version, a wheel file nor an index URL") from None
    return [f"torch=={spec}", numpy_requirement(spec), "--prerelease", "allow"], f"torch-{version}"


def install(spec: str) -> Path:
    args, slug = requirements(spec)
    env = ENVS / slug
    python = env / "bin" / "python"
    if not python.exists():
        subprocess.run(["uv", "venv", "-q", "-p", "3.11", str(env)], check=True)
    proc = subprocess.run(
        ["uv", "pip", "install", "-q", "--python", str(python), *args, "pytest", "pytest-xdist", "packaging"],
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        reason = next(
            (ln for ln in lines if "no version" in ln or "not found" in ln.lower()), lines[-1] if lines else ""
        )
        shutil.rmtree(env, ignore_errors=True)
        raise UsageError(f"cannot install {spec}: {reason.removeprefix('cause: ')}")
    return python


def newest_recorded(exclude: str | None = None) -> str:
    versions = sorted((p.name for p in results.RESULTS_DIR.iterdir() if p.is_dir()), key=Version)
    versions = [v for v in versions if v != exclude] or versions
    if not versions:
        raise UsageError("no recorded results to compare with; run nox -s conformance first")
    return versions[-1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("torch", help="a PyPI version, a wheel file, or an index URL")
    parser.add_argument("--against", metavar="VERSION", help="recorded version to compare with (default: newest)")
    parser.add_argument("--no-write", action="store_true", help="do not write the new results into the tree")
    args, pytest_args = parser.parse_known_args(argv)
    try:
        requirements(args.torch)  # a malformed argument is reported before anything else is done
        results.check_recorded()
        python = install(args.torch)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "{device}.json"
            print(f"running the suite on torch {args.torch} ...", flush=True)
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
                    str(out),
                    *pytest_args,
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            files = sorted(Path(tmp).glob("*.json"))
            if not files:
                raise UsageError("the suite wrote no results:\n" + (proc.stdout + proc.stderr)[-2000:])
            new = {p.stem: results.load(p) for p in files}
            version = Version(next(iter(new.values()))["torch"]).public
            against = args.against or newest_recorded(exclude=version)
            if not (results.RESULTS_DIR / against).is_dir():
                raise UsageError(f"no recorded results for torch {against}")
            if not args.no_write:
                for device in new:
                    target = results.RESULTS_DIR / version / f"{device}.json"
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(Path(tmp) / f"{device}.json", target)
    except (UsageError, results.ResultsError) as exc:
        print(f"release check: {exc}", file=sys.stderr)
        return 2
    changes = []
    for device, doc in new.items():
        recorded = results.RESULTS_DIR / against / f"{device}.json"
        if recorded.exists():
            changes += diff.compare(json.loads(recorded.read_text()), doc)
    print(f"torch {version} against recorded {against}:")
    print(diff.report(changes))
    if not args.no_write:
        print(f"results written to {results.RESULTS_DIR.relative_to(ROOT) / version}/")
    return 1 if changes else 0


if __name__ == "__main__":
    sys.exit(main())
