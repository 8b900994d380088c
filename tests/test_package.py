"""The installable package: the wheel holds what the suite needs, and `torch-update-spec` runs from it alone.

The wheel is built here (uv build) and installed into a fresh virtual environment that sees this environment's
packages (torch, pytest) through a .pth file, but not the clone: the command runs in a temporary folder, without
PYTHONPATH, and the test checks that the package it imports is the installed one.
"""

import configparser
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import tomllib

from conformance.cli import nearest
from conformance.commands import UsageError
from conformance.harness import results

ROOT = Path(__file__).resolve().parents[1]
CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    assert shutil.which("uv"), "uv is needed to build the wheel (pip install uv)"
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(["uv", "build", "--wheel", "-q", "-o", str(out)], cwd=ROOT, check=True, timeout=300)
    (built,) = out.glob("torch_update_spec-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The bin folder of a fresh environment with the wheel installed (no dependency installed: they are here)."""
    env = tmp_path_factory.mktemp("env")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    site = next((env / "lib").glob("python3*/site-packages"))
    here = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "here.pth").write_text("".join(f"{p}\n" for p in here))
    python = env / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        timeout=300,
    )
    return env / "bin"


def cli(installed: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(installed / "torch-update-spec"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=CLEAN_ENV,
        timeout=900,
    )


@pytest.mark.usefixtures("fresh_results")
def test_the_wheel_holds_every_spec_page_and_recorded_result_and_no_torch(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    pages = {f"conformance/spec/{p.name}" for p in (ROOT / "spec").glob("*.md")}
    recorded = {str(p.relative_to(ROOT)) for p in results.recorded_files()}
    suite = {str(p.relative_to(ROOT)) for p in (ROOT / "conformance" / "tests").glob("test_*.py")}
    assert pages and recorded and suite
    needed = pages | recorded | suite | {"conformance/suite.ini", "conformance/errata.md"}  # errata: examples too
    assert not needed - names, sorted(needed - names)[:5]
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert not [line for line in metadata.splitlines() if line.startswith("Requires-Dist: torch")]


def test_the_installed_package_is_itself_and_does_not_import_torch(installed, tmp_path):
    code = "import sys, conformance.cli as c; print(c.__file__); print('torch' in sys.modules)"
    out = subprocess.run(
        [str(installed / "python"), "-c", code], cwd=tmp_path, capture_output=True, text=True, env=CLEAN_ENV
    )
    where, imported = out.stdout.split()
    assert Path(where).is_relative_to(installed.parent) and imported == "False", out.stdout + out.stderr


@pytest.mark.usefixtures("fresh_results")  # it diffs against the recorded release
def test_run_then_diff_from_the_installed_package(installed, tmp_path):
    """A whole eager run on cpu passes, writes valid results, and matches the recorded release of this torch."""
    run = cli(
        installed,
        "run",
        "--device",
        "cpu",
        "--mode",
        "eager",
        "--results",
        "r.json",
        "--",
        "-q",
        "-n",
        "2",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert not results.partial({**doc, "devices": {"cpu": {"eager": doc["devices"]["cpu"]["eager"]}}})
    same = cli(installed, "diff", cwd=tmp_path)
    assert (same.returncode, same.stderr) == (0, ""), same.stdout[-3000:]
    assert "no clause changed its outcome" in same.stdout
    older = cli(installed, "diff", "--against", "2.0.1", cwd=tmp_path)
    assert older.returncode == 1 and "newly" in older.stdout, older.stdout[-2000:] + older.stderr


def test_the_suite_settings_of_the_package_are_those_of_the_clone():
    ini = configparser.ConfigParser()
    ini.read(ROOT / "conformance" / "suite.ini")
    clone = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert ini["pytest"]["minversion"] == clone["minversion"]
    assert ini["pytest"]["addopts"].split() == clone["addopts"]
    assert ini["pytest"]["filterwarnings"].split("\n")[1:] == clone["filterwarnings"]


@pytest.mark.parametrize(
    "torch_version, expected",
    [
        ("2.13.0+cpu", "2.13.0"),
        ("2.13.0+rocm6.2", "2.13.0"),  # a local build: the same public version
        ("2.4.0", "2.4.1"),  # an older patch: the recorded patch of its minor release (ranges are minor releases)
        ("2.13.1", "2.13.0"),
        ("2.15.0rc1", "2.15.0"),  # a release candidate: its release
        ("2.16.0a0+git1234abc", "2.15.0"),  # a nightly of the next minor: the newest older release
    ],
)
def test_the_nearest_recorded_release(torch_version, expected):
    versions = ["2.0.1", "2.4.1", "2.12.1", "2.13.0", "2.14.1", "2.15.0"]
    assert nearest(torch_version, versions)[0] == expected


def test_a_torch_older_than_every_recorded_release_is_refused():
    with pytest.raises(UsageError, match="no recorded release as old as torch 1.13.1"):
        nearest("1.13.1", ["2.0.1", "2.1.2"])


def test_a_device_the_recording_did_not_have_is_not_compared_but_named():
    """A GPU run against a release recorded on cpu and meta: the cuda tables are left out, not "newly passing"."""
    from conformance.harness import diff

    recorded_doc = results.load(results.RESULTS_DIR / "2.13.0" / "cuda.json")
    run_doc = json.loads(json.dumps(recorded_doc))
    for entry in run_doc["devices"]["cuda"]["eager"].values():
        entry.update(outcome="pass", tests=1, reasons=[])
    assert diff.compare(recorded_doc, run_doc) == []
    assert diff.unrecorded(recorded_doc, run_doc) == [("cuda", "eager")]
