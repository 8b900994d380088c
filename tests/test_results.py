"""Results documents: the validator, what counts as recorded results, atomic writes, the output path."""

import json
import os
import shutil

import pytest

from conformance.harness import devices, modes, registry, results

REGISTRY = registry.default()


def complete_doc(torch_version="2.13.0+cpu", present=("cpu", "meta")) -> dict:
    """A whole run: every clause that applies on a present device has one passing test."""
    ran = {
        (cid, d, m): {f"t.py::test[{d}-{m}]": {"outcome": "passed", "reason": ""}}
        for cid in REGISTRY.clauses
        for d in present
        for m in modes.KNOWN
    }
    return results.build(REGISTRY, torch_version, "3.11", "x", list(devices.KNOWN), list(present), ran, {})


def entry(doc, cid, device="cpu"):
    return doc["devices"][device]["eager"][cid]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(schema_version=1), "schema_version 1, expected 3"),
        (lambda d: d.pop("present"), "keys"),
        (lambda d: d.update(present=["tpu"]), "present must be a list of devices"),
        (lambda d: entry(d, "DATA-1").update(outcome="passed"), "not one of"),
        (lambda d: entry(d, "DATA-1").update(outcome="pass", tests=0), "pass with no test run"),
        (lambda d: entry(d, "DATA-1").update(tests="2"), "tests must be a whole number"),
        (lambda d: entry(d, "DATA-1").update(tests=True), "tests must be a whole number"),
        (lambda d: entry(d, "DATA-1").update(tests=-1), "tests must be a whole number"),
        (lambda d: entry(d, "DATA-1").update(outcome="fail", reasons="it broke"), "reasons must be a list"),
        (lambda d: entry(d, "DATA-1").update(observed={"x": [1]}), "observed must map names to plain values"),
        (lambda d: entry(d, "DATA-1").update(outcome="fail", reasons=[]), "needs a reason"),
        (lambda d: entry(d, "DATA-1").update(outcome="pass", reasons=["one test skipped"]), "a pass can only say"),
        (lambda d: d["devices"]["cpu"]["eager"].pop("DATA-1"), "clauses missing: DATA-1"),
        (lambda d: d["devices"]["cpu"]["eager"].update({"ZZZ-1": {}}), "unknown clauses: ZZZ-1"),
        (lambda d: d["devices"].update(tpu={}), "unknown device"),
        (lambda d: d.update(torch="banana"), "is not a version"),
        (lambda d: d.update(torch=2.13), "torch must be a string"),
        (lambda d: d.update(suite_hash="md5:x"), "suite_hash"),
        # outcomes the clause cannot have on this torch and device
        (lambda d: entry(d, "INDEX-15").update(outcome="pass", tests=1, reasons=[]), "INDEX-15: pass is impossible"),
        (lambda d: entry(d, "DATA-6", "meta").update(outcome="pass", tests=1, reasons=[]), "needs values"),
        (lambda d: entry(d, "DATA-1", "cuda").update(outcome="pass", tests=1, reasons=[]), "not present"),
        (lambda d: entry(d, "DATA-1").update(outcome="not-applicable", reasons=["?"]), "the clause applies"),
    ],
)
def test_validator_rejects_impossible_documents(mutate, message):
    doc = complete_doc()
    results.validate(doc, "ok")
    mutate(doc)
    with pytest.raises(results.ResultsError, match=message):
        results.validate(doc, "bad")


def record(doc, folder):
    return results.write(doc, str(folder / "{device}.json"))


def test_recorded_results_checks(tmp_path):
    doc = complete_doc()
    record(doc, tmp_path / "2.13.0")
    assert results.check_recorded(tmp_path) == [tmp_path / "2.13.0" / f"{d}.json" for d in devices.KNOWN]
    os.replace(tmp_path / "2.13.0" / "cpu.json", tmp_path / "2.13.0" / "mps.json")
    with pytest.raises(results.ResultsError, match="no results for cpu"):
        results.check_recorded(tmp_path)
    shutil.rmtree(tmp_path / "2.13.0")
    record({**doc, "suite_hash": "sha256:old"}, tmp_path / "2.13.0")
    with pytest.raises(results.ResultsError, match="stale.*nox -s conformance"):
        results.check_recorded(tmp_path)
    (tmp_path / "2.13.0" / "cpu.json").write_text("{not json")
    with pytest.raises(results.ResultsError, match="cannot read results"):
        results.check_recorded(tmp_path)
    (tmp_path / "2.13.0" / "cpu.json").write_bytes(b"\xff\xfe{}")
    with pytest.raises(results.ResultsError, match="cannot read results.*utf-8"):
        results.check_recorded(tmp_path)


def test_a_partial_run_is_not_a_recording(tmp_path):
    doc = complete_doc()
    entry(doc, "CLONE-5").update(outcome="not-run", tests=1, reasons=["9 of 10 tests did not run: 9 deselected"])
    results.validate(doc, "a partial run is a valid document")
    record(doc, tmp_path / "2.13.0")
    with pytest.raises(results.ResultsError, match=r"partial run \(1 clauses not run, e\.g\. CLONE-5\)"):
        results.check_recorded(tmp_path)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "2.99.0", "2.99.0: no results for cpu, meta, cuda, mps"),
        (lambda p: p / "old", "old: not a torch version"),
    ],
)
def test_recorded_folders_must_be_versions_and_whole(tmp_path, make, message):
    record(complete_doc(), tmp_path / "2.13.0")
    make(tmp_path).mkdir()
    with pytest.raises(results.ResultsError, match=message):
        results.check_recorded(tmp_path)


def test_write_replaces_all_device_files_or_none(tmp_path, monkeypatch):
    old = complete_doc()
    record(old, tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    new = complete_doc(torch_version="2.13.1")
    calls = []

    def full_disk(fd):  # the third file's write fails, as on a full disk
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(results.ResultsError, match="No space left on device; no results file was changed"):
        record(new, tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before, "old files intact, no temporary left"
    monkeypatch.undo()
    record(new, tmp_path)
    assert json.loads((tmp_path / "cpu.json").read_text())["torch"] == "2.13.1"
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("", "--results needs a file path"),
        ("  ", "--results needs a file path"),
        ("{device}-{run}.json", "only {device} may stand in braces"),
        ("{}-{device}.json", "only {device} may stand in braces"),
        (".", "is a directory"),
        ("conformance/harness/registry.py/r.json", "is a file, not a folder"),
        ("/proc/r.json", "cannot write in /proc"),
    ],
)
def test_results_paths_are_checked_before_the_run(template, message):
    with pytest.raises(results.ResultsError, match=message.replace("{", r"\{").replace("}", r"\}")):
        results.check_writable(template)


def test_writable_results_paths_create_nothing(tmp_path):
    results.check_writable(str(tmp_path / "new" / "deeper" / "{device}.json"))
    assert not (tmp_path / "new").exists()
    assert list(tmp_path.iterdir()) == []


def test_committed_results_are_valid_whole_and_fresh():
    results.check_recorded()
