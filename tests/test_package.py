"""The installable package: the wheel holds what the suite needs, and `torch-update-spec` runs from it alone.

The wheel is built here (uv build) and installed into a fresh virtual environment that sees this environment's
packages (torch, pytest) through a .pth file, but not the clone: the command runs in a temporary folder.
"""

import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from conformance.cli import nearest
from conformance.harness import results
from conformance.release_check import UsageError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    assert shutil.which("uv"), "uv is needed to build the wheel (pip install uv)"
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(["uv", "build", "--wheel", "-q", "-o", str(out)], cwd=ROOT, check=True)
    (built,) = out.glob("torch_update_spec-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The bin folder of a fresh environment with the wheel installed (no dependency installed: they are here)."""
    env = tmp_path_factory.mktemp("env")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    (site / "here.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(env / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        check=True,
    )
    return env / "bin"


def test_the_wheel_holds_every_spec_page_and_recorded_result_and_no_torch(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    pages = {f"conformance/spec/{p.name}" for p in (ROOT / "spec").glob("*.md")}
    recorded = {str(p.relative_to(ROOT)) for p in results.recorded_files()}
    suite = {str(p.relative_to(ROOT)) for p in (ROOT / "conformance" / "tests").glob("test_*.py")}
    assert pages and recorded and suite
    assert not (pages | recorded | suite) - names, sorted((pages | recorded | suite) - names)[:5]
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert not [line for line in metadata.splitlines() if line.startswith("Requires-Dist: torch")]


def test_importing_the_package_does_not_import_torch():
    code = "import sys, conformance.cli; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_run_then_diff_from_the_installed_package(installed, tmp_path):
    """A whole eager run on cpu passes, writes valid results, and matches the recorded release of this torch."""
    command = [str(installed / "torch-update-spec")]
    run = subprocess.run(
        [*command, "run", "--device", "cpu", "--mode", "eager", "--results", "r.json", "--", "-q", "-n", "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert not results.partial({**doc, "devices": {"cpu": {"eager": doc["devices"]["cpu"]["eager"]}}})
    diff = subprocess.run([*command, "diff"], cwd=tmp_path, capture_output=True, text=True)
    assert (diff.returncode, diff.stderr) == (0, ""), diff.stdout[-3000:]
    assert "no clause changed its outcome" in diff.stdout
    against = subprocess.run([*command, "diff", "--against", "2.0.1"], cwd=tmp_path, capture_output=True, text=True)
    assert against.returncode == 1 and "newly" in against.stdout, against.stdout[-2000:] + against.stderr


@pytest.mark.parametrize(
    "torch_version, expected",
    [
        ("2.13.0+cpu", "2.13.0"),
        ("2.13.0+rocm6.2", "2.13.0"),  # a local build: the same public version
        ("2.16.0a0+git1234abc", "2.15.0"),  # a nightly: the newest older release
        ("2.15.0rc1", "2.14.1"),  # a release candidate is older than its release
        ("2.13.1", "2.13.0"),
    ],
)
def test_the_nearest_recorded_release(torch_version, expected):
    versions = ["2.0.1", "2.12.1", "2.13.0", "2.14.1", "2.15.0"]
    assert nearest(torch_version, versions)[0] == expected


def test_a_torch_older_than_every_recorded_release_is_refused():
    with pytest.raises(UsageError, match="no recorded release as old as torch 1.13.1"):
        nearest("1.13.1", ["2.0.1", "2.1.2"])
