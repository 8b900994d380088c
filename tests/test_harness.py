"""Self-tests of the conformance harness, on the demo project of tests/conftest.py."""

import re
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from conformance.harness import devices, modes, outcomes, registry, results
from tests.conftest import add_test, command, run

ROOT = Path(__file__).resolve().parents[1]


def without_fingerprint(entry: dict) -> dict:
    return {key: value for key, value in entry.items() if key != "fingerprint"}


def test_outcomes_of_demo(demo):
    code, output, doc = run(demo)
    assert code == 0, output
    cpu, meta = doc["devices"]["cpu"]["eager"], doc["devices"]["meta"]["eager"]
    assert without_fingerprint(cpu["DEMO-1"]) == {"outcome": "pass", "tests": 1, "reasons": [], "observed": {}}
    assert cpu["DEMO-2"]["outcome"] == "pass" and cpu["DEMO-2"]["observed"] == {"version": 2}
    assert cpu["DEMO-3"]["outcome"] == "not-applicable" and "until 1.0" in cpu["DEMO-3"]["reasons"][0]
    assert without_fingerprint(cpu["DEMO-4"]) == {"outcome": "pass", "tests": 2, "reasons": [], "observed": {}}
    assert meta["DEMO-4"]["outcome"] == "not-applicable"
    assert meta["DEMO-1"]["outcome"] == "pass"
    assert cpu["DEMO-5"]["outcome"] == "not-applicable" and meta["DEMO-5"]["outcome"] == "pass"
    assert "clause is about meta only" in cpu["DEMO-5"]["reasons"][0]
    for absent in set(devices.KNOWN) - set(devices.present()):
        assert {e["outcome"] for e in doc["devices"][absent]["eager"].values()} <= {"not-run", "not-applicable"}
    results.validate(doc, "demo", registry.load(demo / "spec"))
    assert "DEMO-1      pass" in output, "per-clause summary is printed"


def test_parallel_run_gives_same_outcomes(demo):
    _, _, serial = run(demo)
    code, output, parallel = run(demo, "-n", "2")
    assert code == 0, output
    assert parallel["devices"] == serial["devices"]


def test_unknown_clause_fails_collection(demo):
    add_test(
        demo,
        """
        import pytest
        @pytest.mark.clause("NOPE-7")
        def test_x(device):
            pass
    """,
    )
    code, output, doc = run(demo)
    assert code == 4
    # whichever device's item pytest reports first (the order may be random)
    assert re.search(r"test_extra.py::test_x\[(cpu|meta)\]: unknown clause 'NOPE-7'", output), output
    assert doc is None, "a run stopped at collection writes no results"
    assert "Traceback" not in output


def test_missing_marker_fails_collection(demo):
    add_test(demo, "def test_unmarked(device):\n    pass\n")
    code, output, _ = run(demo)
    assert code == 4 and re.search(r"test_unmarked\[(cpu|meta)\]: test has no @pytest.mark.clause", output), output


def test_duplicate_clause_id_is_an_error(demo):
    (demo / "spec" / "other.md").write_text(":::{clause} DEMO-1\n:level: MUST\n\nAgain.\n:::\n")
    code, output, _ = run(demo)
    assert code == 4 and "clause DEMO-1 is defined twice" in output


def test_unknown_device_and_absent_device_exit_with_one_line(demo):
    code, output, _ = run(demo, "--device", "tpu")
    assert code == 4 and "unknown device 'tpu'" in output and "Traceback" not in output
    absent = [d for d in ("cuda", "mps") if d not in devices.present()]
    for name in absent:
        code, output, doc = run(demo, "--device", name)
        assert code == 4 and f"device {name!r} was asked for but is not present" in output
        assert doc is None, "no results are written for a refused run"


def test_device_selection(demo):
    code, output, doc = run(demo, "--device", "meta")
    assert code == 0, output
    assert "cpu" not in doc["devices"], "a present device that was not selected is not reported"
    assert doc["devices"]["meta"]["eager"]["DEMO-1"]["outcome"] == "pass"


