"""The release check: argument handling, exit codes, and the clause diff."""

import subprocess
import sys

import pytest

from conformance import release_check
from conformance.harness import diff, registry, results


def doc_with(outcomes: dict[str, str], device="cpu") -> dict:
    doc = results.build(registry.default(), "2.13.0", "3.11", "x", [device], [device], {}, {})
    for cid, outcome in outcomes.items():
        doc["devices"][device][cid].update(outcome=outcome, reasons=[f"why {cid}"], tests=1)
    return doc


def test_diff_reports_each_change_with_expected_and_observed():
    old = doc_with({"DATA-1": "pass", "DATA-2": "fail", "DATA-3": "pass"})
    new = doc_with({"DATA-1": "fail", "DATA-2": "pass", "DATA-3": "not-applicable"})
    changes = diff.compare(old, new)
    assert [(c.clause, c.kind) for c in changes] == [
        ("DATA-1", "newly failing"), ("DATA-2", "newly passing"), ("DATA-3", "newly not-applicable"),
    ]
    text = diff.report(changes)
    assert "DATA-1 [cpu]: expected pass, observed fail" in text and "observed: why DATA-1" in text


def test_diff_of_identical_documents_is_empty():
    doc = doc_with({"DATA-1": "pass"})
    assert diff.compare(doc, doc) == [] and diff.report([]) == "no clause changed its outcome"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("2.16.0", ["torch==2.16.0", "numpy", "--prerelease", "allow"]),
        ("2.1.2", ["torch==2.1.2", "numpy<2", "--prerelease", "allow"]),
        ("https://example.invalid/whl/nightly/cpu", ["--pre", "torch", "--index-url",
                                                     "https://example.invalid/whl/nightly/cpu"]),
    ],
)
def test_requirements_for_each_kind_of_spec(spec, expected):
    assert release_check.requirements(spec)[0] == expected


@pytest.mark.parametrize(("spec", "message"), [("missing.whl", "cannot read wheel"), ("banana", "neither a torch")])
def test_bad_specs_are_usage_errors(spec, message):
    with pytest.raises(release_check.UsageError, match=message):
        release_check.requirements(spec)


def test_cli_exits_2_with_one_line_for_a_missing_wheel(tmp_path):
    proc = subprocess.run(
        [sys.executable, "conformance/release_check.py", str(tmp_path / "torch-9-cp311.whl")],
        cwd=release_check.ROOT, capture_output=True, text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("release check: cannot read wheel") and "Traceback" not in proc.stderr


def test_diff_ignores_devices_that_did_not_run():
    old = doc_with({"DATA-1": "not-run"}, device="cuda")
    new = doc_with({}, device="cuda")
    for entry in new["devices"]["cuda"].values():
        entry.update(outcome="not-run", reasons=["device cuda not present"], tests=0)
    new["devices"]["cuda"]["DATA-2"].update(outcome="not-applicable")
    assert diff.compare(old, new) == []
