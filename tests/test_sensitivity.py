"""Each conformance test file must fail when the behaviour it states is broken.

For every case of ``tests/sabotage/<page>.py`` this runs the page's tests with the
sabotage applied (the tests that name the listed clauses) and checks, from the results file, that the listed
clauses (at least those) fail on cpu.
"""

import importlib
import json
import multiprocessing
import os
import pkgutil
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import tests.sabotage

ROOT = Path(__file__).resolve().parents[1]


def _cases():
    for info in pkgutil.iter_modules(tests.sabotage.__path__):
        module = importlib.import_module(f"tests.sabotage.{info.name}")
        for function, test_file, clauses in module.CASES:
            yield pytest.param(info.name, function, test_file, clauses, id=f"{info.name}:{function}")


# Each sabotage run is a pytest of its own (a sabotage patches torch for the whole process). They start from a
# process that has imported torch, pytest and the harness once (multiprocessing's forkserver): a fork of it instead
# of a new interpreter saves the imports, most of a run of one test file, and tests.preload computes what each run
# would compute again (the registry, the fingerprints' reach).
PRELOADED = [
    "torch",
    "pytest",
    "conformance.harness.plugin",
    "conformance.harness.opdb",
    "tests.sabotage",
    "tests.preload",
]


def run_conformance(tmp_path, *args, env=None):
    """Run the conformance suite in a process of its own; return (what it did: returncode, stdout, stderr, and the
    results doc or None)."""
    out, log = tmp_path / "results.json", tmp_path / "pytest-output.txt"
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOADED)
    child = context.Process(
        target=_pytest_main, args=(["-p", "no:cacheprovider", "--results", str(out), *args], env or {}, str(log))
    )
    child.start()
    child.join(timeout=600)
    if child.exitcode is None:
        child.kill()
        child.join()
    output = log.read_text(errors="replace") if log.exists() else ""
    run = SimpleNamespace(returncode=child.exitcode, stdout=output, stderr="")
    return run, (json.loads(out.read_text()) if out.exists() else None)


def _pytest_main(args, env, log):
    """In the forked process: pytest in the project root, its output to ``log``."""
    os.environ.update(env)
    os.chdir(ROOT)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.exit(int(pytest.main(args)))


def run_sabotaged(tmp_path, sabotage: str, *args) -> dict:
    """The conformance suite on cpu with ``sabotage`` (``module:function`` of tests/sabotage) applied, which must
    fail (exit 1); its results doc."""
    proc, doc = run_conformance(tmp_path, "-p", "tests.sabotage", "--device", "cpu", *args, env={"SABOTAGE": sabotage})
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    return doc


def failing(doc, device="cpu", mode="eager"):
    return {cid for cid, entry in doc["devices"][device][mode].items() if entry["outcome"] == "fail"}


def _tests_naming(test_file: str, clauses: set[str]) -> list[str]:
    """The tests of ``test_file`` that name one of ``clauses`` (as the fingerprints read them; a test whose marker is
    computed names them all): the claim is about them, and the page's other tests would only cost time."""
    from conformance.harness import fingerprints as fp

    names = [u.name for u in fp.units() if u.path.name == test_file and (u.clauses is None or u.clauses & set(clauses))]
    return [f"conformance/tests/{test_file}::{name}" for name in names] or [f"conformance/tests/{test_file}"]


@pytest.mark.parametrize(("module", "function", "test_file", "clauses"), list(_cases()))
def test_sabotage_makes_clauses_fail(tmp_path, module, function, test_file, clauses):
    doc = run_sabotaged(tmp_path, f"{module}:{function}", *_tests_naming(test_file, clauses))
    missed = clauses - failing(doc)
    assert not missed, f"sabotage {function} should make {sorted(missed)} fail; failing: {sorted(failing(doc))}"


def sabotaged_clauses() -> set[str]:
    """The clauses some sabotage case makes fail: those of the CASES tables, and the compiled divergences that the
    harness sabotages below break."""
    named = {cid for case in _cases() for cid in case.values[3]}
    return named | DIVERGENT | INDUCTOR_DIVERGENT


