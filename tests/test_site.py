"""What the site says beside the clauses: status lines, the clause index's excerpts, the lookup by error message."""

import dataclasses
import re
import sys

import pytest

from conformance.harness import registry, status

sys.path.insert(0, str(registry.ROOT / "docs" / "_ext"))
clauses_ext = pytest.importorskip("clauses")  # needs sphinx (a docs dependency)

needs_results = pytest.mark.usefixtures("fresh_results")  # stale results: one message
ERROR_ENTRY = re.compile(r"^:::\{error-entry\} (?P<message>.+)\n:clauses: (?P<clauses>.+)$", re.M)


def words(text: str) -> str:
    return " ".join(text.split())


def states(statement: str, message: str) -> bool:
    """Whether a clause's statement states this message: the whole of it, or a quoted fragment of it."""
    quoted = re.findall(r'"([^"]{20,})"', statement)
    return message.rstrip(".") in statement or any(q.rstrip(" .") in message for q in quoted)


def test_each_error_of_the_landing_page_is_named_by_the_clauses_that_prove_it():
    """The lookup quotes torch's messages; the clauses each entry names must state that message, so that their
    tests prove torch raises it."""
    entries = ERROR_ENTRY.findall((registry.ROOT / "docs" / "index.md").read_text())
    assert len(entries) >= 10
    known = registry.default().clauses
    for message, ids in entries:
        for cid in ids.split():
            assert states(words(known[cid].text), message), f"{cid} does not state the message {message!r}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("`x.data` is a tensor. It shares storage.", "`x.data` is a tensor. ..."),
        (
            "Calls `torch.nn.utils.swap_tensors(a, b)` and keeps both.",
            "Calls `torch.nn.utils.swap_tensors(a, b)` and keeps both.",
        ),
        ("No full stop here", "No full stop here"),
        ("word " * 60 + "end.", ("word " * 40).strip() + " ..."),
    ],
)
def test_the_clause_index_shows_the_first_sentence(text, expected):
    assert clauses_ext.first_sentence(text) == expected


def fake_results(clause_id: str, outcomes: dict[str, str]) -> dict:
    """Recorded results of one clause on cpu, eager mode: {(version, "cpu"): results document}."""
    return {
        (version, "cpu"): {
            "present": ["cpu"],
            "devices": {"cpu": {"eager": {clause_id: {"outcome": o, "reasons": []}}}},
        }
        for version, o in outcomes.items()
    }


def test_a_status_line_tells_outcomes_in_version_order(monkeypatch):
    clause = registry.default().clauses["DATA-3"]  # eager mode only, all versions
    recorded = fake_results(clause.id, {"2.2.2": "pass", "2.0.1": "fail", "2.1.2": "pass"})
    monkeypatch.setattr(status, "recorded", lambda: recorded)
    assert status.clause_line(clause) == "Recorded: FAILS on 2.0.1; holds on 2.1.2–2.2.2 (cpu)."


def test_a_status_line_says_holds_in_part_where_another_clause_states_some_compiled_tests(monkeypatch):
    from conformance.harness.modes import SPECIFIED_FROM

    clause = registry.default().clauses["SET-1"]  # eager and compiled, every release
    later = [SPECIFIED_FROM.format(release="2.3", clauses="SET-90")]
    earlier = [SPECIFIED_FROM.format(release="2.2", clauses="SET-94")]
    compiled = {"2.1.2": ("not-applicable", earlier), "2.2.2": ("pass", later)}
    compiled["2.3.1"] = ("pass", [])
    recorded = {
        (v, "cpu"): {
            "present": ["cpu"],
            "devices": {
                "cpu": {
                    "eager": {clause.id: {"outcome": "pass", "reasons": []}},
                    "compile": {clause.id: {"outcome": o, "reasons": why}},
                    "inductor": {clause.id: {"outcome": o, "reasons": why}},
                }
            },
        }
        for v, (o, why) in compiled.items()
    }
    monkeypatch.setattr(status, "recorded", lambda: recorded)
    compiled_story = (
        "holds in part (other tests: before 2.3 see SET-90) on 2.2.2; holds on 2.3.1; before 2.2 see SET-94 (cpu)."
    )
    # The two compiled modes tell the same story: one sentence for both.
    assert (
        status.clause_line(clause) == f"Recorded: holds on 2.1.2–2.3.1 (cpu). Compiled and inductor: {compiled_story}"
    )
    # A clause about compiled modes only: its first sentence is labelled too (it is not eager's).
    compiled_only = dataclasses.replace(clause, modes=("compile", "inductor"))
    assert status.clause_line(compiled_only) == f"Recorded: Compiled and inductor: {compiled_story}"


@needs_results
def test_a_status_line_names_the_clause_across_a_range_end():
    known = registry.default().clauses
    before, after = next(
        (c, d) for c in known.values() for d in known.values() if c.until and d.since == c.until and c.page == d.page
    )
    assert f"From {before.until}: " in status.clause_line(before) and after.id in status.clause_line(before)
    assert f"Before {after.since}" in status.clause_line(after) and before.id in status.clause_line(after)