def test_failure_output_names_clause_page_version_device_and_reproducer(demo):
    add_test(
        demo,
        """
        import pytest, torch
        @pytest.mark.clause("DEMO-1")
        def test_wrong(device):
            x = torch.ones(1, device=device)
            assert x._version == 5
    """,
    )
    code, output, doc = run(demo, "--device", "cpu")
    assert code == 1
    assert "clause DEMO-1 (MUST) - spec/demo.md#demo-1" in output
    import torch

    assert f"torch {torch.__version__}, device cpu" in output
    assert "python -m pytest 'conformance/tests/test_extra.py::test_wrong[cpu]'" in output
    assert "device = 'cpu'" in output, "standalone reproducer"
    entry = doc["devices"]["cpu"]["eager"]["DEMO-1"]
    assert entry["outcome"] == "fail" and "assert 0 == 5" in entry["reasons"][0]


def test_observe_without_observation_fails(demo):
    add_test(
        demo,
        """
        import pytest
        @pytest.mark.clause("DEMO-2")
        def test_nothing(device, observe):
            pass
    """,
    )
    code, output, _ = run(demo, "--device", "cpu")
    assert code == 1 and "recorded nothing" in output


def test_deselected_clause_is_not_run_never_pass(demo):
    code, _, doc = run(demo, "--device", "cpu", "-k", "test_version")
    assert code == 0
    assert doc["devices"]["cpu"]["eager"]["DEMO-4"]["outcome"] == "not-run"


TWO_TESTS = """
    import pytest
    @pytest.mark.clause("DEMO-1")
    def test_first(device):
        pass
    @pytest.mark.clause("DEMO-1")
    def test_second(device):
        pass
"""


@pytest.mark.parametrize(
    ("paths", "args", "why"),
    [
        (["conformance"], ["-k", "test_first or test_version"], "1 deselected"),
        (["conformance"], ["--deselect", "conformance/tests/test_extra.py::test_second[cpu]"], "1 deselected"),
        (["conformance/tests/test_extra.py::test_first"], [], "2 not collected or not reached"),
        (["conformance/tests/test_extra.py"], [], "1 not collected or not reached"),  # test_demo.py's DEMO-1 test
    ],
)
def test_a_clause_that_lost_one_test_is_not_run(demo, paths, args, why):
    """Seen: `-k data` recorded 25 clauses as pass with some of their tests missing (CLONE-5: 1 of 10)."""
    add_test(demo, TWO_TESTS)
    code, output, doc = run(demo, "--device", "cpu", *args, paths=paths)
    assert code == 0, output
    entry = doc["devices"]["cpu"]["eager"]["DEMO-1"]
    assert entry["outcome"] == "not-run", entry
    assert "tests did not run" in entry["reasons"][0] and why in entry["reasons"][0], entry
    assert "partial run:" in output


def test_stopping_early_leaves_the_rest_not_run(demo):
    """Seen: with -x and one failure, 99 clauses were recorded pass (NEW-2 on cpu: 1 of 37 tests ran)."""
    add_test(
        demo,
        """
        import pytest
        @pytest.mark.clause("DEMO-1")
        def test_fails(device):
            assert False
        @pytest.mark.clause("DEMO-2")
        def test_not_reached(device, observe):
            observe("reached", True)
    """,
    )
    code, _, doc = run(demo, "--device", "cpu", "-x", "-p", "no:randomly")  # test_extra.py runs last
    assert code == 1
    table = doc["devices"]["cpu"]["eager"]
    assert table["DEMO-1"]["outcome"] == "fail"
    assert table["DEMO-2"]["outcome"] == "not-run", "its test in test_extra.py was never reached"
    assert "1 of 2 tests did not run: 1 not collected or not reached" in table["DEMO-2"]["reasons"][0]


def test_a_test_that_skips_itself_leaves_its_clause_not_run(demo):
    """Seen: a test's own pytest.skip("not-applicable: ...") was taken for the harness's and dropped."""
    add_test(
        demo,
        """
        import pytest
        @pytest.mark.clause("DEMO-1")
        def test_skips(device):
            pytest.skip("not-applicable: I decided so")
    """,
    )
    code, _, doc = run(demo, "--device", "cpu")
    entry = doc["devices"]["cpu"]["eager"]["DEMO-1"]
    assert code == 0 and entry["outcome"] == "not-run"
    assert any("skipped: not-applicable: I decided so" in r for r in entry["reasons"]), entry