@pytest.mark.parametrize(
    ("function", "why"),
    [("second_rank_hangs", "still running"), ("second_rank_crashes", "died of signal 11")],
)
def test_a_hung_or_crashed_rank_is_a_failing_outcome_within_its_bound(tmp_path, function, why):
    """A rank of a mesh of two that hangs or dies (tests/sabotage/dtensor.py) ends its clauses' tests as failures
    that say so, in about the time bound of the hung run, never a hung suite (issue 32)."""
    from tests.sabotage.dtensor import HUNG_RANK_BOUND

    start = time.monotonic()
    doc = run_sabotaged(
        tmp_path, f"dtensor:{function}", "conformance/tests/test_dtensor.py::test_update_writes_each_ranks_shard"
    )
    took = time.monotonic() - start
    entry = doc["devices"]["cpu"]["eager"]["DTENSOR-15"]
    assert entry["outcome"] == "fail" and why in " ".join(entry["reasons"]), entry
    assert took < HUNG_RANK_BOUND + 60, f"{function}: the run took {took:.0f} s, its bound is {HUNG_RANK_BOUND} s"


def test_every_must_clause_has_a_sabotage_case():
    """No new MUST clause without a sabotage case; the list of those without one only shrinks (issue 31)."""
    from conformance.harness import registry
    from tests.sabotage import WITHOUT_CASE

    must = {c.id for c in registry.default().clauses.values() if c.level == "MUST" and not c.withdrawn}
    covered = sabotaged_clauses()
    assert not (missing := sorted(must - covered - WITHOUT_CASE)), (
        f"MUST clauses no sabotage case breaks: {', '.join(missing)}; add a case to tests/sabotage/<page>.py"
    )
    assert not (done := sorted(WITHOUT_CASE & covered | WITHOUT_CASE - must)), (
        f"take {', '.join(done)} out of tests/sabotage WITHOUT_CASE: each has a case now, or is no MUST clause"
    )


def test_sabotage_cases_cover_every_page():
    from conformance.harness import registry

    modules = {info.name for info in pkgutil.iter_modules(tests.sabotage.__path__)}
    assert set(registry.default().pages()) <= modules | {"index"}, "each spec page needs tests/sabotage/<page>.py"


