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


def _file_case(id, what, setup, says, keeps=(FILE,)) -> Case:
    return Case(id=f"results-{id}", what=what, argv=(*CHECK, FILE), says=says, exit=2, setup=setup, keeps=keeps)


def _recorded_case(id, what, change, says) -> Case:
    return Case(id=f"results-{id}", what=what, argv=CHECK, says=says, exit=2, setup=_recorded(change))


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
        "r.json: schema_version 1, expected 3",
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
                    mode: {**table, "DEMO-4": {"outcome": "pass", "tests": 1, "reasons": [], "observed": {}}}
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
        "leave a clause out",
        _results_file(lambda d: d["devices"]["cpu"]["eager"].pop("DEMO-1")),
        "cpu.eager: clauses missing: DEMO-1",
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
        lambda f: (f / "2.13.0" / "meta.json").write_text(
            (f / "2.13.0" / "meta.json").read_text().replace('"sha256:', '"sha256:0')
        ),
        "meta.json: stale, recorded with another version of the tests; refresh them with: nox -s",
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
]