def test_cpu_only_tests_on_a_meta_run_in_parallel(demo):
    """Seen: `--device meta -n 2` crashed with 318 INTERNALERROR lines (pytest's NOTSET placeholder in reports)."""
    code, output, doc = run(demo, "--device", "meta", "-n", "2")
    assert code == 0 and "INTERNALERROR" not in output, output[-3000:]
    assert doc["devices"]["meta"]["eager"]["DEMO-1"]["outcome"] == "pass"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_outcomes_do_not_depend_on_the_order(demo, seed):
    _, _, ordered = run(demo, "-p", "no:randomly")
    code, output, shuffled = run(demo, "-p", "randomly", "-p", "randomly", f"--randomly-seed={seed}")
    assert code == 0, output
    assert shuffled["devices"] == ordered["devices"]


def test_every_normative_clause_has_a_test():
    """Collect the real suite; each normative clause of the spec is named by some test."""

    class Collect:
        named: set = set()

        def pytest_collection_finish(self, session):
            for item in session.items:
                for mark in item.iter_markers("clause"):
                    self.named.update(mark.args)

    collector = Collect()
    code = pytest.main(["conformance", "--collect-only", "-q", "-p", "no:cacheprovider"], plugins=[collector])
    assert code == 0
    untested = sorted(c.id for c in registry.default().clauses.values() if c.normative and c.id not in collector.named)
    assert not untested, f"clauses without a test: {untested}"


def test_version_ranges():
    clause = registry.Clause("X-1", "p", 1, "MUST", "x", since=registry.Version("2.2"), until=registry.Version("2.4"))
    assert [clause.applies_to(v) for v in ("2.1.2", "2.2.0", "2.3.1+cu121", "2.4.0a0+git1", "2.4.0")] == [
        False,
        True,
        True,
        False,
        False,
    ]


def test_a_clause_may_hold_on_more_than_one_range():
    v = registry.Version
    clause = registry.Clause("X-1", "p", 1, "MUST", "x", since=v("2.4"), until=v("2.9"), also_on=(v("2.1"),))
    assert clause.ranges == ((v("2.4"), v("2.9")), (v("2.1"), v("2.2")))
    assert clause.range_text() == "since 2.4, until 2.9 (exclusive), and on 2.1"
    holds = ("2.1.0", "2.1.2", "2.4.1", "2.8.0")
    outside = ("2.0.1", "2.2.2", "2.3.1", "2.9.1")
    assert [clause.applies_to(r) for r in holds + outside] == [True] * 4 + [False] * 4


def test_ignore_ranges_confirms_tight_boundaries_and_flags_loose_ones(demo):
    code, output, doc = run(demo, "--device", "cpu", "--ignore-ranges")
    assert code == 0, output  # DEMO-3's test fails outside its range, as it must
    assert "DEMO-3" in output and "outside its range: fails, boundary confirmed" in output
    assert doc is None, "no results are written for a run that ignores ranges"
    assert "test_version" not in output, "tests of clauses without a range are deselected"
    (demo / "spec" / "loose.md").write_text(":::{clause} LOOSE-1\n:level: MUST\n:until: 1.0\n\nAlways true.\n:::\n")
    add_test(
        demo,
        """
        import pytest
        @pytest.mark.clause("LOOSE-1")
        def test_always(device):
            pass
    """,
    )
    code, output, _ = run(demo, "--device", "cpu", "--ignore-ranges")
    assert code == 1 and "LOOSE-1" in output and "PASSES, the range is too narrow" in output
    # An UNSPECIFIED clause's tests record and cannot fail: outside its range they say nothing about it.
    (demo / "spec" / "loose.md").write_text(":::{clause} LOOSE-1\n:level: UNSPECIFIED\n:until: 1.0\n\nRecorded.\n:::\n")
    code, output, _ = run(demo, "--device", "cpu", "--ignore-ranges")
    assert code == 0 and "UNSPECIFIED: its tests record, they cannot fail" in output, output


# The clause a compiled_since("99.0") mark names: what the step does compiled before 99.0 (no test of its own here).
SPECIFIED_FROM_99 = "the compiled behaviour of this test is specified from torch 99.0; before, see DEMO-90"
COMPILED_BEFORE = "\n:::{clause} DEMO-90\n:level: MUST\n:modes: compile\n\nThe step compiled, before 99.0.\n:::\n"