def test_a_status_line_says_where_a_clause_holds_again_beyond_a_range_end():
    clause = next(c for c in registry.default().clauses.values() if c.since and any(v < c.since for v in c.also_on))
    said = " ".join(status.boundaries(clause))
    also = ", ".join(str(v) for v in clause.also_on if v < clause.since)
    assert f"Before {clause.since} (except on {also}): " in said, said


@needs_results
def test_devices_never_run_are_said_once_not_under_each_clause():
    never = [d for d in status.KNOWN if d not in status.devices_run()]
    assert never, "this check needs a device that was never run (cuda or mps on the recording machines)"
    assert all(d in status.coverage() for d in never)
    for clause in registry.default().clauses.values():
        line = status.clause_line(clause)
        assert not any(d in line for d in never) and "not run" not in line, line


def test_the_release_timeline_is_drawn_from_the_clause_ranges():
    diagrams = pytest.importorskip("diagrams")
    svg = diagrams.render("release-timeline").read_text()
    ranged = [c for c in registry.default().clauses.values() if c.since or c.until]
    for page in {c.page for c in ranged}:
        assert f">{page}<" in svg, f"page {page} has ranged clauses but no lane in the timeline"
    for boundary in {str(b) for c in ranged for b in (c.since, c.until) if b}:
        assert f">{boundary}<" in svg, f"release {boundary} is a clause boundary but not on the timeline's axis"


# The population directive (docs/_ext/populations.py): the members a page lists are the ones the tests take.


def test_a_population_box_lists_every_member_its_tests_run():
    population_ext = pytest.importorskip("populations")
    from conformance.harness import populations

    text = " ".join(population_ext.population_text("VIEW_OPS"))
    assert all(f"`{mid}`" in text for mid in populations.VIEW_OPS.ids())
    assert f"({len(populations.VIEW_OPS.members)} members)" in text


def test_a_diverging_box_lists_the_members_the_clause_covers_and_refuses_a_clause_that_covers_none():
    population_ext = pytest.importorskip("populations")
    from conformance.harness import modes

    (line,) = population_ext.population_text("OPDB_INPLACE", diverging="INPLACE-98")
    listed = re.findall(r"`([^`]+)`", line.split("): ", 1)[1])
    assert listed == list(modes.OPDB_COMPILED_UNSPECIFIED)
    assert line.startswith(f"**{len(listed)} members of `OPDB_INPLACE`**")
    with pytest.raises(ValueError, match="no member of OPDB_INPLACE diverges by INPLACE-80"):
        population_ext.population_text("OPDB_INPLACE", diverging="INPLACE-80")
    with pytest.raises(ValueError, match="unknown population 'OPDB'"):
        population_ext.population_text("OPDB")


def test_stale_results_give_one_message_everywhere(fresh_results, monkeypatch, capsys):
    """Results made stale on purpose (one clause's fingerprint changed): the results checker, its command line and
    the docs build say the same thing (the stale clause and the command that refreshes it), and the build stops with
    exit status 2 before a page is read. (The tests' fresh_results fixture fails with check_recorded's message.)"""
    from conformance.harness import fingerprints as fp
    from conformance.harness import results

    computed = fp.compute

    def one_changed(registry=None):
        prints = computed(registry)
        return {**prints, "DATA-1": "0" * len(prints["DATA-1"])}

    monkeypatch.setattr(fp, "compute", one_changed)
    with pytest.raises(results.ResultsError) as info:
        results.check_recorded()
    message = str(info.value)
    assert "1 clauses stale on" in message and "(DATA-1)" in message and results.REFRESH_HINT in message
    assert results.main([]) == 2
    assert capsys.readouterr().err == f"ERROR: {message}\n"
    logged = []  # what the docs build logs (Sphinx's logger; pytest's log capture is off in this project's runs)
    monkeypatch.setattr(clauses_ext.logger, "error", lambda text, *args: logged.append(text % args))
    with pytest.raises(SystemExit) as stopped:
        clauses_ext.check_results(None)
    assert stopped.value.code == 2
    assert logged == [message]


def test_a_draft_of_the_site_shows_a_stale_clause_as_not_run(fresh_results, monkeypatch):
    """The short loop's draft (nox -s page) builds before a changed clause is recorded: the clause's old outcomes
    are not shown, its status line says it was not run and how to record it; the other clauses are as recorded."""
    from conformance.harness import fingerprints as fp

    computed = fp.compute
    monkeypatch.setattr(fp, "compute", lambda registry=None: {**computed(registry), "DATA-1": "0" * 16})
    monkeypatch.setenv(status.DRAFT_ENV, "1")
    monkeypatch.setattr(status, "DRAFT_STALE", {})
    status.recorded.cache_clear()
    try:
        clauses_ext.check_results(None)
        data_1, data_2 = (registry.default().clauses[cid] for cid in ("DATA-1", "DATA-2"))
        assert f"not run on {status.versions()[0]}" in status.clause_line(data_1)
        assert "not run" not in status.clause_line(data_2)
        assert status.short(data_1) == "no recorded release in its range" != status.short(data_2)
    finally:
        status.recorded.cache_clear()
