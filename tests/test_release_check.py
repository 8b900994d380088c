"""The release check: argument handling, exit codes, and the clause diff."""

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import yaml
from packaging.version import InvalidVersion, Version

from conformance import commands, release_check
from conformance.harness import diff, registry, releases, results
from conformance.harness.devices import KNOWN
from conformance.window import companions, numpy_requirement
from tests.bad_input import PYTEST
from tests.conftest import command

PRESENT = ["cpu", "meta"]


def doc_with(outcomes: dict[str, str], device="cpu") -> dict:
    doc = results.build(registry.default(), "2.13.0", "3.11", "x", [device], [device], {}, {})
    for cid, outcome in outcomes.items():
        doc["devices"][device]["eager"][cid].update(outcome=outcome, reasons=[f"why {cid}"], tests=1)
    return doc


def test_diff_reports_each_change_with_expected_and_observed():
    old = doc_with({"DATA-1": "pass", "DATA-2": "fail", "DATA-3": "pass"})
    new = doc_with({"DATA-1": "fail", "DATA-2": "pass", "DATA-3": "not-applicable"})
    changes = diff.compare(old, new)
    assert [(c.clause, c.kind) for c in changes] == [
        ("DATA-1", "newly failing"),
        ("DATA-2", "newly passing"),
        ("DATA-3", "newly not-applicable"),
    ]
    text = diff.report(changes)
    assert "DATA-1 (MUST) [cpu, eager]: expected pass, observed fail" in text and "observed: why DATA-1" in text


def test_diff_reports_contract_changes_apart_from_observations():
    # A maintainer reading the nightly report acts on a changed promise first: MUST clauses are listed under
    # "contract changed", the others (VERSION-40: OBSERVED) under "observed detail changed", each once.
    assert registry.default().clauses["VERSION-40"].level not in diff.CONTRACT_LEVELS
    old = doc_with({"DATA-1": "pass", "VERSION-40": "pass"})
    new = doc_with({"DATA-1": "fail", "VERSION-40": "fail"})
    text = diff.report(diff.compare(old, new))
    contract, observed = text.split("observed detail changed (1):")
    assert contract.startswith("contract changed (1):") and "DATA-1 (MUST)" in contract and "VERSION-40" not in contract
    assert "VERSION-40 (OBSERVED)" in observed and "DATA-1" not in observed


def test_diff_of_identical_documents_is_empty():
    doc = doc_with({"DATA-1": "pass"})
    assert diff.compare(doc, doc) == [] and diff.report([]) == "no clause changed its outcome"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("2.16.0", ["torch==2.16.0", "--prerelease", "allow"]),
        ("2.1.2", ["torch==2.1.2", "--prerelease", "allow"]),
        ("v2.15.0", ["torch==2.15.0", "--prerelease", "allow"]),
        ("2", ["torch==2", "--prerelease", "allow"]),
        ("1!2.13.0", ["torch==1!2.13.0", "--prerelease", "allow"]),
        ("2.16.0.dev20261130", ["torch==2.16.0.dev20261130", "--prerelease", "allow"]),
        ("2.16.0rc1", ["torch==2.16.0rc1", "--prerelease", "allow"]),
        ("file:///srv/wheels", ["--pre", "torch", "--extra-index-url", "file:///srv/wheels"]),
        (
            "https://example.invalid/whl/nightly/cpu",
            ["--pre", "torch", "--extra-index-url", "https://example.invalid/whl/nightly/cpu"],
        ),
    ],
)
def test_requirements_for_each_kind_of_spec(spec, expected):
    assert release_check.requirements(spec)[0] == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("missing.whl", "cannot read wheel"),
        ("banana", "neither a torch"),
        ("", "neither a torch"),
        ("ftp://x", "neither a torch"),
        ("https://", "names no host"),
        ("file://", "names no folder"),
        ("2.16.0..1", "neither a torch"),
    ],
)
def test_bad_specs_are_usage_errors(spec, message):
    with pytest.raises(release_check.UsageError, match=message):
        release_check.requirements(spec)


