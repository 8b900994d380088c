"""Results files: one JSON document per run, per-clause outcomes per device and mode.

Schema (``schema_version`` 4)::

    {"schema_version": 4, "torch": "2.13.0+cpu", "python": "3.11.7",
     "platform": "Linux-...", "present": ["cpu", "meta"],
     "devices": {"cpu": {"eager": {"DATA-1": {"outcome": "pass", "tests": 3,
                                               "reasons": [], "observed": {},
                                               "fingerprint": "5c0b7e3a9d2f4e61"}},
                         "compile": {...}}}}

Each outcome carries the fingerprint of its clause when it was decided (fingerprints.py): it stays valid while
that is its clause's fingerprint now, and is *stale* otherwise (``stale``); a recording re-runs only the stale
clauses and merges their outcomes into the recorded files (``merge``).

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

import json
import math
import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path

from packaging.version import InvalidVersion, Version

from . import fingerprints as fp
from . import modes as mod
from . import outcomes
from . import registry as reg
from .devices import KNOWN

SCHEMA_VERSION = 4
OUTCOMES = ("pass", "fail", "not-applicable", "not-run")
SUITE_DIR = reg.ROOT / "conformance"
TESTS_DIR = SUITE_DIR / "tests"
RESULTS_DIR = SUITE_DIR / "results"
REFRESH_HINT = "refresh them with: nox -s conformance"


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
    fingerprints=None,
    modes=mod.KNOWN,
):
    """The results document of a run (outcomes.entries says what its arguments are), each outcome with its clause's
    fingerprint (fingerprints.py; default: the fingerprints of this checkout)."""
    doc = {
        "schema_version": SCHEMA_VERSION,
        "torch": torch_version,
        "python": python,
        "platform": platform,
        "present": [d for d in KNOWN if d in present],
        "devices": {},
    }
    doc["devices"] = outcomes.entries(registry, devices, torch_version, python, present, ran, observed, manifest, modes)
    prints = fp.compute(registry) if fingerprints is None else fingerprints
    for _, table in tables(doc):
        for cid, entry in table.items():
            entry["fingerprint"] = prints[cid]
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
    # Braces stand for {device} only: '{{device}}', '{DEVICE}', '{}' or '{device' taken literally would put every
    # device's document into one file, each overwriting the last.
    if {"{", "}"} & set(path_template.replace("{device}", "")):
        raise ResultsError(f"--results {path_template!r}: only {{device}} may stand in braces (one file per device)")
    if "{device}" not in path_template:
        return Path(path_template)
    return {d: Path(path_template.replace("{device}", d)) for d in KNOWN}


def _paths(path_template: str) -> list[Path]:
    found = targets(path_template)
    return list(found.values()) if isinstance(found, dict) else [found]


def _shown(path: Path) -> str:
    text = str(path)
    return text if len(text) <= 120 else f"{text[:60]}...{text[-40:]} ({len(text)} characters)"


def check_writable(path_template: str, record: bool = False) -> None:
    """Refuse, before any test runs, a results path that cannot be written (ResultsError, one line): a folder, a
    special file (/dev/null, a pipe: results replace only regular files), a dangling link, a path below a file or
    too long for the system, a folder without write permission, and, unless ``record``, the recorded results."""
    for path in _paths(path_template):
        try:
            _check_target(path, record)
        except OSError as exc:
            raise ResultsError(f"--results {_shown(path)}: {exc.strerror or exc}") from None


def _check_target(path: Path, record: bool) -> None:
    where = f"--results {_shown(path)}"
    if path.is_symlink() and not path.exists():
        raise ResultsError(f"{where}: a symbolic link to nothing; give a file path")
    if path.is_dir():
        raise ResultsError(f"{where}: is a directory; give a file path")
    if path.exists() and not path.is_file():
        raise ResultsError(f"{where}: not a regular file (a device, pipe or socket); results go to files only")
    if not record and path.resolve().is_relative_to(RESULTS_DIR.resolve()):
        raise ResultsError(
            f"{where}: lies in the recorded results ({RESULTS_DIR.relative_to(reg.ROOT).as_posix()}/), which only a "
            "recording writes: nox -s conformance (or --record), or python conformance/release_check.py VERSION"
        )
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise ResultsError(f"{where}: {folder} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ResultsError(f"{where}: cannot write in {folder}: {exc.strerror}") from None


def write(doc: dict, path_template: str) -> list[Path]:
    """Write one file, or one per device when the path holds ``{device}``: all of them or, on an error, none.

    Each file is written to a temporary file beside it and moved into place once every one was written, so a
    full disk or a failing write never leaves a truncated file, nor a mix of new and old device files. Only
    regular files are replaced (a link to one: the file it names); anything else is refused, unchanged.
    """
    found = targets(path_template)
    if isinstance(found, dict):
        docs = {found[d]: {**doc, "devices": {d: table}} for d, table in doc["devices"].items()}
    else:
        docs = {found: doc}
    staged: list[tuple[str, Path]] = []
    try:
        for path, content in docs.items():
            real = path.resolve()
            if real.exists() and not real.is_file():
                raise ResultsError(f"cannot write results to {path}: not a regular file; no results file was changed")
            try:  # NaN and infinity are no JSON: the observe fixture writes them as text
                text = json.dumps(content, indent=1, sort_keys=True, allow_nan=False) + "\n"
            except ValueError as exc:
                raise ResultsError(f"cannot write results to {path}: {exc}; no results file was changed") from None
            real.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
            staged.append((tmp, real))
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
    except BaseException as exc:  # an interrupt too: no staged file is left behind, nothing was replaced
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        if not isinstance(exc, OSError):
            raise
        why = exc.strerror or exc
        raise ResultsError(f"cannot write results to {path}: {why}; no results file was changed") from None
    with _signals_held():  # an interrupt between two replaces would leave new and old device files mixed
        for tmp, real in staged:
            os.replace(tmp, real)
    return list(docs)


@contextmanager
def _signals_held():
    """Hold SIGINT and SIGTERM back for a moment (delivered when it ends); on a thread or system without signal
    masks, nothing."""
    import signal
    import threading

    held = {signal.SIGINT, signal.SIGTERM}
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


_HELD: dict[Path, int] = {}  # the folders whose lock this process holds until it ends, and their descriptors


def hold(path_template: str) -> None:
    """Lock the folders a recording writes in (the nearest that exist) for the rest of this process: a second
    recording into the same folder (the same release) while this one runs is refused at once (ResultsError), so
    neither writes over the outcomes the other merged. The kernel drops the lock when the process ends, however."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return
    for folder in {_existing_folder(path) for path in _paths(path_template)} - set(_HELD):
        fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ResultsError(
                f"{_shown(folder)}: another recording is writing results there now; wait for it to end, then run again"
            ) from None
        _HELD[folder] = fd


