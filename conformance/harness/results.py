"""Results files: one JSON document per run, per-clause outcomes per device and mode.

Schema (``schema_version`` 3)::

    {"schema_version": 3, "torch": "2.13.0+cpu", "python": "3.11.7",
     "platform": "Linux-...", "suite_hash": "sha256:...",
     "present": ["cpu", "meta"],
     "devices": {"cpu": {"eager": {"DATA-1": {"outcome": "pass", "tests": 3,
                                               "reasons": [], "observed": {}}},
                         "compile": {...}}}}

Outcomes: ``pass`` (every test of the clause for that device and mode was
collected, ran in this run and passed; in compile mode its ``reasons`` say why
some tests were not-applicable, if any were: it holds in part), ``fail`` (at least one failed; ``reasons``
says why), ``not-applicable`` (the clause's version range excludes this torch, it
is withdrawn, it is not about the device or the mode, torch.compile cannot run on
this torch, or, in compile mode, none of its tests runs user code compiled),
``not-run`` (the device is absent, the mode was not selected, or some test of the
clause did not run: deselected, not collected, stopped early). ``present`` lists
the devices the machine had: a device not in it can only be ``not-run``. A
document with a ``not-run`` on a present device is *partial*: it is never
accepted as recorded results.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from packaging.version import InvalidVersion, Version

from . import modes as mod
from . import registry as reg
from .devices import KNOWN

SCHEMA_VERSION = 3
OUTCOMES = ("pass", "fail", "not-applicable", "not-run")
SUITE_DIR = reg.ROOT / "conformance"
TESTS_DIR = SUITE_DIR / "tests"
# Harness modules whose code the tests run (helpers, populations): a change there can change outcomes too.
SUITE_MODULES = tuple(
    SUITE_DIR / "harness" / f for f in ("checks.py", "modes.py", "populations.py", "opdb.py", "opdb_plugin.py")
)
RESULTS_DIR = SUITE_DIR / "results"
CLAUSE_IDS = f"{reg.CLAUSE_ID_PATTERN}(?:, {reg.CLAUSE_ID_PATTERN})*"
# What each {field} of a reason template of harness/modes.py may read as.
TEMPLATE_FIELDS = {
    "release": mod.RELEASE_AND_SERIES,
    "clauses": CLAUSE_IDS,
    "clause": reg.CLAUSE_ID_PATTERN,
    "device": r"\w+",
    "where": ".*",
    "member": ".*",
    "what": ".*",
}


def template_pattern(template: str) -> re.Pattern:
    """The texts a template of harness/modes.py makes, each {field} a named group."""
    field = re.compile(r"\\\{(\w+)\\\}")  # "{name}" as re.escape writes it
    return re.compile(field.sub(lambda m: f"(?P<{m[1]}>{TEMPLATE_FIELDS[m[1]]})", re.escape(template)))


# Why a run found no applicable compile-mode test of a clause: the texts of harness/modes.py, any release/member.
# {template: its regex}; status.py reads its status lines back with the same regexes.
HARNESS_REASONS = {text: template_pattern(text) for text in (mod.EAGER_ONLY, mod.SPECIFIED_FROM, mod.DIVERGES)}


def harness_reason(why: str) -> bool:
    return any(p.fullmatch(why) for p in HARNESS_REASONS.values())


REFRESH_HINT = "refresh them with: nox -s conformance"


def suite_hash(registry: reg.Registry | None = None) -> str:
    """Hash of what decides outcomes: the test files, the helpers they use, and the clauses/examples of the spec."""
    registry = registry or reg.default()
    h = hashlib.sha256()
    for path in [*sorted(TESTS_DIR.glob("*.py")), *SUITE_MODULES]:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for c in sorted(registry.clauses.values(), key=lambda c: c.id):
        meta = (c.id, c.level, str(c.since), str(c.until), c.needs_values, c.withdrawn, c.devices, c.modes)
        meta += tuple(str(v) for v in c.also_on)  # nothing for a clause of one range: its hash stays
        h.update(repr(meta).encode())
    for e in registry.examples:
        h.update(repr((e.page, e.clauses, e.code)).encode())
    return "sha256:" + h.hexdigest()


def expected_outcome(clause: reg.Clause, device: str, mode: str, torch_version: str, python: str, present):
    """The outcome a clause must have whatever its tests do, as (outcome, reason), or None when its tests decide."""
    if clause.withdrawn is not None:
        return "not-applicable", f"withdrawn: {clause.withdrawn}"
    if not clause.applies_to(torch_version):
        return "not-applicable", f"holds {clause.range_text()}; this is torch {torch_version}"
    if excluded := clause.excludes_device(device) or clause.excludes_mode(mode):
        return "not-applicable", excluded
    if mode == "compile" and (why := mod.unsupported(torch_version, python)):
        return "not-applicable", why
    if device not in present:
        return "not-run", f"device {device} not present"
    return None


def clause_outcome(clause, device, mode, torch_version, python, present, ran: dict[str, dict], manifest=None):
    """(outcome, tests run, reasons) of one clause on one device in one mode.

    ran: {nodeid: {"outcome": passed|failed|skipped, "reason": ...}} for the clause's tests on the device and mode;
    manifest: what the whole suite expects (harness.manifest); without one, the tests that ran are all there are.
    """
    if fixed := expected_outcome(clause, device, mode, torch_version, python, present):
        return fixed[0], 0, [fixed[1]]
    executed = [e for e in ran.values() if e["outcome"] in ("passed", "failed")]
    if failed := [e["reason"] for e in executed if e["outcome"] == "failed"]:
        return "fail", len(executed), failed
    if manifest is not None:
        expected, missing = manifest.missing((clause.id, device, mode), ran)
        if not expected and mode == "compile":
            # the harness's reasons (e.g. a test specified compiled from a later release), else: no test takes part
            return (
                "not-applicable",
                0,
                sorted(manifest.inapplicable.get((clause.id, device, mode), ())) or [mod.EAGER_ONLY],
            )
    else:
        expected = len(ran)
        missing = [f"{n}: skipped: {e['reason']}" for n, e in ran.items() if e["outcome"] == "skipped"]
    if not expected:
        return "not-run", 0, ["no test of this clause ran"]
    if missing:
        return "not-run", len(executed), missing
    # A pass of some tests only, the others not-applicable for the harness's reasons (specified compiled from a later
    # release, or doing on meta what another clause says): it holds in part, and says why the rest said nothing.
    gaps = sorted(manifest.inapplicable.get((clause.id, device, mode), ())) if manifest and mode == "compile" else []
    return "pass", len(executed), [why for why in gaps if harness_reason(why)]


def in_part(entry: dict) -> bool:
    """A pass that says why some tests were not-applicable (clause_outcome): the clause holds in part."""
    return entry["outcome"] == "pass" and bool(entry["reasons"])


def build(
    registry,
    torch_version,
    python,
    platform,
    devices,
    present,
    ran,
    observed,
    manifest=None,
    hash_=None,
    modes=mod.KNOWN,
):
    """ran: {(clause, device, mode): {nodeid: report entry}}; observed: {(clause, device, mode): {name: value}}.

    modes: the modes this run selected; the others are reported ``not-run`` (never left out).
    """
    doc = {
        "schema_version": SCHEMA_VERSION,
        "torch": torch_version,
        "python": python,
        "platform": platform,
        "suite_hash": hash_ or suite_hash(registry),
        "present": [d for d in KNOWN if d in present],
        "devices": {},
    }
    for device in devices:
        doc["devices"][device] = {}
        for mode in mod.KNOWN:
            table = doc["devices"][device][mode] = {}
            for cid, clause in sorted(registry.clauses.items()):
                key = (cid, device, mode)
                if mode in modes:
                    outcome, tests, reasons = clause_outcome(
                        clause, device, mode, torch_version, python, present, ran.get(key, {}), manifest
                    )
                else:
                    fixed = expected_outcome(clause, device, mode, torch_version, python, present)
                    outcome, why = fixed or ("not-run", f"mode {mode} not selected (--mode)")
                    tests, reasons = 0, [why]
                table[cid] = {
                    "outcome": outcome,
                    "tests": tests,
                    "reasons": sorted(set(reasons)),
                    "observed": observed.get(key, {}),
                }
    return doc


def tables(doc: dict):
    """((device, mode), {clause: entry}) for every device and mode of a document."""
    for device, by_mode in doc["devices"].items():
        for mode, table in by_mode.items():
            yield (device, mode), table


def partial(doc: dict) -> list[tuple[str, str, str]]:
    """(clause, device, mode) for every clause not run on a present device: what makes a run partial."""
    return [
        (cid, device, mode)
        for (device, mode), table in tables(doc)
        if device in doc["present"]
        for cid, entry in table.items()
        if entry["outcome"] == "not-run"
    ]


def targets(path_template: str) -> dict[str, Path] | Path:
    """The file per device for a ``{device}`` template, else the one path; ResultsError for a malformed template."""
    if not path_template.strip():
        raise ResultsError("--results needs a file path, e.g. --results r.json or --results 'out/{device}.json'")
    if "{device}" not in path_template:
        return Path(path_template)
    try:
        return {d: Path(path_template.format(device=d)) for d in KNOWN}
    except (KeyError, IndexError, ValueError):
        raise ResultsError(
            f"--results {path_template!r}: only {{device}} may stand in braces (one file per device)"
        ) from None


def check_writable(path_template: str) -> None:
    """Refuse, before any test runs, a results path that cannot be written (ResultsError, one line)."""
    found = targets(path_template)
    for path in found.values() if isinstance(found, dict) else [found]:
        if path.is_dir():
            raise ResultsError(f"--results {path}: is a directory; give a file path")
        folder = path.parent
        while not folder.exists():
            folder = folder.parent
        if not folder.is_dir():
            raise ResultsError(f"--results {path}: {folder} is a file, not a folder")
        try:
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as exc:
            raise ResultsError(f"--results {path}: cannot write in {folder}: {exc.strerror}") from None


def write(doc: dict, path_template: str) -> list[Path]:
    """Write one file, or one per device when the path holds ``{device}``: all of them or, on an error, none.

    Each file is written to a temporary file beside it and moved into place once every one was written, so a
    full disk or a failing write never leaves a truncated file, nor a mix of new and old device files.
    """
    found = targets(path_template)
    if isinstance(found, dict):
        docs = {found[d]: {**doc, "devices": {d: table}} for d, table in doc["devices"].items()}
    else:
        docs = {found: doc}
    staged: list[tuple[str, Path]] = []
    try:
        for path, content in docs.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps(content, indent=1, sort_keys=True) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
    except OSError as exc:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        why = exc.strerror or exc
        raise ResultsError(f"cannot write results to {path}: {why}; no results file was changed") from None
    for tmp, path in staged:
        os.replace(tmp, path)
    return list(docs)


class ResultsError(ValueError):
    pass


ENTRY_KEYS = {"outcome", "tests", "reasons", "observed"}
SCALARS = (bool, int, float, str, type(None))


def validate(doc: dict, where: str, registry: reg.Registry | None = None) -> None:
    """Check the invariants of one results document; raise ResultsError naming the first breach.

    Types, keys, and every outcome against what the clause allows on that torch and device: a ``pass`` outside
    a clause's range, on a device it is not about or on an absent device is impossible, and so is a
    ``not-applicable`` where the clause applies.
    """
    registry = registry or reg.default()

    def fail(msg):
        raise ResultsError(f"{where}: {msg}")

    if not isinstance(doc, dict):
        fail("not a JSON object")
    keys = {"schema_version", "torch", "python", "platform", "suite_hash", "present", "devices"}
    if set(doc) != keys:
        fail(f"keys {sorted(doc)} differ from {sorted(keys)}")
    if doc["schema_version"] != SCHEMA_VERSION:
        fail(f"schema_version {doc['schema_version']!r}, expected {SCHEMA_VERSION}")
    for key in ("torch", "python", "platform", "suite_hash"):
        if not isinstance(doc[key], str):
            fail(f"{key} must be a string, is {doc[key]!r}")
    try:
        Version(doc["torch"])
    except InvalidVersion:
        fail(f"torch {doc['torch']!r} is not a version")
    if not doc["suite_hash"].startswith("sha256:"):
        fail(f"suite_hash {doc['suite_hash']!r} is not sha256:...")
    present = doc["present"]
    if not isinstance(present, list) or not set(present) <= set(KNOWN):
        fail(f"present must be a list of devices among {', '.join(KNOWN)}")
    if not isinstance(doc["devices"], dict) or not doc["devices"]:
        fail("devices must be a non-empty object")
    for device, by_mode in doc["devices"].items():
        if device not in KNOWN:
            fail(f"unknown device {device!r}")
        if not isinstance(by_mode, dict) or set(by_mode) != set(mod.KNOWN):
            fail(f"devices.{device} must map each mode ({', '.join(mod.KNOWN)}) to its outcomes")
    for (device, mode), table in tables(doc):
        if not isinstance(table, dict):
            fail(f"devices.{device}.{mode} is not an object")
        if missing := sorted(set(registry.clauses) - set(table)):
            fail(f"{device}.{mode}: clauses missing: {', '.join(missing)}")
        if extra := sorted(set(table) - set(registry.clauses)):
            fail(f"{device}.{mode}: unknown clauses: {', '.join(extra)}")
        for cid, entry in table.items():
            here = f"{device}.{mode}.{cid}"
            if not isinstance(entry, dict) or set(entry) != ENTRY_KEYS:
                fail(f"{here}: entry must have exactly outcome, tests, reasons, observed")
            outcome, tests, reasons, observed = (entry[k] for k in ("outcome", "tests", "reasons", "observed"))
            if outcome not in OUTCOMES:
                fail(f"{here}: outcome {outcome!r} not one of {', '.join(OUTCOMES)}")
            if type(tests) is not int or tests < 0:
                fail(f"{here}: tests must be a whole number, is {tests!r}")
            if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
                fail(f"{here}: reasons must be a list of strings")
            if not isinstance(observed, dict) or not all(isinstance(v, SCALARS) for v in observed.values()):
                fail(f"{here}: observed must map names to plain values")
            if outcome != "pass" and not reasons:
                fail(f"{here}: outcome {outcome} needs a reason")
            if outcome == "pass" and tests < 1:
                fail(f"{here}: pass with no test run")
            if outcome == "pass" and not all(map(harness_reason, reasons)):
                fail(f"{here}: a pass can only say why some tests were not-applicable (harness reasons)")
            fixed = expected_outcome(registry.clauses[cid], device, mode, doc["torch"], doc["python"], present)
            if fixed and fixed[0] != outcome:
                fail(f"{here}: {outcome} is impossible here ({fixed[1]}); expected {fixed[0]}")
            # In compile mode a clause whose tests all run eagerly, or are all not-applicable for the harness's
            # reasons (modes.specified_later, modes.diverging_member), is not-applicable: only the run knows that.
            if not fixed and outcome == "not-applicable" and not all(map(harness_reason, reasons)):
                fail(f"{here}: not-applicable, but the clause applies to torch {doc['torch']} on {device} in {mode}")
            if outcome == "not-applicable" and reasons == [mod.EAGER_ONLY] and mode != "compile":
                fail(f"{here}: only compile mode can be {mod.EAGER_ONLY!r}")


def load(path: Path, registry: reg.Registry | None = None) -> dict:
    doc = _read(path)
    validate(doc, str(path), registry)
    return doc


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: bad JSON and bytes that are not UTF-8
        raise ResultsError(f"{path}: cannot read results: {exc}") from None


def check_file(path: Path, registry: reg.Registry, current_hash: str) -> dict:
    """One committed results file: fresh (checked first, it names the refresh command), valid, whole, well placed."""
    doc = _read(path)
    if isinstance(doc, dict) and "suite_hash" in doc and doc["suite_hash"] != current_hash:
        raise ResultsError(f"{path}: stale, recorded with another version of the tests; {REFRESH_HINT}")
    validate(doc, str(path), registry)
    if not_run := partial(doc):
        raise ResultsError(
            f"{path}: a partial run ({len(not_run)} clauses not run, e.g. {not_run[0][0]}) is not a recording; "
            + REFRESH_HINT
        )
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


def main(argv: list[str] | None = None) -> int:
    """python -m conformance.harness.results [FILE ...]: check results files (default: every committed one)."""
    import sys

    paths = [Path(p) for p in (sys.argv[1:] if argv is None else argv)]
    try:
        if not paths:
            files = check_recorded()
            print(f"{len(files)} recorded results files are valid, whole and fresh")
        for path in paths:
            doc = load(path)
            if not_run := partial(doc):
                print(f"{path}: valid, but partial: {len(not_run)} clauses not run on a present device")
            else:
                print(f"{path}: valid, torch {doc['torch']}, devices {', '.join(doc['devices'])}")
    except ResultsError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