def test_cli_exits_2_with_one_line_for_a_missing_wheel(tmp_path):
    proc = subprocess.run(
        [sys.executable, "conformance/release_check.py", str(tmp_path / "torch-9-cp311.whl")],
        cwd=release_check.ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("release check: cannot read wheel") and "Traceback" not in proc.stderr


def test_diff_ignores_devices_that_did_not_run():
    old = doc_with({"DATA-1": "not-run"}, device="cuda")
    new = doc_with({}, device="cuda")
    for entry in new["devices"]["cuda"]["eager"].values():
        entry.update(outcome="not-run", reasons=["device cuda not present"], tests=0)
    new["devices"]["cuda"]["eager"]["DATA-2"].update(outcome="not-applicable")
    assert diff.compare(old, new) == []


# --- numpy for a torch version ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "numpy"),
    [
        ("v2.15.0", "numpy"),
        ("2", "numpy<2"),  # 2 is 2.0
        ("1!2.13.0", "numpy"),  # an epoch
        ("2.3.1", "numpy<2"),
        ("2.4.0", "numpy"),
        ("2.16.0.dev20261130", "numpy"),
        ("2.4.0rc1", "numpy"),
    ],
)
def test_numpy_requirement_takes_any_pep440_version(version, numpy):
    assert numpy_requirement(version) == numpy


@pytest.mark.parametrize(
    ("version", "extra"), [("2.1.2", ["setuptools<81"]), ("2.1.0rc1", ["setuptools<81"]), ("2.2.0", []), ("2.15.0", [])]
)
def test_companions_add_setuptools_for_the_inductor_of_torch_2_1(version, extra):
    """torch 2.1's inductor imports pkg_resources, which uv's environments lack (the inductor mode)."""
    assert companions(version) == [numpy_requirement(version), *extra]


def test_numpy_requirement_refuses_what_is_no_version():
    with pytest.raises(InvalidVersion):
        numpy_requirement("banana")


def test_environment_slug_is_a_plain_folder_name():
    assert release_check.requirements("1!2.13.0")[1] == "torch-1-2.13.0"
    assert release_check.requirements("v2.15.0")[1] == "torch-2.15.0"


# --- wheels ---------------------------------------------------------------------------------------------------------


def zip_file(path, member="x/__init__.py"):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(member, "")
    return path


def test_a_torch_wheel_is_installed_from_its_path(tmp_path):
    wheel = zip_file(tmp_path / "torch-2.16.0-cp311-cp311-linux_x86_64.whl")
    assert release_check.requirements(str(wheel)) == ([str(wheel)], "torch-2.16.0-cp311-cp311-linux_x86_64")


@pytest.mark.parametrize(
    ("name", "is_zip", "message"),
    [
        ("torch-2.16.0-cp311-cp311-linux_x86_64.whl", False, "cannot read wheel .*: not a zip archive"),
        ("numpy-2.0.0-cp311-cp311-linux_x86_64.whl", True, "is numpy, not torch"),
        ("torch.whl", True, "cannot read wheel .*torch.whl"),
    ],
)
def test_bad_wheels_are_usage_errors(tmp_path, name, is_zip, message):
    path = tmp_path / name
    zip_file(path) if is_zip else path.write_text("not a wheel")
    with pytest.raises(release_check.UsageError, match=message):
        release_check.requirements(str(path))


# --- recorded results, --against: all checked before anything is installed -----------------------------------------


def whole_doc(version="2.13.0", fail=()) -> dict:
    """A results document of a whole run: every clause that can run on cpu and meta passed (or is in ``fail``)."""
    doc = results.build(registry.default(), version, "3.11", "x", list(KNOWN), PRESENT, {}, {})
    for (device, mode), table in results.tables(doc):
        for cid, entry in table.items():
            if device in PRESENT and entry["outcome"] == "not-run":
                entry.update(outcome="pass", tests=1, reasons=[])
            if cid in fail and device == "cpu" and mode == "eager":
                entry.update(outcome="fail", tests=1, reasons=[f"why {cid}"])
    return doc


def passing_clause() -> str:
    return next(cid for cid, entry in whole_doc()["devices"]["cpu"]["eager"].items() if entry["outcome"] == "pass")