@pytest.mark.parametrize(
    ("options", "devices", "compiled"),
    [
        ("", "cpu", {"cpu": "not-applicable"}),
        (', devices="meta"', "cpu,meta", {"cpu": "pass", "meta": "not-applicable"}),  # only meta differs before
    ],
)
def test_compiled_since_makes_older_releases_not_applicable_with_the_reason(demo, options, devices, compiled):
    """A test whose compiled behaviour is specified from a later release: not-applicable compiled, naming the clause
    that states the older releases (on the devices the mark names, or everywhere)."""
    add_test(
        demo,
        """
        import pytest
        import torch
        @pytest.mark.compiled_since("99.0", before="DEMO-90"OPTIONS)
        @pytest.mark.clause("DEMO-6")
        def test_step(device, run):
            x = torch.ones(1, device=device)
            run(lambda t: t.add_(1), x)
            assert x._version >= 1
    """.replace("OPTIONS", options),
    )
    with (demo / "spec" / "demo.md").open("a") as spec:
        spec.write("\n:::{clause} DEMO-6\n:level: MUST\n\nAn update step.\n:::\n" + COMPILED_BEFORE)
    code, output, doc = run(demo, "--device", devices, "--mode", "eager,compile")
    assert code == 0, output
    assert doc["devices"]["cpu"]["eager"]["DEMO-6"]["outcome"] == "pass"
    for device, outcome in compiled.items():
        entry = doc["devices"][device]["compile"]["DEMO-6"]
        assert (entry["outcome"], entry["reasons"]) == (outcome, [SPECIFIED_FROM_99] if outcome != "pass" else [])


def test_a_clause_some_of_whose_tests_are_specified_compiled_later_passes_in_part_saying_why(demo):
    """One test specified compiled from now, one from a later release: the clause passes with 1 test and a reason,
    never as a pass of all its tests."""
    add_test(
        demo,
        """
        import pytest
        import torch
        @pytest.mark.clause("DEMO-6")
        def test_now(device, run):
            x = torch.ones(1, device=device)
            run(lambda t: t.add_(1), x)
            assert x._version >= 1
        @pytest.mark.compiled_since("99.0", before="DEMO-90")
        @pytest.mark.clause("DEMO-6")
        def test_later(device, run):
            x = torch.ones(1, device=device)
            run(lambda t: t.mul_(2), x)
            assert x._version >= 1
    """,
    )
    with (demo / "spec" / "demo.md").open("a") as spec:
        spec.write("\n:::{clause} DEMO-6\n:level: MUST\n\nAn update step.\n:::\n" + COMPILED_BEFORE)
    code, output, doc = run(demo, "--device", "cpu", "--mode", "eager,compile")
    assert code == 0, output
    assert without_fingerprint(doc["devices"]["cpu"]["eager"]["DEMO-6"]) | {"observed": {}} == {
        "outcome": "pass",
        "tests": 2,
        "reasons": [],
        "observed": {},
    }
    compiled = doc["devices"]["cpu"]["compile"]["DEMO-6"]
    assert (compiled["outcome"], compiled["tests"]) == ("pass", 1), compiled
    assert compiled["reasons"] == [SPECIFIED_FROM_99]


def test_every_compiled_since_mark_names_a_release_after_the_first_that_compiles():
    """``compiled_since("2.1")`` says nothing (torch.compile runs from 2.1, modes.unsupported), except under a page
    floor (``pytestmark``) that it lowers for one test."""
    for path in sorted((ROOT / "conformance" / "tests").glob("test_*.py")):
        text = path.read_text()
        floor = re.search(r'^pytestmark = pytest\.mark\.compiled_since\("([\d.]+)"\)', text, re.MULTILINE)
        lowest = Version("2.1") if floor is None else Version("2.0")
        for release in re.findall(r'compiled_since\("([\d.]+)"', text):
            assert Version(release) > lowest, f"{path.name}: compiled_since({release!r}) says nothing"


def test_a_clause_range_is_the_only_reason_when_it_excludes_the_release():
    """A compiled test outside its clause's range says so, not also that its page is specified from a later release."""
    from conformance.harness.modes import CompiledSince
    from conformance.harness.recorder import not_applicable

    clause = registry.default().clauses["CLONE-91"]  # compile only, since 2.5
    reason = not_applicable([clause], "cpu", "compile", "2.4.1", compiled_since=(CompiledSince("2.5", ("CLONE-90",)),))
    assert reason == "not-applicable: CLONE-91 holds since 2.5"
    inside = not_applicable([clause], "cpu", "compile", "2.6.0", compiled_since=(CompiledSince("2.7", ("CLONE-90",)),))
    assert inside == (
        "not-applicable: the compiled behaviour of this test is specified from torch 2.7; before, see CLONE-90"
    )