# Clauses about compile mode only: those whose compiled behaviour differs from eager (a run that ignores the mode
# must make them fail), and those that state, for a range of releases, that compiled code behaves as eager does.
# (Classified by reading the clauses; to be confirmed by running the sabotage on every release, see issue 10. The
# recorded layers confirm it on every release: a compiled test whose rerun uncompiled gives another outcome records
# one, test_recorded_layers_are_divergences_only. COPY-91 (the int64 copy counts 2) came here from SAME_AS_EAGER by
# it; DATA-92 and INPLACE-94 went back once their tests checked only their own statement, not DATA-91's refusal or
# INPLACE-99/100's `CopyBackwards`.)
DIVERGENT = {
    "CLONE-90",
    "CLONE-91",
    "COMPILE-7",
    "COMPILE-9",
    "COMPILE-90",
    "COPY-90",
    "COPY-91",
    "COPY-92",
    "COPY-93",
    "COPY-94",
    "COPY-95",
    "COPY-96",
    "DATA-90",
    "DATA-91",
    "DATA-93",
    "DATA-94",
    "DATA-95",
    "DTENSOR-26",
    "DTENSOR-27",
    "DTENSOR-28",
    "DTENSOR-31",
    "DATA-96",
    "DATA-97",
    "DATA-98",
    "DATA-101",
    "DATA-102",
    "DETACH-90",
    "DETACH-91",
    "DETACH-92",
    "FUNC-90",
    "FUNC-91",
    "FUNC-92",
    "GRAD-91",
    "GRAD-92",
    "INDEX-90",
    "INDEX-91",
    "INDEX-92",
    "INDEX-93",
    "INDEX-94",
    "INDEX-95",
    "INDEX-96",
    "INDEX-97",
    "INDEX-99",
    "INFER-90",
    "INFER-91",
    "INPLACE-90",
    "INPLACE-91",
    "INPLACE-92",
    "INPLACE-93",
    "INPLACE-97",
    "INPLACE-99",
    "INPLACE-100",
    "NOGRAD-91",
    "NOGRAD-92",
    "NOGRAD-93",
    "OOP-90",
    "PUPD-90",
    "PUPD-92",
    "REBIND-90",
    "REQGRAD-90",
    "SET-90",
    "SET-91",
    "SET-92",
    "SET-93",
    "SET-94",
    "SET-95",
    "SET-96",
    "SET-97",
    "SET-99",
    "SWAP-90",
    "SWAP-92",
    "VERSION-91",
    "VERSION-94",
    "VERSION-95",
    "VERSION-98",
    "VERSION-99",
    "VIEW-91",
    "VIEW-93",
    "VIEW-94",
    "VIEW-95",
    "VIEW-96",
    "VIEW-97",
    "VIEW-98",
}
# Divergences of inductor alone: with aot_eager in its place (and eagerly) their tests fail.
INDUCTOR_DIVERGENT = {
    "DATA-103",
    "DATA-104",
    "DTENSOR-29",
    "DTENSOR-30",
    "INFER-92",
    "INFER-93",
    "INFER-94",
    "INPLACE-101",
    "INPLACE-102",
    "NOGRAD-94",
    "VERSION-101",
    "VERSION-102",
    "VERSION-103",
}
# Divergences whose tests compile their step in a rank of its own (conformance/harness/ranks.py; on 2.1 inductor's
# compilation kills the process): the harness's attribution rerun swaps the backend the ranks read, but counts no
# step of the test process, so it records no layer. Their clauses state the layer from the other backend's recorded
# outcome (with aot_eager the same steps write: DTENSOR-28 on 2.2, DTENSOR-31 on 2.1).
COMPILED_IN_RANKS = {"DTENSOR-29", "DTENSOR-30"}
# A divergence on meta only: the run below (cpu) cannot see it.
DIVERGENT_ON_META = {"COMPILE-10", "COPY-97", "INDEX-98", "INPLACE-95", "INPLACE-96", "VERSION-93"}
# SAME_AS_EAGER: for a range of releases compiled code behaves as eager does, or what the clause's tests check
# holds eagerly too (VIEW-90: its tests check the message fragment, which the eager error has as well; INPLACE-98
# and VERSION-100 are UNSPECIFIED: their tests record, they cannot fail).
SAME_AS_EAGER = {
    "COMPILE-6",
    "DATA-92",
    "DATA-99",
    "DATA-100",
    "DTENSOR-25",
    "GRAD-90",
    "INPLACE-94",
    "INPLACE-98",
    "NOGRAD-90",
    "PUPD-91",
    "SET-98",
    "SWAP-91",
    "VERSION-90",
    "VERSION-92",
    "VERSION-96",
    "VERSION-97",
    "VERSION-100",
    "VIEW-90",
    "VIEW-92",
}


def test_every_compile_only_clause_is_classified():
    from conformance.harness import registry

    compile_only = {c.id for c in registry.default().clauses.values() if c.compiled_only}
    assert compile_only == DIVERGENT | DIVERGENT_ON_META | SAME_AS_EAGER | INDUCTOR_DIVERGENT
    assert not DIVERGENT & SAME_AS_EAGER and not DIVERGENT_ON_META & (DIVERGENT | SAME_AS_EAGER)
    assert not INDUCTOR_DIVERGENT & (DIVERGENT | DIVERGENT_ON_META | SAME_AS_EAGER)


def test_a_compiled_divergence_is_an_observation():
    """What compiled code does where eager code does otherwise is no promise (registry.DETAILS["compiled"]): no clause
    of DIVERGENT, DIVERGENT_ON_META or INDUCTOR_DIVERGENT is at a contract level."""
    from conformance.harness import registry

    clauses = registry.default().clauses
    contract = sorted(
        cid
        for cid in DIVERGENT | DIVERGENT_ON_META | INDUCTOR_DIVERGENT
        if clauses[cid].level not in ("OBSERVED", "UNSPECIFIED")
    )
    assert not contract, f"compiled divergences at a contract level: {', '.join(contract)}: make them OBSERVED"