def record(results_dir, version="2.13.0", **kw):
    return results.write(whole_doc(version, **kw), str(results_dir / Version(version).public / "{device}.json"))


@pytest.fixture
def results_dir(tmp_path, monkeypatch):
    """A results folder of its own (not yet created) in place of conformance/results."""
    folder = tmp_path / "results"
    monkeypatch.setattr(results, "RESULTS_DIR", folder)
    return folder


@pytest.fixture
def installs(monkeypatch):
    """Records every install the release check starts, and stops it there (exit 2, "install reached")."""
    calls = []

    def install(spec):
        calls.append(spec)
        raise release_check.UsageError("install reached")

    monkeypatch.setattr(release_check, "install", install)
    return calls


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("release check: ") and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("spec", ["v2.15.0", "2", "1!2.13.0", "2.16.0.dev20261130"])
def test_any_pep440_version_gets_to_the_install(results_dir, installs, capsys, spec):
    record(results_dir)
    assert release_check.main([spec]) == 2
    assert one_line(capsys) == "release check: install reached" and installs == [spec]


def test_against_is_checked_before_installing(results_dir, installs, capsys):
    record(results_dir, "2.0.1")
    record(results_dir, "2.13.0")
    assert release_check.main(["2.16.0", "--against", "9.9.9"]) == 2
    assert one_line(capsys) == "release check: no recorded results for torch 9.9.9; recorded versions: 2.0.1, 2.13.0"
    assert release_check.main(["2.16.0", "--against", "latest"]) == 2
    assert "--against 'latest' is not a version" in one_line(capsys)
    assert installs == []


def test_against_names_a_recorded_version_in_any_spelling():
    assert commands.check_against("v2.0.1", ["2.0.1", "2.13.0"])[0] == "2.0.1"
    assert commands.check_against("2.13", ["2.0.1", "2.13.0"])[0] == "2.13.0"
    # a minor release: its recorded patch, as `diff` compares any 2.12.x with it; a patch must be recorded itself
    assert commands.check_against("2.12", ["2.0.1", "2.12.1"]) == ("2.12.1", "--against 2.12: its recorded patch")
    with pytest.raises(commands.UsageError, match="no recorded results for torch 2.12.0"):
        commands.check_against("2.12.0", ["2.0.1", "2.12.1"])


def non_version_folder(folder):
    record(folder)
    (folder / "old").mkdir()


def empty_version_folder(folder):
    record(folder)
    (folder / "2.99.0").mkdir()


def missing_device_file(folder):
    record(folder)
    (folder / "2.13.0" / "mps.json").unlink()


def corrupt_file(folder):
    record(folder)
    (folder / "2.13.0" / "cpu.json").write_bytes(b"\xff\xfe{")


def forged_fingerprint(folder):
    record(folder)
    path = folder / "2.13.0" / "cpu.json"
    path.write_text(re.sub('"fingerprint": "', '"fingerprint": "x', path.read_text(), count=1))


@pytest.mark.parametrize(
    ("setup", "says"),
    [
        (lambda folder: None, "no recorded results to compare with: "),
        (lambda folder: folder.mkdir(), "no recorded results to compare with in "),
        (non_version_folder, "/old: not a torch version"),
        (empty_version_folder, "/2.99.0: no results for cpu, meta, cuda, mps"),
        (missing_device_file, "/2.13.0: no results for mps"),
        (corrupt_file, "cpu.json: cannot read results"),
        (forged_fingerprint, "cpu.json: cpu.compile.CLONE-1: fingerprint 'x"),
    ],
    ids=["no-folder", "empty", "non-version", "empty-version", "missing-device", "corrupt", "forged-fingerprint"],
)
def test_bad_recorded_results_are_one_line_before_installing(results_dir, installs, capsys, setup, says):
    setup(results_dir)
    assert release_check.main(["2.16.0"]) == 2
    assert says in one_line(capsys) and installs == []


