"""Results documents: the validator, what counts as recorded results, atomic writes, the output path."""

import itertools
import json
import os
import shutil
import subprocess
import sys
import textwrap

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
        (lambda d: d.update(schema_version=1), "schema_version 1, expected 4"),
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
        (lambda d: d["devices"]["cpu"]["eager"].update({"data-1": {}}), "data-1: not a clause ID"),
        (lambda d: entry(d, "DATA-1").pop("fingerprint"), "entry must have exactly"),
        (lambda d: entry(d, "DATA-1").update(fingerprint="sha256:x"), "fingerprint 'sha256:x' is not 16 hexadecimal"),
        (lambda d: entry(d, "DATA-1").update(fingerprint=None), "fingerprint None is not 16 hexadecimal"),
        (lambda d: d["devices"].update(tpu={}), "unknown device"),
        (lambda d: d.update(torch="banana"), "is not a version"),
        (lambda d: d.update(torch=2.13), "torch must be a string"),
        (lambda d: d.update(suite_hash="sha256:" + "0" * 64), "keys"),  # schema 3's, one hash for the suite
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
    assert results.check_recorded(tmp_path) == ({}, [tmp_path / "2.13.0" / f"{d}.json" for d in devices.KNOWN])
    os.replace(tmp_path / "2.13.0" / "cpu.json", tmp_path / "2.13.0" / "mps.json")
    with pytest.raises(results.ResultsError, match="no results for cpu"):
        results.check_recorded(tmp_path)
    shutil.rmtree(tmp_path / "2.13.0")
    for table in doc["devices"]["meta"].values():
        table["DATA-1"]["fingerprint"] = "0" * 16
    record(doc, tmp_path / "2.13.0")
    with pytest.raises(results.ResultsError, match=r"1 clauses stale on 1 releases \(DATA-1\).*nox -s conformance"):
        results.check_recorded(tmp_path)
    assert results.check_recorded(tmp_path, allow_stale=True)[0] == {"2.13.0": ["DATA-1"]}
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


def test_an_interrupt_while_writing_leaves_the_old_files_or_the_new_ones_never_a_mix(tmp_path, monkeypatch):
    old, new = complete_doc(), complete_doc(torch_version="2.13.1")
    record(old, tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    calls = []

    def interrupted(fd):  # Ctrl-C while the third file is being written
        calls.append(fd)
        if len(calls) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        record(new, tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before, "old files intact, no temporary left"
    monkeypatch.undo()

    # Ctrl-C once the first file is in place: held until every file is (in a process of its own, whose main thread
    # writes: signals go to the main thread, and an xdist worker runs its tests in another)
    interrupted_after_first = textwrap.dedent(
        """
        import json, os, signal, sys
        from conformance.harness import results
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job inherits SIGINT ignored
        replace, replaced = os.replace, []
        def interrupt_between_replaces(src, dst):
            replace(src, dst)
            replaced.append(dst)
            if len(replaced) == 1:
                os.kill(os.getpid(), signal.SIGINT)
        os.replace = interrupt_between_replaces
        try:
            results.write(json.loads(sys.stdin.read()), sys.argv[1])
        except KeyboardInterrupt:
            print(len(replaced))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", interrupted_after_first, str(tmp_path / "{device}.json")],
        input=json.dumps(new),
        capture_output=True,
        text=True,
        check=True,
        cwd=registry.ROOT,
    )
    assert int(done.stdout) == len(before) > 1, done.stderr
    assert {json.loads(p.read_text())["torch"] for p in tmp_path.iterdir()} == {"2.13.1"}, "every file is new"


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


def test_rewritten_names_only_the_files_a_run_wrote(tmp_path):
    doc = results.build(registry.default(), "2.13.0", "3.11", "x", ["cpu"], ["cpu"], {}, {})
    kept, rewrite, new = tmp_path / "kept.json", tmp_path / "rewrite.json", tmp_path / "new.json"
    results.write(doc, str(kept))
    results.write(doc, str(rewrite))
    before = results.stamps([kept, rewrite, new, tmp_path / "never.json"])
    results.write(doc, str(rewrite))  # the same bytes: still a new file moved into place
    results.write(doc, str(new))
    assert sorted(results.rewritten(before)) == sorted([rewrite, new])


def test_a_stale_outcome_is_checked_for_its_form_only_and_named():
    doc = complete_doc()
    # INDEX-15 cannot pass on 2.13: recorded by another version of its clause, that is no breach, but stale
    entry(doc, "INDEX-15").update(outcome="pass", tests=1, reasons=[], fingerprint="0" * 16)
    doc["devices"]["cpu"]["eager"].pop("DATA-1")  # a clause new since the recording
    doc["devices"]["meta"]["eager"]["GONE-1"] = dict(entry(doc, "DATA-2", "meta"))  # a clause since removed
    results.validate(doc, "stale entries are valid")
    assert results.stale(doc) == ["DATA-1", "GONE-1", "INDEX-15"]
    entry(doc, "INDEX-15").update(tests=0)
    with pytest.raises(results.ResultsError, match="pass with no test run"):
        results.validate(doc, "its form is still checked")


def test_merge_takes_the_refreshed_clauses_and_keeps_the_rest(tmp_path):
    old = complete_doc()
    old["devices"]["cpu"]["eager"]["GONE-1"] = dict(entry(old, "DATA-3"))
    record(old, tmp_path)
    new = complete_doc()
    for cid in ("DATA-1", "DATA-2"):
        entry(new, cid).update(outcome="fail", reasons=["it broke"])
    merged = results.merge(new, str(tmp_path / "{device}.json"), ["DATA-1"])
    assert entry(merged, "DATA-1")["outcome"] == "fail", "refreshed"
    assert entry(merged, "DATA-2")["outcome"] == "pass", "not refreshed: the recorded outcome stays"
    assert "GONE-1" not in merged["devices"]["cpu"]["eager"], "a clause no longer in the spec is dropped"
    results.validate(merged, "merged")
    other_machine = {**new, "platform": "Linux-6.18.44-fc-v1147-x86_64"}  # another kernel build: still mergeable
    assert results.merge(other_machine, str(tmp_path / "{device}.json"), ["DATA-1"])["platform"] == old["platform"]
    with pytest.raises(results.ResultsError, match=r"recorded with torch '2\.13\.0\+cpu', this run has '2\.13\.1'"):
        results.merge(complete_doc("2.13.1"), str(tmp_path / "{device}.json"), ["DATA-1"])
    with pytest.raises(results.ResultsError, match="does not exist: --clauses refreshes recorded results"):
        results.merge(new, str(tmp_path / "other" / "{device}.json"), ["DATA-1"])


def test_observations_do_not_depend_on_the_order_tests_ran_in():
    from conformance.harness import outcomes

    per_test = {
        "t[a]": {"diverging layer": "dynamo", "graph breaks": 0},
        "t[b]": {"diverging layer": "aot_autograd", "graph breaks": 0},
        "t[c]": {"count": 1},
        "t[d]": {"count": True},
    }
    merged = {json.dumps(outcomes.observations(dict(order))) for order in itertools.permutations(per_test.items())}
    expected = {"count": "1, true", "diverging layer": "aot_autograd, dynamo", "graph breaks": 0}
    assert merged == {json.dumps(expected)}