@pytest.mark.parametrize(
    ("params", "device", "version", "of", "clause"),
    [
        ("meta-compile-t[[0]] = 5", "meta", "2.14.1", "INDEX-1", "COMPILE-9"),
        ("meta-compile-t[[0]] = 5", "meta", "2.15.0", "INDEX-1", None),  # traceable from 2.15
        ("cpu-compile-t[[0]] = 5", "cpu", "2.14.1", "INDEX-1", None),  # meta only
        ("meta-compile-torch.tensor(v)", "meta", "2.4.1", "", "COMPILE-10"),
        ("meta-compile-torch.tensor(v, requires_grad=True)", "meta", "2.2.2", "", "COMPILE-10"),
        ("meta-compile-torch.tensor(v)", "meta", "2.1.2", "", None),  # the releases are COMPILE-10's: 2.2-2.4
        ("meta-compile-torch.tensor(v)", "meta", "2.5.1", "", None),
        ("meta-compile-torch.tensor(v).t()", "meta", "2.4.1", "", None),  # a whole part of the id, not a substring
        ("meta-compile-torch.where(mask, 5.0, x)-INDEX-93", "meta", "2.3.1", "INDEX-93", "INDEX-98"),
        # op_db members: only the tests of the clauses an entry names (of=), on its clause's devices and releases
        ("nn.functional.selu_-meta-compile", "meta", "2.13.0", "INPLACE-80", "INPLACE-96"),
        ("nn.functional.selu_-meta-compile", "meta", "2.13.0", "INPLACE-84", None),
        ("nn.functional.selu_-cpu-compile", "cpu", "2.13.0", "INPLACE-80", None),
        ("square_-meta-compile", "meta", "2.8.0", "INPLACE-80", "INPLACE-96"),
        ("polygamma_.polygamma_n_2-cpu-compile", "cpu", "2.14.1", "VERSION-80", "INPLACE-97"),
        ("polygamma_.polygamma_n_2-cpu-compile", "cpu", "2.14.1", "INPLACE-80", None),
        ("t_-cpu-compile", "cpu", "2.4.1", "INPLACE-81", "INPLACE-98"),
        ("t_-cpu-compile", "cpu", "2.7.1", "INPLACE-81", "INPLACE-98"),
        ("t_-cpu-compile", "cpu", "2.8.0", "INPLACE-81", None),
    ],
)
def test_a_member_whose_compiled_step_differs_is_not_applicable_naming_its_clause(params, device, version, of, clause):
    from conformance.harness import modes

    reason = modes.diverging_member(params, device, version, tuple(of.split()))
    assert (reason.split(":")[0] if reason else None) == clause
    if reason:  # the results validator and the status lines read it back
        assert outcomes.harness_reason(reason), reason
        from conformance.harness import status

        assert status.DIVERGES.match(reason).group("clause") == clause


def test_as_eager_adds_the_older_clause_checked_with_the_eager_value():
    from conformance.harness.checks import by_mode

    eager, compiled, older = by_mode("CLONE-10", "CLONE-91", 1, 2, as_eager="VERSION-96")
    assert [p.id for p in (eager, compiled, older)] == ["CLONE-10", "CLONE-91", "VERSION-96"]
    assert older.values == (1,)
    marks = {m.name: m.args for m in older.marks}
    assert marks == {"clause": ("VERSION-96",)}
    assert len(by_mode("CLONE-10", "CLONE-91", 1, 2)) == 2


def _closure_backend(**kwargs):
    """The aot_autograd backend as torch 2.1-2.3 build it: a function closing over its settings, which wraps its
    backward compiler once more at each compilation (pytorch/pytorch#93935)."""

    def compiler_fn(gm, example_inputs):
        bw_compiler = kwargs.get("bw_compiler") or kwargs["fw_compiler"]
        kwargs["bw_compiler"] = lambda *args: bw_compiler(*args)
        return gm

    return compiler_fn


class _ClassBackend:  # torch 2.4 on: the same settings in an attribute
    def __init__(self, **kwargs):
        self.kwargs = kwargs


@pytest.mark.parametrize("make", [_closure_backend, _ClassBackend], ids=["closure (2.1-2.3)", "attribute (2.4 on)"])
def test_the_backend_settings_are_found_where_each_release_keeps_them(make):
    backend = make(fw_compiler=print)
    settings = modes._backend_settings(backend)
    assert settings == {"fw_compiler": print}
    if callable(backend):  # the dict found is the one the backend changes, so the reset can put it back
        backend(None, [])
        assert settings["bw_compiler"] is not print
    assert modes._backend_settings(lambda: None) is None


