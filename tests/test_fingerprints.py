"""Fingerprints: an edit makes stale the clauses whose outcome it can change, and no edit leaves one fresh that it
can change. Each test tries an edit on the sources as read by fingerprints.py (read_source), never on disk."""

import ast
import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.harness import fingerprints as fp
from conformance.harness import registry

REGISTRY = registry.default()
TESTS = fp.TESTS_DIR
ALL = set(REGISTRY.clauses)


@pytest.fixture
def edit(monkeypatch):
    """edit(path, change): the fingerprints of every clause with the source of path changed (change: old -> new)."""
    read = fp.read_source
    changes: dict[Path, object] = {}
    monkeypatch.setattr(fp, "read_source", lambda p: changes[p](read(p)) if p in changes else read(p))

    def apply(path, change):
        changes[path] = change
        fp.clear()
        return fp.compute(REGISTRY)

    yield apply
    fp.clear()


@pytest.fixture(scope="module")
def before():
    fp.clear()
    return fp.compute(REGISTRY)


def changed(before, after) -> set[str]:
    return {cid for cid in before if before[cid] != after[cid]}


def function(source: str, name: str) -> str:
    """The text of one module-level function, with its decorators."""
    node = next(n for n in ast.parse(source).body if getattr(n, "name", None) == name)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return "".join(source.splitlines(keepends=True)[first - 1 : node.end_lineno])


def test_every_clause_has_a_fingerprint_of_its_own(before):
    assert set(before) == ALL
    assert all(re.fullmatch(r"[0-9a-f]{16}", p) for p in before.values())
    assert len(set(before.values())) == len(ALL)
    fp.clear()
    assert fp.compute(REGISTRY) == before, "the same sources, the same fingerprints"


def test_comments_and_blank_lines_change_nothing(before, edit):
    after = edit(TESTS / "test_set.py", lambda s: "# a comment\n\n" + s.replace("\n\n\n", "\n\n\n# why\n\n"))
    assert changed(before, after) == set()


def test_a_changed_test_stales_exactly_the_clauses_it_names(before, edit):
    path = TESTS / "test_load_state_dict.py"
    body = function(fp.read_source(path), "test_load_copies_values")
    after = edit(path, lambda s: s.replace(body, body + "    assert True\n"))
    assert changed(before, after) == {"LOADSD-2"}


def test_a_deleted_test_stales_its_clause(before, edit):
    path = TESTS / "test_load_state_dict.py"
    body = function(fp.read_source(path), "test_load_bumps_version")
    named = next(u.clauses for u in fp.units() if u.name == "test_load_bumps_version")
    after = edit(path, lambda s: s.replace(body, ""))
    # COMPILE-9 too: an ID in a table the test reaches ties the test to it (over-approximate, never under)
    assert changed(before, after) == named == {"LOADSD-3", "COMPILE-9"}


def test_a_changed_helper_stales_the_clauses_whose_tests_use_it(before, edit):
    after = edit(
        fp.HARNESS_DIR / "checks.py", lambda s: s.replace("def compiled_since(", "def compiled_since(_=0, *, ")
    )
    stale = changed(before, after)
    assert "SET-1" in stale or any(c.startswith("SET-") for c in stale), "test_set.py uses compiled_since"
    assert not {c for c in stale if c.startswith(("LOADSD-", "SWAP-"))}, "their tests never reach compiled_since"
    assert 0 < len(stale) < len(ALL)


def test_a_changed_rank_function_stales_the_clauses_whose_fixture_runs_it(before, edit):
    """What each rank of a mesh of two runs (test_dtensor.on_two_ranks, passed to ranks.run through a fixture)."""
    after = edit(
        fp.TESTS_DIR / "test_dtensor.py",
        lambda s: s.replace('seen["after add_(1)"] = local(p)', 'seen["after add_(1)"] = local(p) + []'),
    )
    assert set(changed(before, after)) == {f"DTENSOR-{n}" for n in range(15, 25)}


