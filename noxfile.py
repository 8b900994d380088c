"""Sessions: conformance (one per torch of the support window), tests, docs, lint.

nox -s conformance                      # every torch of the window: its stale clauses (fingerprints)
nox -s conformance -- --all             # every torch of the window: every clause
nox -s "conformance(torch='2.0.1')"     # one version
nox -s conformance -- --device cpu      # arguments after -- go to pytest
nox -s "ranges(torch='2.5.1')"          # only the check that version ranges are tight, on one version
nox -s page -- inplace                  # the short loop for one spec page (docs/contributing.md)
"""

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import nox
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).parent))  # nox does not put the project on the path
from conformance.harness import fingerprints as fp  # noqa: E402
from conformance.harness import registry as reg  # noqa: E402
from conformance.harness import results, status  # noqa: E402
from conformance.window import TESTS_TORCH, TORCH_WINDOW, companions  # noqa: E402

# Environments with compiled bytecode: these machines set PYTHONDONTWRITEBYTECODE=1, and without .pyc files
# every `import torch` recompiles its sources (about 4 s instead of 2.3 s).
os.environ.setdefault("UV_COMPILE_BYTECODE", "1")
nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"  # a warm re-run reuses each environment and installs nothing new
nox.options.sessions = ["tests", "lint"]

PYPROJECT = nox.project.load_toml("pyproject.toml")
PYTHON = "3.11"
RESULTS = Path("conformance/results")
PYTEST = ("python", "-m", "pytest", "-p", "no:cacheprovider")  # the suite, from this checkout
MODES = ",".join(reg.MODES)  # a recording and the range checks run every mode (harness/modes.py)


# What the suite needs beside torch: the package's own dependencies (pyproject.toml), one list for both.
SUITE_NEEDS = PYPROJECT["project"]["dependencies"]
# Disk one torch release takes, environment + uv's cache of its wheels: from PyPI (CUDA builds) 4.3-5.4 GB of
# environment on 2.0.1-2.15.0 plus the cached wheels; CPU-only 2.13.0, 0.75 GB installed + a 0.19 GB wheel.
GB_PER_RELEASE = {"pypi": 8, "cpu": 2}


def install_torch(session, version: str, *extra: str) -> None:
    """Install a torch release (and what the suite needs); a failure ends the session with one line."""
    try:
        session.install(f"torch=={version}", *companions(version), *extra)
    except nox.command.CommandFailed:
        index = os.environ.get("UV_TORCH_BACKEND") if session.venv_backend == "uv" else None  # pip ignores it
        where = f"PyTorch's {index} index (UV_TORCH_BACKEND={index}; unset it to use PyPI)" if index else "PyPI"
        session.error(f"cannot install torch=={version} from {where}: unknown version, or no network")


def disk_advice(session, version: str) -> None:
    """Before a release is installed: warn when the free disk is short of what it will take, and say what helps."""
    location = Path(session.virtualenv.location)
    if any(location.glob("lib/python*/site-packages/torch")):
        return  # installed already: a re-run takes no new disk
    wheels = "cpu" if os.environ.get("UV_TORCH_BACKEND") == "cpu" else "pypi"
    needed = GB_PER_RELEASE[wheels]
    free = shutil.disk_usage(location.parent if location.parent.exists() else ".").free / 1e9
    if free < 2 * needed:
        advice = ["CONFORMANCE_LOW_DISK=1 removes each environment once its results are written"]
        if wheels == "pypi":
            advice.append("UV_TORCH_BACKEND=cpu takes CPU-only wheels (about 2 GB a release) from PyTorch's index")
        session.warn(
            f"{free:.1f} GB free; torch {version} will take about {needed} GB ({wheels} wheels); " + "; ".join(advice)
        )