def _recorded_layers() -> dict[tuple[str, str, str, str], str | None]:
    """{(clause, torch, device, mode): its recorded diverging layer, or None} for every compiled pass recorded."""
    from conformance.harness import results, status

    return {
        (cid, version, device, mode): entry.get("observed", {}).get("diverging layer")
        for (version, _), doc in status.recorded().items()
        for (device, mode), table in results.tables(doc)
        if mode != "eager"
        for cid, entry in table.items()
        if entry["outcome"] == "pass"
    }


def test_recorded_layers_are_divergences_only(fresh_results):
    """A layer is recorded where a compiled test's rerun uncompiled gives another outcome (modes.Runner.layer): on
    every release and device, never for the clauses whose compiled tests check what holds eagerly too, and always
    for the divergences where they pass on cpu."""
    layers = _recorded_layers()
    same = sorted(
        {f"{cid} ({v}, {m}: {layer})" for (cid, v, _, m), layer in layers.items() if layer and cid in SAME_AS_EAGER}
    )
    assert not same, f"SAME_AS_EAGER clauses with a diverging layer: {', '.join(same)}"
    divergent = (DIVERGENT | INDUCTOR_DIVERGENT) - COMPILED_IN_RANKS
    unnamed = sorted(
        {
            f"{cid} ({v}, {m})"
            for (cid, v, d, m), layer in layers.items()
            if d == "cpu" and cid in divergent and not layer
        }
    )
    assert not unnamed, f"divergences passing compiled without a diverging layer: {', '.join(unnamed)}"


def test_run_ignoring_the_mode_fails_the_divergences(tmp_path):
    """Sabotage of the harness: a ``run`` fixture that ignores the mode makes the divergence clauses fail."""
    import torch

    from conformance.harness import registry

    clauses = registry.default().clauses
    expected = {
        cid
        for cid in DIVERGENT
        if clauses[cid].applies_to(torch.__version__) and not clauses[cid].excludes_device("cpu")
    }
    files = sorted(
        {
            str(p.relative_to(ROOT))
            for p in (ROOT / "conformance" / "tests").glob("test_*.py")
            for cid in expected
            if f'"{cid}"' in p.read_text()
        }
    )
    if not expected:
        pytest.skip(f"no divergence clause applies to torch {torch.__version__}")
    doc = run_sabotaged(tmp_path, "compile:run_ignores_mode", "--mode", "compile", *files)
    failed = failing(doc, mode="compile")
    assert expected <= failed, f"not failing with the mode ignored: {sorted(expected - failed)}"


def test_run_ignoring_the_backend_fails_the_inductor_divergences(tmp_path):
    """Sabotage of the harness: a ``run`` fixture that compiles with aot_eager in the inductor mode makes the
    inductor divergence clauses fail (INFER-92 among them: the update inductor accepts, aot_eager refuses)."""
    import torch

    from conformance.harness import registry

    clauses = registry.default().clauses
    expected = {cid for cid in INDUCTOR_DIVERGENT if clauses[cid].applies_to(torch.__version__)}
    if not expected:
        pytest.skip(f"no inductor divergence clause applies to torch {torch.__version__}")
    tests = [
        t
        for f in ("test_data.py", "test_inference_mode.py", "test_version_counter.py")
        for t in _tests_naming(f, expected)
    ]
    # a few members of INFER-92 (a clause with one failing test fails): inductor compiles each graph with g++
    only = ("-k", "(enabled and add_) or assign_data or counts_mutated")
    doc = run_sabotaged(tmp_path, "compile:run_ignores_backend", "--mode", "inductor", *only, *tests)
    failed = failing(doc, mode="inductor")
    assert expected <= failed, f"not failing with aot_eager in inductor's place: {sorted(expected - failed)}"
