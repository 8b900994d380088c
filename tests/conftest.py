"""Fixtures of the harness's own tests: a small demo project with its own spec page and tests.

Each harness rule (unknown clause, absent device, version ranges, UNSPECIFIED
observations, the global-state guard, results files, bad input) is exercised
on a copy of the harness with this demo instead of the real suite.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config):
    # The suite's markers, which harness helpers under test (checks.by_mode) put on the parameters they build.
    config.addinivalue_line("markers", "clause(*ids): the spec clauses a conformance test proves")
    config.addinivalue_line("markers", "compiled_since(release): compile mode specified from this torch release")


DEMO_SPEC = """\
# Demo

:::{clause} DEMO-1
:level: MUST

Adding one in place bumps the version.
:::

:::{clause} DEMO-2
:level: UNSPECIFIED

What the version is after two additions.
:::

:::{clause} DEMO-3
:level: MUST
:until: 1.0

Something torch 0.x did.
:::

:::{clause} DEMO-4
:level: MUST
:needs: values

Adding one adds one.
:::

:::{clause} DEMO-5
:level: MUST
:devices: meta

Meta tensors have no data pointer.
:::

:::{example}
:clauses: DEMO-4

>>> torch.ones(1) + 1
tensor([2.])
:::
"""

DEMO_TESTS = """\
import pytest
import torch


@pytest.mark.clause("DEMO-1")
def test_version(device):
    x = torch.ones(1, device=device)
    x.add_(1)
    assert x._version == 1


@pytest.mark.clause("DEMO-2")
def test_observe(device, observe):
    x = torch.ones(1, device=device)
    x.add_(1)
    x.add_(1)
    observe("version", x._version)


@pytest.mark.clause("DEMO-3")
def test_old(device):
    assert False, "must never run on torch >= 1.0"


@pytest.mark.clause("DEMO-5")
def test_meta_only(device):
    assert torch.ones(1, device=device).data_ptr() == 0


@pytest.mark.clause("DEMO-4")
def test_values(device):
    assert (torch.ones(1, device=device) + 1).tolist() == [2.0]
"""


@pytest.fixture
def demo(tmp_path):
    """A copy of the harness with the demo spec page and tests instead of the real ones."""
    shutil.copytree(
        ROOT / "conformance" / "harness",
        tmp_path / "conformance" / "harness",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for name in ("conftest.py", "__init__.py"):
        shutil.copy(ROOT / "conformance" / name, tmp_path / "conformance" / name)
    (tmp_path / "conformance" / "tests").mkdir()
    (tmp_path / "conformance" / "tests" / "__init__.py").touch()
    shutil.copy(ROOT / "conformance" / "tests" / "test_examples.py", tmp_path / "conformance" / "tests")
    (tmp_path / "conformance" / "tests" / "test_demo.py").write_text(DEMO_TESTS)
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "demo.md").write_text(DEMO_SPEC)
    for name in ("release_check.py", "commands.py", "window.py", "cli.py", "suite.ini"):
        shutil.copy(ROOT / "conformance" / name, tmp_path / "conformance" / name)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def run(project, *args, env=None, paths=("conformance",)):
    """Run pytest on the demo project with --results r.json; return (exit code, output, results doc or None)."""
    out = project / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *paths, "-p", "no:cacheprovider", "--results", str(out), *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(project), **(env or {})},
    )
    doc = json.loads(out.read_text()) if out.exists() else None
    return proc.returncode, proc.stdout + proc.stderr, doc


def add_test(project, source):
    (project / "conformance" / "tests" / "test_extra.py").write_text(textwrap.dedent(source))


def command(project, argv, env=None):
    """Run any command in the demo project; return (exit code, stdout + stderr)."""
    proc = subprocess.run(
        list(argv),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(project), **(env or {})},
    )
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def serve():
    """serve(folder) -> the http://127.0.0.1:PORT URL of a local server of that folder, stopped after the test."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):  # not every request on the test's output
            pass

    servers = []

    def start(folder: Path) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def fresh_results():
    """The committed results, valid and fresh for the current spec and tests. A test that reads them asks for this
    fixture: stale or missing results then fail it with the results checker's own message (every stale clause and
    the command that refreshes it), the same from every test, never a skip or an error of the test's own."""
    from conformance.harness import results

    try:
        found, files = results.check_recorded()
    except results.ResultsError as exc:
        pytest.fail(f"recorded results: {exc}", pytrace=False)
    if not files:
        pytest.fail(f"recorded results: none under {results.RESULTS_DIR}; {results.REFRESH_HINT}", pytrace=False)