@nox.session(python=PYTHON)
@nox.parametrize("torch", TORCH_WINDOW)
def conformance(session, torch):
    """Bring one torch release's recorded results up to date, and check that version ranges are tight: only the
    clauses whose outcomes are stale or missing are run again (harness/fingerprints.py), every clause when nothing
    is recorded or with ``-- --all``, and those of one spec page too with ``-- --page NAME``."""
    args, page = own_options(session)
    target = RESULTS / Version(torch).public / "{device}.json"
    try:
        stale = None if "--all" in session.posargs else stale_clauses(str(target))
    except results.ResultsError as exc:
        session.error(f"{exc}; record the whole suite again: nox -s \"conformance(torch='{torch}')\" -- --all")
    if page and stale is not None:
        stale = sorted({*stale, *page}, key=results.natural)
    if stale == []:
        session.log(f"torch {torch}: every recorded outcome is fresh, nothing to run (-- --all records it again)")
        RUN_TIMES.append(0.0)
        return
    disk_advice(session, torch)
    install_torch(session, torch, *SUITE_NEEDS)
    # Only the stale clauses: their tests all run (a partial run of them is refused, --record), on every device and
    # mode, and their outcomes are merged into the recorded files, all of them or none.
    # Only the modules that hold their tests are collected: most of a pytest start is collecting the whole suite.
    only = ["--clauses", ",".join(stale), *test_modules(stale)] if stale else []
    what = (
        f"{len(stale)} stale clauses ({', '.join(stale[:8])}{' ...' if len(stale) > 8 else ''})"
        if stale
        else "every clause"
    )
    session.log(f"torch {torch}: {what} to run, in every mode ({MODES}), on every device present; {progress(torch)}")
    before = results.stamps(results.targets(str(target)).values())
    started = time.monotonic()
    try:
        # --record: a partial run (-k, -x, a narrower path ...) is refused, never written over the recorded results.
        # Both modes: the update steps as written and through torch.compile (conformance/harness/modes.py).
        suite = only or ["conformance"]
        if session.run(*PYTEST, "--record", "--mode", MODES, "--results", str(target), *suite, *args) is None:
            return  # nox --install-only: the environment is ready, nothing was meant to run
        # Exit 0 and nothing written (a test that ends the process, a plugin blocked): the old files must not stand
        # as this recording.
        if unwritten := sorted(set(before) - set(results.rewritten(before))):
            session.error(f"the suite exited 0 but did not write {unwritten[0]}: the recorded results stand as before")
        if stale is None:
            check_ranges(session, "conformance", *workers(args))
        elif outside := outside_their_range(stale, torch):
            check_ranges(session, "--clauses", ",".join(outside), *test_modules(outside), *workers(args))
        else:
            session.log(f"torch {torch}: no range check: no stale clause has a range that leaves this release out")
        RUN_TIMES.append(time.monotonic() - started)
    finally:
        if os.environ.get("CONFORMANCE_LOW_DISK"):
            drop_environment(session)


def own_options(session) -> tuple[list[str], list[str]]:
    """The pytest arguments of a conformance session, without its own options (--all, --page NAME), and the
    clauses of the page that --page names."""
    args, clauses = list(session.posargs), []
    if "--all" in args:
        args.remove("--all")
    if "--page" in args:
        i = args.index("--page")
        name = args[i + 1] if i + 1 < len(args) else ""
        del args[i : i + 2]
        registry = reg.default()
        clauses = [cid for cid, c in registry.clauses.items() if c.page == name]
        if not clauses:
            session.error(f"--page {name!r}: no such spec page; pages: {', '.join(registry.pages())}")
    return args, clauses


RUN_TIMES: list[float] = []  # seconds each conformance session of this nox run took (0: nothing stale)


def progress(torch: str) -> str:
    """Where a window run stands before one release: how many are done, the time so far, an estimate of the rest
    (as long a release as the last one that ran something: later releases compile slower, and 2.0.1 compiles
    nothing, so a mean of all would say too little)."""
    done, left = len(RUN_TIMES), len(TORCH_WINDOW) - TORCH_WINDOW.index(torch)
    ran = [t for t in RUN_TIMES if t]
    estimate = f", about {ran[-1] * left / 60:.0f} min left" if ran else ""
    return f"{done} releases done in {sum(RUN_TIMES) / 60:.1f} min{estimate}"


def test_modules(clauses: list[str]) -> list[str]:
    """The test modules that hold tests of these clauses (fingerprints.units), as pytest paths. Leaving the others
    out is safe: the manifest still expects every test of each clause, and a clause one of whose tests was not
    collected is not-run, which --record refuses."""
    return sorted(path.relative_to(Path.cwd()).as_posix() for path in fp.modules_of(clauses))