@pytest.mark.parametrize(
    "mode, setting, seen",
    [("inductor", False, False), ("inductor", None, True), ("compile", False, True)],
    ids=["inductor: off", "inductor, a test about the cache: as released", "aot_eager: as released"],
)
def test_an_inductor_step_is_called_with_aot_autograds_cache_off(monkeypatch, mode, setting, seen):
    """A compiled step's outcome is what tracing it gives: the run fixture calls an inductor step with AOTAutograd's
    cache off (a graph cached inside inference mode skips a check made while tracing, INFER-94), unless the test
    asks for the release's setting (None); aot_eager caches nothing."""
    import torch

    config = pytest.importorskip("torch._functorch.config")
    if not hasattr(config, "enable_autograd_cache"):
        pytest.skip(f"torch {torch.__version__} has no AOTAutograd cache")
    monkeypatch.setattr(torch, "compile", lambda step, backend: lambda: config.enable_autograd_cache)
    runner = modes.Runner(mode)
    runner.aot_autograd_cache = setting
    with config.patch(enable_autograd_cache=True):  # as 2.7 and later release it (monkeypatch would delete it)
        assert runner.function(lambda: None)() is seen


def test_compiled_since_also_on_specifies_an_older_release_series_too():
    """``compiled_since("2.4", before="GRAD-92", also_on="2.1")``: specified on 2.1.x and from 2.4, not on 2.2, 2.3."""
    from conformance.harness.modes import CompiledSince, specified_later

    since = CompiledSince("2.4", ("GRAD-92",), also_on=("2.1",))
    assert [specified_later((since,), v) for v in ("2.1.2", "2.4.1", "2.9.0")] == [None, None, None]
    assert specified_later((since,), "2.2.2") == (
        "the compiled behaviour of this test is specified from torch 2.4 (and on 2.1); before, see GRAD-92"
    )


@pytest.mark.parametrize(
    ("before", "problem"),
    [
        ("", "name the compile-only clauses that state what the step does before 2.4 (before=...)"),
        ("NOPE-1", "unknown clause 'NOPE-1' in before="),
        ("NOGRAD-8", "NOGRAD-8 in before= is not a clause about compile mode only"),
        ("CLONE-91", "CLONE-91 in before= holds on no release before 2.4"),  # since 2.5
        ("NOGRAD-92", None),
    ],
)
def test_a_compiled_since_mark_must_name_the_clauses_that_state_the_older_releases(before, problem):
    from conformance.harness.modes import CompiledSince

    assert CompiledSince("2.4", tuple(before.split())).problem(registry.default().clauses) == problem


def test_a_compiled_since_mark_of_one_mode_speaks_there_only():
    """``modes="inductor"``: the mark needs a clause about inductor in before=, and leaves the compile mode alone;
    in the inductor mode it applies beside the test's mark without modes (both must cover the release)."""
    from conformance.harness.modes import CompiledSince, specified_later

    clauses = registry.default().clauses
    assert CompiledSince("2.5", ("NOGRAD-92",), modes=("inductor",)).problem(clauses) == (
        "NOGRAD-92 in before= is not about the mode inductor (modes=)"
    )
    inductor = CompiledSince("2.5", ("VERSION-101",), modes=("inductor",))
    assert inductor.problem(clauses) is None
    assert (inductor.applies("cpu", "inductor"), inductor.applies("cpu", "compile")) == (True, False)
    general = CompiledSince("2.3", ("NOGRAD-92",))
    assert specified_later((general, inductor), "2.4.1").startswith(
        "the compiled behaviour of this test is specified from torch 2.5; before, see VERSION-101"
    )
    assert specified_later((general, inductor), "2.2.2").endswith("see NOGRAD-92")
    assert specified_later((general, inductor), "2.5.1") is None