def _existing_folder(path: Path) -> Path:
    folder = path.resolve().parent
    while not folder.is_dir():
        folder = folder.parent
    return folder


def stamps(paths) -> dict[Path, tuple[int, int] | None]:
    """What each results file is before a run (inode and mtime; None when absent), for ``rewritten`` after it."""
    return {Path(p): _stamp(Path(p)) for p in paths}


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def rewritten(before: dict[Path, tuple[int, int] | None]) -> list[Path]:
    """The files of ``stamps`` that a run wrote since: ``write`` moves a new file into place, so a file the run
    did not write (it stopped early, its recorder did not run) keeps its inode and mtime, and is not listed."""
    return [path for path, stamp in before.items() if (now := _stamp(path)) is not None and now != stamp]


class ResultsError(ValueError):
    pass


ENTRY_KEYS = {"outcome", "tests", "reasons", "observed", "fingerprint"}
SCALARS = (bool, int, float, str, type(None))
HEADER = ("schema_version", "torch", "python", "platform", "present")  # one per recording
# What a run must share with the recording it merges into (--clauses): platform is where the recording was made (a
# kernel build string changes from machine to machine) and stays the recording's.
SAME_SETUP = ("schema_version", "torch", "python", "present")
FINGERPRINT = re.compile(f"[0-9a-f]{{{fp.LENGTH}}}")