def test_a_changed_population_stales_the_clauses_that_quantify_over_it(before, edit):
    # TENSOR_KINDS (kinds.py, which the harness does not reach; populations.py it does: the next test). kinds.py ends
    # with `ALL[TENSOR_KINDS.name] = TENSOR_KINDS`: that statement changes ALL, it does not define TENSOR_KINDS, and a
    # kind's maker stays in the reach of the tests that run every kind.
    path = fp.HARNESS_DIR / "kinds.py"
    after = edit(
        path, lambda s: s.replace('("float32 (2, 3) leaf", _leaf())', '("float32 (2, 3) leaf", _leaf((3, 2)))')
    )
    stale = changed(before, after)
    assert {"DETACH-1", "CLONE-1", "DATA-1", "VERSION-5"} <= stale
    assert len(stale) < len(ALL)


def test_a_population_the_harness_reaches_stales_every_clause(before, edit):
    """populations.py is in the harness's reach (modes.MEMBER_DIVERGENCES names the members of INPLACE_SPELLINGS, and
    the module's closing `ALL.update(...)` runs whenever it is used): a change to any of its populations makes every
    clause stale. (To narrow it, modes.py would take those members by name when asked, not import populations.py;
    a harness change, for the next whole recording.)"""
    after = edit(fp.HARNESS_DIR / "populations.py", lambda s: s + "\nINPLACE_SPELLINGS = INPLACE_SPELLINGS[:-1]\n")
    assert len(changed(before, after)) == len(ALL)


def test_a_name_bound_again_keeps_its_first_definition_in_reach(edit):
    path = fp.HARNESS_DIR / "populations.py"
    again = "\nINPLACE_SPELLINGS = INPLACE_SPELLINGS\n"
    first = 'INPLACE_SPELLINGS = Population(\n    "INPLACE_SPELLINGS",'
    bound_again = edit(path, lambda s: s + again)
    assert first in fp.read_source(path)
    both = edit(path, lambda s: s.replace(first, first.replace('",', ' (edited)",')) + again)
    assert "DATA-4" in changed(bound_again, both), "an edit of the first definition still stales its clauses"


@pytest.mark.parametrize("harness", ["plugin.py", "recorder.py", "outcomes.py", "modes.py", "state.py"])
def test_a_harness_change_stales_every_clause(before, edit, harness):
    after = edit(fp.HARNESS_DIR / harness, lambda s: s + "\nANOTHER_RULE = 1\n")
    assert changed(before, after) == ALL


def test_a_clause_text_stales_that_clause_only(before):
    clause = REGISTRY.clauses["DATA-1"]
    edited = dataclasses.replace(
        REGISTRY, clauses={**REGISTRY.clauses, "DATA-1": dataclasses.replace(clause, text="x")}
    )
    fp.clear()
    assert changed(before, fp.compute(edited)) == {"DATA-1"}


def test_the_evidence_of_a_level_stales_nothing(before):
    """:evidence: says why a clause has its level; it decides no outcome: adding or changing it keeps results fresh."""
    clause = REGISTRY.clauses["DATA-1"]
    edited = dataclasses.replace(
        REGISTRY, clauses={**REGISTRY.clauses, "DATA-1": dataclasses.replace(clause, evidence="another doc")}
    )
    fp.clear()
    assert changed(before, fp.compute(edited)) == set()


def test_a_marker_written_as_a_computed_value_ties_the_test_to_every_clause(before, edit):
    path = TESTS / "test_load_state_dict.py"
    after = edit(path, lambda s: s.replace('@pytest.mark.clause("LOADSD-2")', "@pytest.mark.clause(*WHICH)"))
    assert changed(before, after) == ALL, "the analysis cannot tell which clause: every clause is stale"


def test_a_marker_the_source_does_not_name_is_refused():
    item = SimpleNamespace(path=TESTS / "test_set.py", name="", originalname="test_set_shares_values", cls=None)
    item.nodeid = "conformance/tests/test_set.py::test_set_shares_values[cpu]"
    assert fp.check_item(item, ["SET-2"]) is None
    why = fp.check_item(item, ["LOADSD-1"])
    assert why and "marked with LOADSD-1, which its source does not name" in why
    item.originalname = "helper_made_by_a_hook"
    assert "not a module-level test function" in fp.check_item(item, ["SET-2"])


def test_reach_follows_names_through_modules_and_data_files():
    reach = fp.Reach()
    reach.visit(TESTS / "test_inplace_ops.py", "*")
    reached = {(p.name, k) for p, k in reach.reached}
    assert ("opdb.py", "*") in reached or any(p == "opdb.py" for p, _ in reached)
    assert fp.HARNESS_DIR / "opdb_inplace.json" in reach.data
