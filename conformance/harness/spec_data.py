"""The spec as data: every clause with its metadata and its recorded outcome per torch release, device and mode.

The docs build publishes it as spec.json beside the site (docs/_ext/spec_json.py); its JSON Schema is
conformance/schemas/spec.schema.json, and tests/test_spec_data.py validates one against the other.
"""

from __future__ import annotations

import json
from pathlib import Path

from packaging.version import Version

from . import fingerprints, results, status
from . import registry as reg
from .devices import KNOWN as DEVICES
from .modes import KNOWN as MODES

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "spec.schema.json"


def outcomes(clause_id: str) -> dict[str, dict[str, dict[str, str]]]:
    """{torch version: {device: {mode: outcome}}} from the recorded results (absent devices: not-run)."""
    table: dict[str, dict[str, dict[str, str]]] = {}
    for (version, device), doc in sorted(status.recorded().items(), key=lambda kv: (Version(kv[0][0]), kv[0][1])):
        for (dev, mode), entries in results.tables(doc):
            if dev == device:  # each file holds its own device
                table.setdefault(version, {}).setdefault(dev, {})[mode] = entries[clause_id]["outcome"]
    return table


def build() -> dict:
    registry = reg.default()
    prints = fingerprints.compute(registry)
    clauses = sorted(registry.clauses.values(), key=lambda c: (c.page, int(c.id.rsplit("-", 1)[1])))
    return {
        "$schema": "spec.schema.json",
        "torch_versions": status.versions(),
        "devices": {"known": list(DEVICES), "run": status.devices_run()},
        "modes": list(MODES),
        "levels": reg.LEVEL_MEANING,
        "details": reg.DETAILS,
        "default_scope": reg.DEFAULT_SCOPE,
        "clauses": [
            {
                "id": c.id,
                "page": c.page,
                "url": f"spec/{c.page}.html#{c.anchor}",
                "level": c.level,
                "details": list(c.details),
                "scope": c.scope_text,
                "evidence": c.evidence,
                "statement": " ".join(c.text.split()),
                "since": str(c.since) if c.since else None,
                "until": str(c.until) if c.until else None,
                "also_on": [str(v) for v in c.also_on],
                "devices": list(c.devices),
                "modes": list(c.modes),
                "needs_values": c.needs_values,
                "withdrawn": c.withdrawn,
                "outcomes": outcomes(c.id),
                "fingerprint": prints[c.id],
            }
            for c in clauses
        ],
    }


def write(folder: Path) -> Path:
    """spec.json and its schema, into a built site's root."""
    (folder / SCHEMA.name).write_text(SCHEMA.read_text(encoding="utf-8"), encoding="utf-8")
    path = folder / "spec.json"
    path.write_text(json.dumps(build(), ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    return path