def _plain(value) -> bool:
    """An observation JSON carries as it is: no NaN or infinity (1e999 reads as infinity)."""
    return isinstance(value, SCALARS) and not (isinstance(value, float) and not math.isfinite(value))


def validate(doc: dict, where: str, registry: reg.Registry | None = None) -> None:
    """Check the invariants of one results document; raise ResultsError naming the first breach.

    Types, keys, and every fresh outcome (its fingerprint is its clause's now) against what the clause allows on
    that torch and device: a ``pass`` outside a clause's range, on a device it is not about or on an absent device
    is impossible, and so is a ``not-applicable`` where the clause applies. A stale outcome (``stale``) was decided
    by another version of its clause or tests, and is only checked for its form.
    """
    registry = registry or reg.default()
    prints = fp.compute(registry)

    def fail(msg):
        raise ResultsError(f"{where}: {msg}")

    if not isinstance(doc, dict):
        fail("not a JSON object")
    keys = {*HEADER, "devices"}
    if set(doc) != keys:
        fail(f"keys {sorted(doc)} differ from {sorted(keys)}")
    if type(doc["schema_version"]) is not int or doc["schema_version"] != SCHEMA_VERSION:
        fail(f"schema_version {doc['schema_version']!r}, expected {SCHEMA_VERSION}")
    for key in ("torch", "python", "platform"):
        if not isinstance(doc[key], str):
            fail(f"{key} must be a string, is {doc[key]!r}")
        if doc[key] != doc[key].strip() or not doc[key]:
            fail(f"{key} {doc[key]!r} is empty or has spaces around it")
    for key in ("torch", "python"):
        try:
            Version(doc[key])
        except InvalidVersion:
            fail(f"{key} {doc[key]!r} is not a version")
    present = doc["present"]
    if (
        not isinstance(present, list)
        or not all(isinstance(d, str) and d in KNOWN for d in present)
        or len(set(present)) != len(present)
    ):
        fail(f"present must be a list of devices among {', '.join(KNOWN)}, each once, is {present!r}")
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
        for cid, entry in table.items():
            here = f"{device}.{mode}.{cid}"
            if not reg.CLAUSE_ID.fullmatch(cid):
                fail(f"{here}: not a clause ID")
            if not isinstance(entry, dict) or set(entry) != ENTRY_KEYS:
                fail(f"{here}: entry must have exactly outcome, tests, reasons, observed, fingerprint")
            if not isinstance(entry["fingerprint"], str) or not FINGERPRINT.fullmatch(entry["fingerprint"]):
                fail(f"{here}: fingerprint {entry['fingerprint']!r} is not {fp.LENGTH} hexadecimal digits")
            outcome, tests, reasons, observed = (entry[k] for k in ("outcome", "tests", "reasons", "observed"))
            if outcome not in OUTCOMES:
                fail(f"{here}: outcome {outcome!r} not one of {', '.join(OUTCOMES)}")
            if type(tests) is not int or tests < 0:
                fail(f"{here}: tests must be a whole number, is {tests!r}")
            if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
                fail(f"{here}: reasons must be a list of strings")
            if not isinstance(observed, dict) or not all(map(_plain, observed.values())):
                fail(f"{here}: observed must map names to plain values")
            if outcome != "pass" and not reasons:
                fail(f"{here}: outcome {outcome} needs a reason")
            if outcome == "pass" and tests < 1:
                fail(f"{here}: pass with no test run")
            if prints.get(cid) != entry["fingerprint"]:
                continue  # stale: what its clause says now does not apply to it
            if outcome == "pass" and not all(map(outcomes.harness_reason, reasons)):
                fail(f"{here}: a pass can only say why some tests were not-applicable (harness reasons)")
            fixed = outcomes.expected_outcome(registry.clauses[cid], device, mode, doc["torch"], doc["python"], present)
            if fixed and fixed[0] != outcome:
                fail(f"{here}: {outcome} is impossible here ({fixed[1]}); expected {fixed[0]}")
            # In compile mode a clause whose tests all run eagerly, or are all not-applicable for the harness's
            # reasons (modes.specified_later, modes.diverging_member), is not-applicable: only the run knows that.
            if not fixed and outcome == "not-applicable" and not all(map(outcomes.harness_reason, reasons)):
                fail(f"{here}: not-applicable, but the clause applies to torch {doc['torch']} on {device} in {mode}")
            if device in present and outcomes.absent_reason(device) in reasons:
                fail(f"{here}: says {outcomes.absent_reason(device)!r}, but present lists {device}")
            if outcome == "not-applicable" and reasons == [mod.EAGER_ONLY] and mode not in reg.COMPILED_MODES:
                fail(f"{here}: only a compiled mode can be {mod.EAGER_ONLY!r}")