def outside_their_range(clauses: list[str], torch: str) -> list[str]:
    """The clauses whose range check has something to run on this release: normative, with a version range that
    leaves it out (inside its range, or UNSPECIFIED, a clause's verdict needs no test: Recorder.range_verdicts)."""
    registry = reg.default()
    return [cid for cid in clauses if (c := registry.clauses[cid]).ranged and c.normative and not c.applies_to(torch)]


def stale_clauses(target: str) -> list[str] | None:
    """The clauses of the spec whose recorded outcomes at ``target`` are stale or missing (none: []); None when
    there is no recording to bring up to date. A clause no longer in the spec is dropped from the files here, with
    no torch to run."""
    registry = reg.default()
    paths = results.targets(target).values()
    if not all(path.is_file() for path in paths):
        return None
    stale = set()
    for path in paths:
        stale.update(results.stale(results.load(path, registry), registry))
    if removed := stale - set(registry.clauses):
        docs = list(results.mergeable(target, registry).values())
        whole = {**docs[0], "devices": {d: t for doc in docs for d, t in doc["devices"].items()}}
        results.write(results.merge(whole, target, [], registry), target)
        print(f"nox > {target}: dropped {', '.join(sorted(removed))}, no longer in the spec")
    return sorted(stale - removed, key=results.natural)


@nox.session(python=PYTHON)
@nox.parametrize("torch", TORCH_WINDOW)
def ranges(session, torch):
    """Check on one torch release that the version ranges are tight (conformance does this after recording)."""
    install_torch(session, torch, *SUITE_NEEDS)
    check_ranges(session, "conformance", *session.posargs)


def check_ranges(session, *args: str) -> None:
    """Tests of a clause with a version range must fail on this release when it is outside the range.

    Their failures are the expected outcome, so no traceback is formatted or printed (`--tb=no`): on 2.13.0 that
    took the whole check from 168 s to 115 s (`-n 2`); the verdicts are the table at its end."""
    session.run(*PYTEST, "-q", "--tb=no", "--ignore-ranges", "--device", "cpu,meta", "--mode", MODES, *args)


def workers(args: list[str]) -> list[str]:
    """The pytest-xdist option among pytest arguments (-n 2, -n=auto, -n2, --numprocesses ...), for the range check
    to run as parallel as the recording before it."""
    for i, arg in enumerate(args):
        if arg in ("-n", "--numprocesses"):
            return args[i : i + 2]
        if arg.startswith(("-n", "--numprocesses=")):
            return [arg]
    return []


def drop_environment(session) -> None:
    """Free the disk one torch takes (about 5 GB of environment and uv cache) once its results are written."""
    packages = session.run("uv", "pip", "freeze", "--python", session.virtualenv.location, silent=True, external=True)
    names = [line.split("==")[0] for line in packages.splitlines() if "==" in line]
    session.run("uv", "cache", "clean", *names, external=True, silent=True)
    shutil.rmtree(session.virtualenv.location)
    session.log(f"removed {session.virtualenv.location} and the cached wheels of {len(names)} packages")


def torch_wheel(session, version: str) -> Path:
    """The wheel file of a torch release: where pip finds it on this disk (find-links), else downloaded once into
    the session's folder. A copy of a local wheel costs 200 MB of disk (CI once ran out of it there)."""
    report = Path(session.virtualenv.location) / "torch-wheel.json"
    ask = ("python", "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed", "--no-deps", "--report")
    session.run_install(*ask, str(report), f"torch=={version}", silent=True)
    url = json.loads(report.read_text(encoding="utf-8"))["install"][0]["download_info"]["url"]
    if url.startswith("file://"):
        return Path(urllib.parse.unquote(urllib.parse.urlparse(url).path))
    wheels = Path(session.virtualenv.location) / "wheels"
    download = ("python", "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", "-d", str(wheels))
    session.run_install(*download, f"torch=={version}")
    return next(wheels.glob(f"torch-{version}*.whl"))