def test_newest_recorded_goes_by_recorded_versions(results_dir, monkeypatch):
    monkeypatch.setattr(results, "recorded_versions", lambda folder: ["2.0.1", "2.9.1", "2.13.0"])
    assert not results_dir.exists()  # so no folder of its own is read
    assert release_check.newest_recorded() == "2.13.0"
    assert release_check.newest_recorded(exclude="2.13.0") == "2.9.1"
    assert release_check.newest_recorded(exclude="v2.13") == "2.9.1"
    monkeypatch.setattr(results, "recorded_versions", lambda folder: ["2.13.0"])
    assert release_check.newest_recorded(exclude="2.13.0") == "2.13.0"  # the only one: itself


def test_newest_recorded_refuses_a_folder_that_is_no_version(results_dir):
    non_version_folder(results_dir)
    with pytest.raises(results.ResultsError, match="old: not a torch version"):
        release_check.newest_recorded()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["2.16.0", "--bogus"], "unrecognized arguments: --bogus"),
        ([], "the following arguments are required: torch"),
        (["2.16.0", "--against"], "argument --against: expected one argument"),
    ],
)
def test_usage_errors_are_one_line(results_dir, installs, capsys, argv, says):
    record(results_dir)
    assert release_check.main(argv) == 2
    assert says in one_line(capsys) and installs == []


# --- never a traceback --------------------------------------------------------------------------------------------


def test_an_unexpected_error_is_one_line_and_exit_2(monkeypatch, capsys):
    def boom(spec):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(release_check, "requirements", boom)
    assert release_check.main(["2.16.0"]) == 2
    assert one_line(capsys) == "release check: unexpected error: RuntimeError: boom; second line"


def test_an_interrupt_is_one_line_and_exit_130(monkeypatch, capsys):
    def interrupted(spec):
        raise KeyboardInterrupt

    monkeypatch.setattr(release_check, "requirements", interrupted)
    assert release_check.main(["2.16.0"]) == 130
    assert one_line(capsys) == "release check: interrupted"


# --- installing ---------------------------------------------------------------------------------------------------


def fake_subprocess(monkeypatch, run):
    monkeypatch.setattr(
        release_check, "subprocess", SimpleNamespace(run=run, CompletedProcess=subprocess.CompletedProcess)
    )


@pytest.mark.parametrize(("spec", "numpy"), [("2.16.0", "numpy"), ("2.3.1", "numpy<2")])
def test_install_compiles_bytecode_and_adds_what_the_suite_needs(tmp_path, monkeypatch, spec, numpy):
    calls = []

    def run(argv, **kwargs):
        calls.append((argv, kwargs.get("env") or {}))
        return subprocess.CompletedProcess(argv, 0, f"{spec}+cpu\n" if "-c" in argv else "", "")

    monkeypatch.setattr(release_check, "ENVS", tmp_path)
    fake_subprocess(monkeypatch, run)
    assert release_check.install(spec) == (tmp_path / f"torch-{spec}" / "bin" / "python", f"{spec}+cpu")
    torch, then = [(argv, env) for argv, env in calls if argv[:3] == ["uv", "pip", "install"]]
    assert torch[1].get("UV_COMPILE_BYTECODE") == "1" and f"torch=={spec}" in torch[0]
    assert set(release_check.SUITE_NEEDS) <= set(torch[0])
    assert then[0][-1] == numpy  # numpy goes with the torch installed: the same for a wheel or an index URL


def test_an_install_that_fails_is_a_usage_error(tmp_path, monkeypatch):
    def run(argv, **kwargs):
        if argv[:3] != ["uv", "pip", "install"]:
            return subprocess.CompletedProcess(argv, 0, "", "")
        stderr = "  × No solution found\n  ╰─▶ Because there is no version of torch==9.9.9, ...\n"
        return subprocess.CompletedProcess(argv, 1, "", stderr)

    monkeypatch.setattr(release_check, "ENVS", tmp_path)
    fake_subprocess(monkeypatch, run)
    with pytest.raises(release_check.UsageError, match="cannot install 9.9.9: .*no version of torch==9.9.9"):
        release_check.install("9.9.9")


def test_no_uv_is_a_usage_error(tmp_path, monkeypatch):
    def run(argv, **kwargs):
        raise FileNotFoundError(argv[0])

    monkeypatch.setattr(release_check, "ENVS", tmp_path)
    fake_subprocess(monkeypatch, run)
    with pytest.raises(release_check.UsageError, match="uv is not installed"):
        release_check.install("2.16.0")