def test_a_changed_test_is_recorded_again_alone_and_merged(demo):
    """The incremental recording of nox -s conformance: --clauses runs the stale clauses' tests, every one of them,
    and merges their outcomes into the recorded file; the other outcomes stay as recorded."""
    code, output, recorded = run(demo, "--record", "--mode", "eager,compile,inductor")
    assert code == 0, output
    check = (sys.executable, "-m", "conformance.harness.results", "r.json")
    assert command(demo, check)[0] == 0
    tests = demo / "conformance" / "tests" / "test_demo.py"
    tests.write_text(tests.read_text().replace("assert x._version == 1", "assert x._version == 1, x._version"))
    code, output = command(demo, check)
    assert code == 2 and "1 clauses stale (DEMO-1)" in output, output
    code, output, _ = run(demo, "--record", "--mode", "eager,compile,inductor", "--clauses", "DEMO-1", "-k", "nothing")
    assert code == 4 and "--record needs the whole suite" in output, "a partial run of the stale clauses is refused"
    code, output, merged = run(demo, "--record", "--mode", "eager,compile,inductor", "--clauses", "DEMO-1")
    assert code == 0 and "(1 clauses merged)" in output and "DEMO-4" not in output, output
    assert command(demo, check)[0] == 0, "fresh again"
    # Only the modules of the clauses may be named (what nox -s conformance does); one left out is a partial run:
    # DEMO-4 is also proved by an example of the spec (test_examples.py).
    record = ("--record", "--mode", "eager,compile,inductor")
    code, output, _ = run(demo, *record, "--clauses", "DEMO-1", paths=["conformance/tests/test_demo.py"])
    assert code == 0 and "(1 clauses merged)" in output, output
    code, output, _ = run(demo, *record, "--clauses", "DEMO-4", paths=["conformance/tests/test_demo.py"])
    assert code == 4 and "partial run" in output and "--record needs the whole suite" in output, output
    code, output, _ = run(demo, *record, paths=["conformance/tests/test_demo.py"])
    assert code == 4 and "selects part of it" in output, "without --clauses a module is part of the suite"
    for device, by_mode in recorded["devices"].items():
        for mode, table in by_mode.items():
            now = merged["devices"][device][mode]
            assert {c: e for c, e in now.items() if c != "DEMO-1"} == {c: e for c, e in table.items() if c != "DEMO-1"}
            assert now["DEMO-1"]["fingerprint"] != table["DEMO-1"]["fingerprint"]


def test_the_inductor_mode_runs_the_clauses_that_name_it_and_finds_the_layer(demo):
    """A clause without ``:modes:`` runs with inductor too, as one that names it; both on cpu (meta: not applicable,
    with the reason); an inductor-only divergence gets the layer ``inductor`` (aot_eager and Dynamo alone refuse
    what inductor accepts: an in-place update of an inference tensor, torch 2.8 and later)."""
    from conformance.harness.modes import INDUCTOR_NOT_ON_META

    add_test(
        demo,
        """
        import pytest
        import torch
        @pytest.mark.clause("DEMO-6")
        def test_default(device, run):
            x = torch.ones(1, device=device)
            run(lambda t: t.add_(1), x)
            assert x._version >= 1
        @pytest.mark.clause("DEMO-7")
        def test_named(device, run):
            x = torch.ones(1, device=device)
            run(lambda t: t.add_(1), x)
            assert x._version >= 1
        @pytest.mark.clause("DEMO-8")
        def test_inductor_only(device, run):
            with torch.inference_mode():
                t = torch.ones(1, device=device) * 1
            run(lambda t: t.add_(1), t)
            assert t.tolist() == [2.0]
    """,
    )
    with (demo / "spec" / "demo.md").open("a") as spec:
        spec.write(
            "\n:::{clause} DEMO-6\n:level: MUST\n\nAn update step.\n:::\n"
            "\n:::{clause} DEMO-7\n:level: MUST\n:modes: eager compile inductor\n\nAn update step.\n:::\n"
            "\n:::{clause} DEMO-8\n:level: MUST\n:modes: inductor\n:needs: values\n:since: 2.8\n\nAccepted.\n:::\n"
        )
    code, output, doc = run(demo, "--device", "cpu,meta", "--mode", "eager,compile,inductor")
    assert code == 0, output
    cpu = doc["devices"]["cpu"]["inductor"]
    assert (cpu["DEMO-6"]["outcome"], cpu["DEMO-7"]["outcome"]) == ("pass", "pass")
    for cid in ("DEMO-6", "DEMO-7"):
        assert doc["devices"]["meta"]["inductor"][cid]["reasons"] == [INDUCTOR_NOT_ON_META]
    assert (cpu["DEMO-8"]["outcome"], cpu["DEMO-8"]["observed"]["diverging layer"]) == ("pass", "inductor")
