"""Bad input of the results checker (``python -m conformance.harness.results [FILE ...]``).

The same checks run in ``nox -s tests``, in the docs build and in the release check: a results file that is
not JSON, not UTF-8, of another schema, with impossible outcomes, partial, stale or misplaced is refused with
one line naming the file, and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import RESULTS_CHECK as CHECK
from . import Case
from .release_check import RECORDED, RESULTS, record

FILE = "r.json"


def _results_file(change):
    """A setup writing r.json: the demo's recorded cpu results, changed by ``change(doc)``."""

    def setup(project: Path) -> None:
        record(project)
        doc = json.loads((project / RECORDED).read_text())
        change(doc)
        (project / FILE).write_text(json.dumps(doc))

    return setup


def _entry(doc, cid="DEMO-1", device="cpu"):
    return doc["devices"][device]["eager"][cid]


def _text(change):
    """A setup writing r.json: the demo's recorded cpu results as JSON text, changed by ``change(text)`` (what a
    JSON object cannot say: a key given twice, NaN)."""

    def setup(project: Path) -> None:
        record(project)
        (project / FILE).write_text(change((project / RECORDED).read_text()))

    return setup


def _twice(text: str) -> str:
    return text.replace('"outcome": "pass"', '"outcome": "fail", "reasons": ["x"], "outcome": "pass"', 1)


def _raw(content: bytes):
    def setup(project: Path) -> None:
        (project / FILE).write_bytes(content)

    return setup


def _recorded(change):
    """A setup recording the demo's results, then changing the recorded folder."""

    def setup(project: Path) -> None:
        record(project)
        change(project / RESULTS)

    return setup