# --- the suite run: partial, failed, or what changed ---------------------------------------------------------------


def fake_suite(monkeypatch, tmp_path, write=None, code=0, output=""):
    """The release check with an installed torch whose suite run writes ``write(results_template)``."""
    python = tmp_path / "env" / "bin" / "python"
    python.parent.mkdir(parents=True)
    monkeypatch.setattr(release_check, "install", lambda spec: (python, "2.13.0"))

    def run(argv, **kwargs):
        if write:
            write(argv[argv.index("--results") + 1])
        return subprocess.CompletedProcess(argv, code, output, "")

    fake_subprocess(monkeypatch, run)


def bad_json(template):
    for device in KNOWN:
        path = template.format(device=device)
        Path(path).write_text("{")


@pytest.mark.parametrize(
    ("code", "output", "write", "says"),
    [
        (
            4,
            "ERROR: usage: pytest\npytest: error: unrecognized arguments: --x\n  rootdir: /x\n",
            None,
            "the suite did not complete on torch 2.13.0 (pytest exit 4; its output is in ",
        ),
        (2, "!!! KeyboardInterrupt !!!\n1 passed in 3s\n", None, "the suite did not complete on torch 2.13.0"),
        (1, "", None, "the suite wrote no results on torch 2.13.0"),
        (0, "", bad_json, "the suite wrote invalid results"),
        (
            0,
            "",
            lambda t: results.write(
                results.build(registry.default(), "2.13.0", "3.11", "x", list(KNOWN), [], {}, {}), t
            ),
            "no test of the suite ran on any device, nothing to compare",
        ),
    ],
    ids=["usage", "interrupted", "no-results", "invalid-results", "nothing-ran"],
)
def test_a_suite_run_that_proves_nothing_is_one_line_and_exit_2(
    results_dir, tmp_path, monkeypatch, capsys, code, output, write, says
):
    record(results_dir)
    before = sorted(p.relative_to(results_dir) for p in results_dir.rglob("*"))
    fake_suite(monkeypatch, tmp_path, write, code, output)
    assert release_check.main(["2.13.0"]) == 2
    assert says in one_line(capsys)
    assert sorted(p.relative_to(results_dir) for p in results_dir.rglob("*")) == before


def test_usage_error_of_the_suite_names_its_error_line(results_dir, tmp_path, monkeypatch, capsys):
    record(results_dir)
    fake_suite(monkeypatch, tmp_path, None, 4, "ERROR: usage: pytest\npytest: error: unrecognized arguments: --x\n")
    release_check.main(["2.13.0"])
    assert one_line(capsys).endswith(": ERROR: usage: pytest")


def test_a_change_against_the_same_version_is_found_before_it_is_overwritten(
    results_dir, tmp_path, monkeypatch, capsys
):
    record(results_dir)
    cid = passing_clause()
    fake_suite(monkeypatch, tmp_path, lambda t: results.write(whole_doc(fail=(cid,)), t), code=1)
    assert release_check.main(["2.13.0", "--against", "2.13.0"]) == 1
    out = capsys.readouterr().out
    level = registry.default().clauses[cid].level
    assert f"{cid} ({level}) [cpu, eager]: expected pass, observed fail" in out and "results written to" in out
    assert results.load(results_dir / "2.13.0" / "cpu.json")["devices"]["cpu"]["eager"][cid]["outcome"] == "fail"
    results.check_recorded(results_dir)  # what was written passes as a recording


def test_nothing_changed_is_exit_0(results_dir, tmp_path, monkeypatch, capsys):
    record(results_dir)
    recorded = (results_dir / "2.13.0" / "cpu.json").read_bytes()
    fake_suite(monkeypatch, tmp_path, lambda t: results.write(whole_doc("2.13.0", fail=(passing_clause(),)), t))
    assert release_check.main(["2.13.0", "--no-write"]) == 1
    fake_suite(monkeypatch, tmp_path / "again", lambda t: results.write(whole_doc("2.13.0"), t))
    assert release_check.main(["2.13.0", "--no-write"]) == 0  # 2.13.0 is the only recorded one: against itself
    out = capsys.readouterr().out
    assert "torch 2.13.0 against recorded 2.13.0:\nno clause changed its outcome" in out
    assert "results written" not in out and (results_dir / "2.13.0" / "cpu.json").read_bytes() == recorded