@nox.session(python=PYTHON, venv_backend="venv")
def tests(session):
    """The project's own tests: lint, harness self-tests (the wheel too), the suite on one torch, the docs build."""
    # pip (not uv) so that a machine that keeps torch wheels locally (pip's find-links) is used.
    groups = nox.project.dependency_groups(PYPROJECT, "dev", "docs", "lint")
    install_torch(session, TESTS_TORCH, *SUITE_NEEDS, *groups)
    # The torch wheel these tests run on: the release check's end-to-end tests install it (wheel, local index).
    session.env["CONFORMANCE_TORCH_WHEEL"] = str(torch_wheel(session, TESTS_TORCH))
    lint_checks(session)
    session.run("python", "-m", "pytest", "tests", "-p", "no:cacheprovider", "-n", "2", *session.posargs)
    # The whole suite on that torch, as the README's release check of its wheel: it must find no clause changed
    # against the recorded results of that release.
    session.run(
        "python",
        "conformance/release_check.py",
        session.env["CONFORMANCE_TORCH_WHEEL"],
        "--no-write",
        "--against",
        TESTS_TORCH,
        "--",
        "-n",
        "2",
    )
    build_docs(session)


@nox.session(python=PYTHON, venv_backend="venv")
def page(session):
    """The short loop for one spec page (nox -s page -- inplace): its clauses' format, quantifiers, scope and level
    checks, its tests on both devices and modes, its sabotage cases, and a draft of the site, on the torch of the
    tests session."""
    if len(session.posargs) != 1:
        session.error("name one spec page: nox -s page -- inplace (pages: " + ", ".join(reg.default().pages()) + ")")
    name = session.posargs[0].removeprefix("spec/").removesuffix(".md")
    if name not in reg.default().pages():
        session.error(f"no spec page {name!r}; pages: {', '.join(reg.default().pages())}")
    groups = [*nox.project.dependency_groups(PYPROJECT, "dev"), *nox.project.dependency_groups(PYPROJECT, "docs")]
    install_torch(session, TESTS_TORCH, *SUITE_NEEDS, *groups)
    # The site is built on the second core while the tests run on the first: a draft (its stale clauses, the page's
    # new or changed ones, shown as not run), incremental from the loop's last build.
    log = Path("_build/page.log")
    log.parent.mkdir(exist_ok=True)
    draft = [str(Path(session.bin, "sphinx-build")), "-W", "--keep-going", "-q", "-b", "html"]
    draft += ["-d", "_build/page-doctrees", ".", "_build/page"]
    session.log(f"building a draft of the site in _build/page (output: {log})")
    with log.open("w") as out:
        site = subprocess.Popen(draft, stdout=out, stderr=subprocess.STDOUT, env=os.environ | {status.DRAFT_ENV: "1"})
    ids = [c.id for c in reg.default().clauses.values() if c.page == name and not c.withdrawn]
    # The spec checks parametrized by clause (test_x[INPLACE-1]): format, quantifiers, scope, levels.
    by_clause = " or ".join(f"{cid}]" for cid in ids)
    session.run(*PYTEST, "tests/test_populations.py", "tests/test_levels.py", "-q", "-k", by_clause)
    tests = f"conformance/tests/test_{name}.py"
    if Path(tests).is_file():
        # One process: two xdist workers would each pay torch.compile's first compiles (twice as slow here).
        session.run(*PYTEST, tests, "--device", "cpu,meta", "--mode", MODES, "-q", "-rfE")
    # Its sabotage cases (tests/sabotage/<page>.py), each a pytest of its own: test_x[inplace:case].
    session.run(*PYTEST, "tests/test_sensitivity.py", "-q", "-k", f"clauses_fail and {name}:")
    if site.wait():
        session.error(f"the draft of the site failed:\n{log.read_text()[-3000:]}")
    session.log(f"draft of the site: {Path('_build/page/spec', name + '.html')}")


def build_docs(session) -> None:
    session.run("sphinx-build", "-W", "--keep-going", "-q", "-b", "html", ".", "_build/html")
    session.log("site built in _build/html/docs/index.html")


@nox.session(python=PYTHON)
def docs(session):
    """Build the site with warnings as errors."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "docs"))
    build_docs(session)


@nox.session(python=PYTHON)
def lint(session):
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    lint_checks(session)


def lint_checks(session) -> None:
    """ruff, and actionlint on every GitHub workflow (its configuration: .github/actionlint.yaml)."""
    session.run("ruff", "check", ".")
    session.run("actionlint")  # every workflow in .github/workflows