def _entry_file(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _file_case(id, what, setup, says, keeps=(FILE,)) -> Case:
    return Case(id=f"results-{id}", what=what, argv=(*CHECK, FILE), says=says, exit=2, setup=setup, keeps=keeps)


def _recorded_case(id, what, change, says) -> Case:
    return Case(id=f"results-{id}", what=what, argv=CHECK, says=says, exit=2, setup=_recorded(change))


def _claims_cuda(folder: Path) -> None:
    path = folder / "2.13.0" / "cpu.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "present": ["cpu", "meta", "cuda"]}))


def _partial(folder: Path) -> None:
    path = folder / "2.13.0" / "cpu.json"
    doc = json.loads(path.read_text())
    _entry(doc).update(outcome="not-run", tests=0, reasons=["1 of 1 tests did not run: 1 deselected"])
    path.write_text(json.dumps(doc))


CASES = [
    _file_case("missing", "check a file that does not exist", lambda p: None, "r.json: cannot read results", keeps=()),
    _file_case(
        "not-json",
        "check a file that is not JSON",
        _raw(b'{"schema_version": 2,'),
        "r.json: cannot read results: Expecting",
    ),
    _file_case(
        "not-utf8",
        "check a file that is not UTF-8",
        _raw(b"\xff\xfe{}"),
        "r.json: cannot read results: 'utf-8' codec can't decode",
    ),
    _file_case("not-an-object", "check a JSON list", _raw(b"[]"), "r.json: not a JSON object"),
    _file_case(
        "old-schema",
        "check a file of schema 1",
        _results_file(lambda d: d.update(schema_version=1)),
        "r.json: schema_version 1, expected 4",
    ),
    _file_case(
        "pass-outside-range",
        "claim a pass for a clause outside its version range",
        _results_file(lambda d: _entry(d, "DEMO-3").update(outcome="pass", tests=1, reasons=[])),
        "cpu.eager.DEMO-3: pass is impossible here (holds until 1.0 (exclusive)",
    ),
    _file_case(
        "pass-on-meta-for-values",
        "claim a pass on meta for a clause that needs values",
        _results_file(
            lambda d: d["devices"].update(
                meta={
                    mode: {**table, "DEMO-4": {**table["DEMO-4"], "outcome": "pass", "tests": 1, "reasons": []}}
                    for mode, table in d["devices"]["cpu"].items()
                }
            )
        ),
        "meta.compile.DEMO-4: pass is impossible here (clause needs values",
    ),
    _file_case(
        "reasons-a-string",
        "give reasons as a string",
        _results_file(lambda d: _entry(d).update(outcome="fail", reasons="broke")),
        "cpu.eager.DEMO-1: reasons must be a list of strings",
    ),
    _file_case(
        "tests-a-string",
        "give the test count as a string",
        _results_file(lambda d: _entry(d).update(tests="2")),
        "cpu.eager.DEMO-1: tests must be a whole number, is '2'",
    ),
    _file_case(
        "unknown-outcome",
        "use an outcome that does not exist",
        _results_file(lambda d: _entry(d).update(outcome="passed")),
        "cpu.eager.DEMO-1: outcome 'passed' not one of pass, fail, not-applicable, not-run",
    ),
    _file_case(
        "missing-clause",
        "leave a clause out (as a file recorded before the clause was written)",
        _results_file(lambda d: d["devices"]["cpu"]["eager"].pop("DEMO-1")),
        "r.json: 1 clauses stale (DEMO-1): recorded with another version of their tests or text",
    ),
    _file_case(
        "unknown-device",
        "record a device that does not exist",
        _results_file(lambda d: d["devices"].update(tpu={})),
        "unknown device 'tpu'",
    ),
    _recorded_case(
        "recorded-partial",
        "commit the results of a partial run",
        _partial,
        "cpu.json: a partial run (1 clauses not run, e.g. DEMO-1) is not a recording",
    ),
    _recorded_case(
        "recorded-stale",
        "commit results recorded with other tests",
        lambda f: _entry_file(
            f / "2.13.0" / "meta.json", lambda d: _entry(d, device="meta").update(fingerprint="0" * 16)
        ),
        "results: 1 clauses stale on 1 releases (DEMO-1): their text, tests, the helpers those reach or the harness "
        "changed since they were recorded; refresh them with: nox -s conformance (re-runs only those)",
    ),
    _recorded_case(
        "recorded-wrong-folder",
        "put results into another version's folder",
        lambda f: (f / "2.13.0").rename(f / "2.12.1"),
        "records torch 2.13.0 but lies in folder 2.12.1",
    ),
    _recorded_case(
        "recorded-not-a-version",
        "add a folder that is not a torch version",
        lambda f: (f / "latest").mkdir(),
        "conformance/results/latest: not a torch version",
    ),
    _recorded_case(
        "recorded-missing-device",
        "leave one device file out",
        lambda f: (f / "2.13.0" / "cuda.json").unlink(),
        "2.13.0: no results for cuda",
    ),
    _file_case(
        "nested-too-deeply",
        "check a file nested too deeply to read",
        _raw(b"[" * 100_000),
        "r.json: cannot read results: nested too deeply to be a results file",
    ),
    _file_case(
        "present-a-nested-list",
        "give present as a list of lists",
        _results_file(lambda d: d.update(present=[["cpu"]])),
        "r.json: present must be a list of devices among cpu, meta, cuda, mps, each once",
    ),
    _file_case(
        "python-not-a-version",
        "give a python that is no version (on torch 2.0.1, whose compile mode depends on it)",
        _results_file(lambda d: d.update(torch="2.0.1", python="three")),
        "r.json: python 'three' is not a version",
    ),
    _file_case(
        "forged-fingerprint",
        "give an outcome a fingerprint that is no 16 hexadecimal digits",
        _results_file(lambda d: _entry(d).update(fingerprint="deadbeef")),
        "r.json: cpu.eager.DEMO-1: fingerprint 'deadbeef' is not 16 hexadecimal digits",
    ),
    _file_case(
        "suite-hash",
        "check a file of schema 3, one hash for the whole suite",
        _results_file(lambda d: d.update(schema_version=3, suite_hash="sha256:" + "0" * 64)),
        "r.json: keys ['devices', 'platform', 'present', 'python', 'schema_version', 'suite_hash', 'torch'] differ",
    ),
    _file_case(
        "other-suite",
        "check a file whose outcomes were decided by other tests",
        _results_file(lambda d: _entry(d).update(fingerprint="0" * 16)),
        "r.json: 1 clauses stale (DEMO-1): recorded with another version of their tests or text",
    ),
    _file_case(
        "key-twice",
        "give a key twice in one object (the last would win)",
        _text(_twice),
        "r.json: cannot read results: key 'outcome' given twice in one object",
    ),
    _file_case(
        "schema-a-float",
        "give the schema version as 4.0",
        _results_file(lambda d: d.update(schema_version=4.0)),
        "r.json: schema_version 4.0, expected 4",
    ),
    _file_case(
        "nan",
        "observe NaN (no JSON number)",
        _text(lambda t: t.replace('"observed": {}', '"observed": {"x": NaN}', 1)),
        "r.json: cannot read results: NaN is not a JSON number",
    ),
    _file_case(
        "infinity",
        "observe a number too large for a float (it reads as infinity)",
        _text(lambda t: t.replace('"observed": {}', '"observed": {"x": 1e999}', 1)),
        "observed must map names to plain values",
    ),
    _file_case(
        "padded-torch",
        "pad the torch version with spaces",
        _results_file(lambda d: d.update(torch=" 2.13.0 ")),
        "r.json: torch ' 2.13.0 ' is empty or has spaces around it",
    ),
    _recorded_case(
        "recorded-present-differs",
        "claim in one device file a device the recording did not have",
        _claims_cuda,
        "2.13.0: cpu.json and meta.json differ in present (['cpu', 'meta', 'cuda'], ['cpu', 'meta'])",
    ),
]
