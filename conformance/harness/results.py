"""Results files: one JSON document per run, per-clause outcomes per device.

Schema (``schema_version`` 1)::

    {"schema_version": 1, "torch": "2.13.0+cpu", "python": "3.11.7",
     "platform": "Linux-...", "suite_hash": "sha256:...",
     "devices": {"cpu": {"DATA-1": {"outcome": "pass", "tests": 3,
                                     "reasons": [], "observed": {}}}}}

Outcomes: ``pass`` (every test of the clause ran and passed on that device),
``fail`` (at least one failed; ``reasons`` says why), ``not-applicable`` (the
clause's version range excludes this torch, or it needs values and the device
is ``meta``), ``not-run`` (the device is absent, or no test of the clause ran).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from packaging.version import InvalidVersion, Version

from . import registry as reg
from .devices import KNOWN

SCHEMA_VERSION = 1
OUTCOMES = ("pass", "fail", "not-applicable", "not-run")
TESTS_DIR = reg.ROOT / "conformance" / "tests"
RESULTS_DIR = reg.ROOT / "conformance" / "results"
REFRESH_HINT = "refresh them with: nox -s conformance"


def suite_hash(registry: reg.Registry | None = None) -> str:
    """Hash of what decides outcomes: the test files and the clauses/examples of the spec."""
    registry = registry or reg.default()
    h = hashlib.sha256()
    for path in sorted(TESTS_DIR.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for c in sorted(registry.clauses.values(), key=lambda c: c.id):
        h.update(repr((c.id, c.level, str(c.since), str(c.until), c.needs_values, c.withdrawn, c.devices)).encode())
    for e in registry.examples:
        h.update(repr((e.page, e.clauses, e.code)).encode())
    return "sha256:" + h.hexdigest()


def clause_outcome(clause: reg.Clause, device: str, torch_version: str, present: list[str], reports: list[dict]):
    """Outcome of one clause on one device from its test reports ({"outcome": passed|failed|skipped, ...})."""
    if not clause.applies_to(torch_version):
        return "not-applicable", [f"holds {clause.range_text()}; this is torch {torch_version}"]
    if excluded := clause.excludes_device(device):
        return "not-applicable", [excluded]
    if device not in present:
        return "not-run", [f"device {device} not present"]
    if not reports:
        return "not-run", ["no test of this clause ran"]
    failed = [r["reason"] for r in reports if r["outcome"] == "failed"]
    if failed:
        return "fail", failed
    skipped = [r["reason"] for r in reports if r["outcome"] == "skipped"]
    if skipped:
        return "not-run", skipped
    return "pass", []


def build(registry, torch_version, python, platform, devices, present, reports_by_key, observed) -> dict:
    """reports_by_key: {(clause_id, device): [report dicts]}; observed: {(clause_id, device): {name: value}}."""
    doc = {
        "schema_version": SCHEMA_VERSION,
        "torch": torch_version,
        "python": python,
        "platform": platform,
        "suite_hash": suite_hash(registry),
        "devices": {},
    }
    for device in devices:
        table = doc["devices"][device] = {}
        for cid, clause in sorted(registry.clauses.items()):
            reports = reports_by_key.get((cid, device), [])
            outcome, reasons = clause_outcome(clause, device, torch_version, present, reports)
            table[cid] = {
                "outcome": outcome,
                "tests": len(reports),
                "reasons": sorted(set(reasons)),
                "observed": observed.get((cid, device), {}),
            }
    return doc


def write(doc: dict, path_template: str) -> list[Path]:
    """Write one file, or one per device when the path holds ``{device}``."""
    if "{device}" not in path_template:
        docs = {Path(path_template): doc}
    else:
        docs = {
            Path(path_template.format(device=d)): {**doc, "devices": {d: table}} for d, table in doc["devices"].items()
        }
    for path, content in docs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return list(docs)


class ResultsError(ValueError):
    pass


def validate(doc: dict, where: str, registry: reg.Registry | None = None) -> None:
    """Check the invariants of one results document; raise ResultsError naming the first breach."""
    registry = registry or reg.default()

    def fail(msg):
        raise ResultsError(f"{where}: {msg}")

    if not isinstance(doc, dict):
        fail("not a JSON object")
    keys = {"schema_version", "torch", "python", "platform", "suite_hash", "devices"}
    if set(doc) != keys:
        fail(f"keys {sorted(doc)} differ from {sorted(keys)}")
    if doc["schema_version"] != SCHEMA_VERSION:
        fail(f"schema_version {doc['schema_version']!r}, expected {SCHEMA_VERSION}")
    try:
        Version(doc["torch"])
    except (InvalidVersion, TypeError):
        fail(f"torch {doc['torch']!r} is not a version")
    if not isinstance(doc["devices"], dict) or not doc["devices"]:
        fail("devices must be a non-empty object")
    for device, table in doc["devices"].items():
        if device not in KNOWN:
            fail(f"unknown device {device!r}")
        if not isinstance(table, dict):
            fail(f"devices.{device} is not an object")
        if missing := sorted(set(registry.clauses) - set(table)):
            fail(f"{device}: clauses missing: {', '.join(missing)}")
        if extra := sorted(set(table) - set(registry.clauses)):
            fail(f"{device}: unknown clauses: {', '.join(extra)}")
        for cid, entry in table.items():
            if not isinstance(entry, dict) or set(entry) != {"outcome", "tests", "reasons", "observed"}:
                fail(f"{device}.{cid}: entry must have exactly outcome, tests, reasons, observed")
            if entry["outcome"] not in OUTCOMES:
                fail(f"{device}.{cid}: outcome {entry['outcome']!r} not one of {', '.join(OUTCOMES)}")
            if entry["outcome"] in ("fail", "not-run", "not-applicable") and not entry["reasons"]:
                fail(f"{device}.{cid}: outcome {entry['outcome']} needs a reason")
            if entry["outcome"] == "pass" and entry["tests"] < 1:
                fail(f"{device}.{cid}: pass with no test run")


def load(path: Path, registry: reg.Registry | None = None) -> dict:
    doc = _read(path)
    validate(doc, str(path), registry)
    return doc


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: cannot read results: {exc}") from None


def check_file(path: Path, registry: reg.Registry, current_hash: str) -> dict:
    """One committed results file: fresh (checked first, it names the refresh command), valid, well placed."""
    doc = _read(path)
    if isinstance(doc, dict) and "suite_hash" in doc and doc["suite_hash"] != current_hash:
        raise ResultsError(f"{path}: stale, recorded with another version of the tests; {REFRESH_HINT}")
    validate(doc, str(path), registry)
    if Version(doc["torch"]).public != path.parent.name:
        raise ResultsError(f"{path}: records torch {doc['torch']} but lies in folder {path.parent.name}")
    if list(doc["devices"]) != [path.stem]:
        raise ResultsError(f"{path}: must hold exactly device {path.stem}, holds {list(doc['devices'])}")
    return doc


def recorded_versions(results_dir: Path = RESULTS_DIR) -> list[str]:
    """The recorded torch versions, oldest first; a folder that is no version or lacks a device file is an error."""
    versions = []
    for folder in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        try:
            version = Version(folder.name)
        except InvalidVersion:
            raise ResultsError(f"{folder}: not a torch version; results/ holds one folder per version") from None
        if missing := [d for d in KNOWN if not (folder / f"{d}.json").is_file()]:
            raise ResultsError(f"{folder}: no results for {', '.join(missing)}; a recording writes one file per device")
        versions.append((version, folder.name))
    return [name for _, name in sorted(versions)]


def recorded_files(results_dir: Path = RESULTS_DIR) -> list[Path]:
    return [results_dir / v / f"{d}.json" for v in recorded_versions(results_dir) for d in KNOWN]


def check_recorded(results_dir: Path = RESULTS_DIR, registry: reg.Registry | None = None) -> list[Path]:
    """Validate every committed results file, its folder naming, and its freshness; raise on the first problem."""
    registry = registry or reg.default()
    current = suite_hash(registry)
    files = recorded_files(results_dir)
    for path in files:
        check_file(path, registry, current)
    return files