def stale(doc: dict, registry: reg.Registry | None = None, prints: dict[str, str] | None = None) -> list[str]:
    """The clauses of a (valid) document that a new run must decide again: recorded under another fingerprint
    (their text, tests, helpers or the harness changed), missing from it (new), or no longer in the spec."""
    registry = registry or reg.default()
    prints = fp.compute(registry) if prints is None else prints
    found = set()
    for _, table in tables(doc):
        found.update(set(registry.clauses) - set(table))
        found.update(cid for cid, entry in table.items() if prints.get(cid) != entry["fingerprint"])
    return sorted(found, key=natural)


def natural(cid: str):
    """DATA-2 before DATA-10."""
    prefix, number = cid.rsplit("-", 1)
    return prefix, int(number)


def load(path: Path, registry: reg.Registry | None = None) -> dict:
    doc = _read(path)
    validate(doc, str(path), registry)
    return doc


def _read(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_not_a_number)
    except (OSError, ValueError) as exc:  # ValueError: bad JSON, bytes that are not UTF-8, the two hooks below
        raise ResultsError(f"{path}: cannot read results: {exc}") from None
    except RecursionError:
        raise ResultsError(f"{path}: cannot read results: nested too deeply to be a results file") from None


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose keys are all different: a key given twice would let the last one win unseen."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"key {twice!r} given twice in one object")
    return found


def _not_a_number(name: str):
    raise ValueError(f"{name} is not a JSON number")


def check_file(path: Path, registry: reg.Registry) -> dict:
    """One committed results file: valid, whole, well placed (its stale clauses: ``stale``)."""
    doc = _read(path)
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


def check_recorded(results_dir: Path = RESULTS_DIR, registry: reg.Registry | None = None, allow_stale=False):
    """Validate every committed results file, its folder naming, and its freshness; raise on the first problem, and
    name every stale clause (unless ``allow_stale``). The device files of one version come from one recording (and
    its merges): they must agree on its header (torch, present ...). Returns ({version: its stale clauses}, files)."""
    registry = registry or reg.default()
    prints = fp.compute(registry)
    files = recorded_files(results_dir)
    headers: dict[str, tuple[Path, dict]] = {}
    stale_by_version: dict[str, set[str]] = {}
    for path in files:
        doc = check_file(path, registry)
        header = {key: doc[key] for key in HEADER}
        first, seen = headers.setdefault(path.parent.name, (path, header))
        if differ := [key for key in HEADER if seen[key] != header[key]]:
            key = differ[0]
            raise ResultsError(
                f"{path.parent}: {first.name} and {path.name} differ in {key} ({seen[key]!r}, {header[key]!r}); "
                f"the device files of one version are written by one recording; {REFRESH_HINT}"
            )
        stale_by_version.setdefault(path.parent.name, set()).update(stale(doc, registry, prints))
    found = {v: sorted(cids, key=natural) for v, cids in stale_by_version.items() if cids}
    if found and not allow_stale:
        raise ResultsError(stale_message(found, results_dir))
    return found, files