def test_a_partial_run_is_reported_but_not_written(results_dir, tmp_path, monkeypatch, capsys):
    record(results_dir)
    recorded = (results_dir / "2.13.0" / "cpu.json").read_bytes()
    cid = passing_clause()

    def partial(template):
        doc = whole_doc("2.13.0")
        doc["devices"]["cpu"]["eager"][cid].update(outcome="not-run", tests=0, reasons=["deselected"])
        results.write(doc, template)

    fake_suite(monkeypatch, tmp_path, partial, code=0)
    assert release_check.main(["2.13.0"]) == 1  # a clause that ran before did not run: a change, never all-clear
    captured = capsys.readouterr()
    level = registry.default().clauses[cid].level
    assert f"{cid} ({level}) [cpu, eager]: expected pass, observed not-run" in captured.out
    assert "results not written: a partial run (1 clauses not run" in captured.err
    assert (results_dir / "2.13.0" / "cpu.json").read_bytes() == recorded


# --- the site's pages of the release boundaries in between --------------------------------------------------------


def test_the_pages_of_the_release_boundaries_in_between_are_named(results_dir, monkeypatch, capsys):
    record(results_dir, "2.0.1")
    record(results_dir, "2.13.0")
    new = whole_doc("2.9.1")
    monkeypatch.setattr(release_check, "install", lambda spec: (Path("python"), "2.9.1"))
    monkeypatch.setattr(
        release_check,
        "run_suite",
        lambda python, out, spec, args: {d: {**new, "devices": {d: new["devices"][d]}} for d in KNOWN},
    )
    release_check.main(["2.9.1", "--against", "2.0.1", "--no-write"])
    out = capsys.readouterr().out
    crossed = [b for b in releases.boundaries() if Version("2.0.1") < b <= Version("2.9.1")]
    assert crossed
    for b in crossed:
        assert f"  torch {b}: _build/html/docs/releases/torch-{b}.html\n" in out
    assert "torch-2.11.html" not in out


# --- what an index serves, and what is said of it -------------------------------------------------------------------


