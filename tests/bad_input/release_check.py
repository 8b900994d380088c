"""Bad input of the release check (conformance/release_check.py).

Every row fails before anything is installed: the torch argument, the recorded
results and --against are checked first. The demo project has no
conformance/results folder; a setup records valid demo results (built by the
demo's own harness, so they are fresh for its spec and tests) and then breaks
what its row needs broken.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from . import RELEASE_CHECK, Case

RESULTS = "conformance/results"
RECORDED = f"{RESULTS}/2.13.0/cpu.json"  # a file a setup records, which no refused command may change
WHEEL = "torch-2.16.0-cp311-cp311-linux_x86_64.whl"
FAKE_WHEEL = "torch-2.16.0-py3-none-any.whl"

# Every clause that can run on a present device passed once: a whole recording, not a partial run.
_RECORD = """\
import sys
from conformance.harness import registry, results
version, present = sys.argv[1], ["cpu", "meta"]
doc = results.build(registry.default(), version, "3.11.7", "demo", list(registry.DEVICES), present, {}, {})
for (device, mode), table in results.tables(doc):
    for entry in table.values():
        if device in present and entry["outcome"] == "not-run":
            entry.update(outcome="pass", tests=1, reasons=[])
results.write(doc, "conformance/results/" + version + "/{device}.json")
results.check_recorded()
"""


def record(project: Path, version: str = "2.13.0") -> None:
    """Valid recorded results of the demo for one version, one file per device (written and checked by the demo's
    own harness, so they are fresh for its spec and tests)."""
    subprocess.run(
        [sys.executable, "-c", _RECORD, version],
        cwd=project,
        check=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(project)},
    )


def _edit(project: Path, name: str, **changes) -> None:
    path = project / name
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}, indent=1, sort_keys=True) + "\n")


def non_version_folder(project: Path) -> None:
    record(project)
    (project / RESULTS / "old").mkdir()
    (project / RESULTS / "old" / "notes.txt").write_text("kept by hand\n")


def empty_version_folder(project: Path) -> None:
    record(project)
    (project / RESULTS / "2.99.0").mkdir()


def missing_device_file(project: Path) -> None:
    record(project)
    (project / RESULTS / "2.13.0" / "mps.json").unlink()


def not_utf8(project: Path) -> None:
    record(project)
    (project / RECORDED).write_bytes(b"\xff\xfe{not json}")


def not_json(project: Path) -> None:
    record(project)
    (project / RECORDED).write_text('{"schema_version": 1,')


def forged_fingerprint(project: Path) -> None:
    record(project)
    doc = json.loads((project / RECORDED).read_text())
    next(iter(doc["devices"]["cpu"]["eager"].values()))["fingerprint"] = "sha256:0"
    (project / RECORDED).write_text(json.dumps(doc))


def misplaced(project: Path) -> None:
    record(project)
    _edit(project, RECORDED, torch="2.12.1")


def text_wheel(project: Path) -> None:
    record(project)
    (project / WHEEL).write_text("not a wheel\n")


def fake_torch_wheel(project: Path) -> None:
    """A wheel that installs as torch 2.16.0 but holds no torch."""
    record(project)
    info = "torch-2.16.0.dist-info"
    files = {
        "torch/__init__.py": 'raise ImportError("this wheel holds no torch")\n',
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 2.16.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: a test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(project / FAKE_WHEEL, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)


def numpy_wheel(project: Path) -> None:
    record(project)
    with zipfile.ZipFile(project / "numpy-2.0.0-cp311-cp311-linux_x86_64.whl", "w") as wheel:
        wheel.writestr("numpy/__init__.py", "")


CASES: list[Case] = [
    Case(
        id="release-spec-not-a-version",
        what="release check of something that is no version, wheel or index URL",
        argv=RELEASE_CHECK + ("banana",),
        says="'banana' is neither a torch version, a wheel file nor an index URL",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-spec-empty",
        what="release check of an empty torch argument",
        argv=RELEASE_CHECK + ("",),
        says="'' is neither a torch version, a wheel file nor an index URL",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-spec-ftp-url",
        what="release check of an index URL that is not http(s):// or file://",
        argv=RELEASE_CHECK + ("ftp://x",),
        says="'ftp://x' is neither a torch version, a wheel file nor an index URL",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-spec-url-without-host",
        what="release check of an index URL without a host",
        argv=RELEASE_CHECK + ("https://",),
        says="index URL 'https://' names no host",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-wheel-missing",
        what="release check of a wheel file that does not exist",
        argv=RELEASE_CHECK + (WHEEL,),
        says=f"cannot read wheel {WHEEL}: no such file",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-wheel-not-a-zip",
        what="release check of a .whl file that is no wheel (not a zip archive)",
        argv=RELEASE_CHECK + (WHEEL,),
        says=f"cannot read wheel {WHEEL}: not a zip archive",
        exit=2,
        setup=text_wheel,
        keeps=(RECORDED, WHEEL),
    ),
    Case(
        id="release-wheel-not-torch",
        what="release check of a wheel of another package",
        argv=RELEASE_CHECK + ("numpy-2.0.0-cp311-cp311-linux_x86_64.whl",),
        says="is numpy, not torch",
        exit=2,
        setup=numpy_wheel,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-no-recorded-results",
        what="release check with no recorded results to compare with",
        argv=RELEASE_CHECK + ("2.16.0",),
        says="no recorded results to compare with: conformance/results/ does not exist",
        exit=2,
    ),
    Case(
        id="release-against-unknown",
        what="release check --against a version that is not recorded",
        argv=RELEASE_CHECK + ("2.16.0", "--against", "9.9.9"),
        says="no recorded results for torch 9.9.9; recorded versions: 2.13.0",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-against-not-a-version",
        what="release check --against something that is no version",
        argv=RELEASE_CHECK + ("2.16.0", "--against", "latest"),
        says="--against 'latest' is not a version; recorded versions: 2.13.0",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-against-without-value",
        what="release check --against with no version after it",
        argv=RELEASE_CHECK + ("2.16.0", "--against"),
        says="argument --against: expected one argument",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-folder-not-a-version",
        what="release check with a results folder that is no version",
        argv=RELEASE_CHECK + ("2.16.0",),
        says="conformance/results/old: not a torch version",
        exit=2,
        setup=non_version_folder,
        keeps=(RECORDED, f"{RESULTS}/old/notes.txt"),
    ),
    Case(
        id="release-folder-empty",
        what="release check with an empty version folder in the results",
        argv=RELEASE_CHECK + ("2.16.0",),
        says="conformance/results/2.99.0: no results for cpu, meta, cuda, mps",
        exit=2,
        setup=empty_version_folder,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-folder-missing-device",
        what="release check with a version folder that lacks one device file",
        argv=RELEASE_CHECK + ("2.16.0",),
        says="conformance/results/2.13.0: no results for mps",
        exit=2,
        setup=missing_device_file,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-results-not-utf8",
        what="release check with a recorded results file that is not UTF-8",
        argv=RELEASE_CHECK + ("2.16.0",),
        says="cpu.json: cannot read results: 'utf-8' codec can't decode byte 0xff",
        exit=2,
        setup=not_utf8,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-results-not-json",
        what="release check with a recorded results file that is not JSON",
        argv=RELEASE_CHECK + ("2.16.0",),
        says="cpu.json: cannot read results",
        exit=2,
        setup=not_json,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-results-forged-fingerprint",
        what="release check with a recorded outcome whose fingerprint is no fingerprint",
        argv=RELEASE_CHECK + ("2.16.0",),
        says="fingerprint 'sha256:0' is not 16 hexadecimal digits",
        exit=2,
        setup=forged_fingerprint,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-results-misplaced",
        what="release check with a recorded results file in another version's folder",
        argv=RELEASE_CHECK + ("2.16.0",),
        says="cpu.json: records torch 2.12.1 but lies in folder 2.13.0",
        exit=2,
        setup=misplaced,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-unknown-option",
        what="release check with an option it does not know (pytest's go after --)",
        argv=RELEASE_CHECK + ("2.16.0", "--bogus"),
        says="unrecognized arguments: --bogus",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-no-torch-argument",
        what="release check with no torch to check",
        argv=RELEASE_CHECK,
        says="the following arguments are required: torch",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-index-no-folder",
        what="release check of a file:// index URL whose folder does not exist (never PyPI instead)",
        argv=RELEASE_CHECK + ("file:///nonexistent/index",),
        says="index URL file:///nonexistent/index: no such folder",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-index-port-out-of-range",
        what="release check of an index URL whose port is out of range",
        argv=RELEASE_CHECK + ("http://127.0.0.1:99999/simple",),
        says="index URL 'http://127.0.0.1:99999/simple': Port out of range 0-65535",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
    ),
    Case(
        id="release-index-password-no-host",
        what="release check of an index URL with a password but no host",
        argv=RELEASE_CHECK + ("https://user:secret@/simple",),
        says="index URL 'https://***@/simple' names no host",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
        never=("secret",),
    ),
    Case(
        id="release-index-does-not-answer",
        what="release check of an index URL (with a password) where nothing answers",
        argv=RELEASE_CHECK + ("http://user:secret@127.0.0.1:9/simple",),
        says="index URL http://***@127.0.0.1:9/simple does not answer: [Errno 111] Connection refused",
        exit=2,
        setup=record,
        keeps=(RECORDED,),
        never=("secret",),
    ),
    Case(
        id="release-wheel-holds-no-torch",
        what="release check of a wheel that installs as torch but does not import",
        argv=RELEASE_CHECK + (FAKE_WHEEL,),
        says=f"the torch installed from {FAKE_WHEEL} does not import: ImportError: this wheel holds no torch",
        exit=2,
        setup=fake_torch_wheel,
        keeps=(RECORDED,),
    ),
]