def stale_message(found: dict[str, list[str]], where: Path = RESULTS_DIR) -> str:
    """One line naming the stale clauses of the recorded results and the command that refreshes only them."""
    cids = sorted({c for cs in found.values() for c in cs}, key=natural)
    shown = ", ".join(cids[:12]) + (f" and {len(cids) - 12} more" if len(cids) > 12 else "")
    return (
        f"{where}: {len(cids)} clauses stale on {len(found)} releases ({shown}): their text, tests, the helpers "
        f"those reach or the harness changed since they were recorded; {REFRESH_HINT} (re-runs only those)"
    )


def mergeable(path_template: str, registry: reg.Registry) -> dict[Path, dict]:
    """The recorded documents a run of some clauses (--clauses) merges into; ResultsError when one is missing or
    is no valid results file."""
    found = {}
    for path in _paths(path_template):
        if not path.is_file():
            raise ResultsError(f"{_shown(path)} does not exist: --clauses refreshes recorded results; record all first")
        found[path] = _read(path)
        validate(found[path], str(path), registry)
    return found


def merge(new: dict, path_template: str, clauses: list[str], registry: reg.Registry | None = None) -> dict:
    """The recorded document at ``path_template`` with the outcomes of ``clauses`` (every device and mode) taken
    from the run ``new``, and the clauses no longer in the spec dropped; the recording it merges into must be of
    the same torch build, python and present devices (``SAME_SETUP``)."""
    registry = registry or reg.default()
    old: dict = {}
    for path, doc in mergeable(path_template, registry).items():
        if differ := [key for key in SAME_SETUP if doc[key] != new[key]]:
            raise ResultsError(
                f"{_shown(path)} was recorded with {differ[0]} {doc[differ[0]]!r}, this run has {new[differ[0]]!r}: "
                "outcomes of two setups cannot be merged; record the whole suite (nox -s conformance -- --all)"
            )
        old = {**doc, "devices": {**old.get("devices", {}), **doc["devices"]}}
    if set(old["devices"]) != set(new["devices"]):
        raise ResultsError(f"the recorded results hold {sorted(old['devices'])}, this run {sorted(new['devices'])}")
    merged = {**old, "devices": {}}
    for device, by_mode in old["devices"].items():
        merged["devices"][device] = {}
        for mode, table in by_mode.items():
            fresh = new["devices"][device][mode]
            kept = [cid for cid in sorted(registry.clauses) if cid in table or cid in clauses]
            merged["devices"][device][mode] = {cid: fresh[cid] if cid in clauses else table[cid] for cid in kept}
    return merged


def main(argv: list[str] | None = None) -> int:
    """python -m conformance.harness.results [FILE ...]: check results files (default: every committed one)."""
    import sys

    paths = [Path(p) for p in (sys.argv[1:] if argv is None else argv)]
    try:
        if not paths:
            _, files = check_recorded()
            print(f"{len(files)} recorded results files are valid, whole and fresh")
        for path in paths:
            doc = load(path)
            if old := stale(doc):
                raise ResultsError(
                    f"{path}: {len(old)} clauses stale ({', '.join(old[:5])}{' ...' if len(old) > 5 else ''}): "
                    "recorded with another version of their tests or text; run the suite again to compare"
                )
            if not_run := partial(doc):
                print(f"{path}: valid, but partial: {len(not_run)} clauses not run on a present device")
            else:
                print(f"{path}: valid, torch {doc['torch']}, devices {', '.join(doc['devices'])}")
    except (ResultsError, reg.SpecError) as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