def simple_index(folder: Path, *wheels: str) -> Path:
    """A simple-API index in ``folder``: a torch/ page linking these wheel names (the files need not exist)."""
    (folder / "torch").mkdir(parents=True)
    links = "".join(f'<a href="../files/{name.replace("+", "%2B")}">{name}</a><br>\n' for name in wheels)
    (folder / "torch" / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")
    return folder


def test_an_index_serves_the_torch_versions_its_page_links(tmp_path, serve):
    index = simple_index(
        tmp_path,
        "torch-2.16.0.dev20261201+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torch-2.15.0-cp311-cp311-win_amd64.whl",
        "torchvision-0.1-py3-none-any.whl",
    )
    expected = {Version("2.16.0.dev20261201+cpu"), Version("2.15.0")}
    assert release_check.served_versions(serve(index)) == expected
    assert release_check.served_versions(serve(index) + "/") == expected
    assert release_check.served_versions(index.as_uri()) == expected


@pytest.mark.parametrize(
    ("setup", "says"),
    [
        (lambda folder: folder.mkdir(), "serves no torch: .*/torch/ answers HTTP 404"),
        (lambda folder: simple_index(folder, "numpy-2.0-py3-none-any.whl"), "serves no torch: its page .* lists no"),
    ],
    ids=["no-torch-page", "no-torch-wheel"],
)
def test_an_index_without_torch_is_refused_before_installing(tmp_path, serve, setup, says):
    setup(tmp_path / "index")
    with pytest.raises(release_check.UsageError, match=says):
        release_check.served_versions(serve(tmp_path / "index"))


def test_an_index_with_a_password_sends_it_and_never_shows_it(tmp_path, serve):
    url = serve(simple_index(tmp_path, "torch-2.15.0-cp311-cp311-win_amd64.whl"))
    with_password = url.replace("http://", "http://me:s3cret@")
    assert release_check.served_versions(with_password) == {Version("2.15.0")}
    assert release_check.redacted(with_password) == url.replace("http://", "http://***@")
    assert release_check.requirements(with_password)[1].find("s3cret") == -1  # not in the environment's name
    assert release_check.redacted("2.16.0") == "2.16.0" and release_check.redacted(url) == url


@pytest.mark.parametrize(
    ("output", "cause"),
    [
        (  # pytest's INTERNALERROR block: the exception it ends with, not "Traceback (most recent call last):"
            "INTERNALERROR> Traceback (most recent call last):\n"
            'INTERNALERROR>   File "/x/_pytest/main.py", line 283, in wrap_session\n'
            "INTERNALERROR>     session.exitstatus = doit(config, session) or 0\n"
            "INTERNALERROR> ImportError: libtorch_cpu.so: cannot open shared object file\n",
            "ImportError: libtorch_cpu.so: cannot open shared object file",
        ),
        ("collected 3 items\nERROR: usage: unknown --mode 'x'\nmore\n", "ERROR: usage: unknown --mode 'x'"),
        ("E   RuntimeError: boom\n==== 1 failed ====\n", "RuntimeError: boom"),
        ("", "no output"),
    ],
    ids=["internalerror", "usage", "exception", "empty"],
)
def test_the_cause_of_a_failed_command_is_its_telling_line(output, cause):
    assert release_check._cause(output) == cause


# --- the nightly workflow's release check, end to end --------------------------------------------------------------

NIGHTLY = release_check.ROOT / ".github" / "workflows" / "nightly.yml"


@pytest.fixture(scope="session")
def torch_wheel(tmp_path_factory) -> Path:
    """The wheel of the torch these tests run on: CONFORMANCE_TORCH_WHEEL (nox -s tests sets it), else pip's."""
    if given := os.environ.get("CONFORMANCE_TORCH_WHEEL"):
        return Path(given)
    import torch

    folder = tmp_path_factory.mktemp("wheels")
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", "-d", str(folder)]
    subprocess.run([*pip, f"torch=={torch.__version__}"], check=True, timeout=1800)
    return next(folder.glob("torch-*.whl"))


def nightly_check_step() -> dict:
    workflow = yaml.safe_load(NIGHTLY.read_text(encoding="utf-8"))
    return next(step for step in workflow["jobs"]["nightly"]["steps"] if step.get("id") == "check")


def test_the_nightly_check_runs_the_suite_on_a_torch_from_a_local_index(demo, serve, torch_wheel, tmp_path):
    # A simple index of one torch wheel, served over http on 127.0.0.1 as PyTorch's nightly index is over https.
    index = simple_index(tmp_path / "www" / "simple", torch_wheel.name)
    (index / "files").mkdir()
    (index / "files" / torch_wheel.name).symlink_to(torch_wheel)  # where the page links it: ../files/
    url = serve(tmp_path / "www") + "/simple"
    # The demo's recording of the torch these tests run on: what the nightly's results are compared with.
    recorded_folder = demo / "conformance" / "results" / Version(torch.__version__).public
    code, output = command(
        demo,
        [*PYTEST, "--record", "--mode", "eager,compile,inductor", "--results", f"{recorded_folder}/{{device}}.json"],
    )
    assert code == 0, output
    before = results.stamps(recorded_folder.glob("*.json"))

    step = nightly_check_step()
    assert "TORCH_INDEX" in step["env"] and '"$TORCH_INDEX"' in step["run"]  # the URL is all this test replaces
    outputs = tmp_path / "github-output"
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # `python`: the one of these tests
    env = {"TORCH_INDEX": url, "GITHUB_OUTPUT": str(outputs), "PATH": path}
    proc = subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=demo,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, **env},
    )

    report = (demo / "diff.txt").read_text()
    assert outputs.read_text() == "code=0\n", proc.stdout + proc.stderr
    assert f"against recorded {recorded_folder.name}:" in report and "no clause changed its outcome" in report
    assert (demo / "error.txt").read_text() == ""
    assert sorted(results.rewritten(before)) == sorted(before)  # the nightly writes its results
    assert f"results written to conformance/results/{recorded_folder.name}/" in report
