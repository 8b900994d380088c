"""The conformance matrix (docs/_ext/matrix.py): the default view lists exactly the clauses that change."""

import sys
from types import SimpleNamespace

import pytest

from conformance.harness import registry, results, status

sys.path.insert(0, str(registry.ROOT / "docs" / "_ext"))
matrix = pytest.importorskip("matrix")  # needs sphinx (a docs dependency)
nodes = pytest.importorskip("docutils.nodes")

RECORDED = status.recorded()
needs_results = pytest.mark.usefixtures("fresh_results")  # stale results: one message


def telling_outcomes(cid: str) -> set[str]:
    """What a clause's cells say, read from the results files: a not-applicable cell says something only when it
    is outside the clause's range; one about another device or mode (needs values on meta, ...) is its scope."""
    clause = registry.default().clauses[cid]
    found = set()
    for (version, _), doc in RECORDED.items():
        for _, table in results.tables(doc):
            outcome = table[cid]["outcome"]
            if outcome == "pass" and table[cid]["reasons"]:  # some tests not-applicable: a pass in part
                outcome = "part"
            if outcome == "not-applicable" and clause.applies_to(version):
                continue
            if outcome != "not-run" or any(e["outcome"] in ("pass", "fail") for e in table.values()):
                found.add("outside" if outcome == "not-applicable" else outcome)
    return found


@needs_results
def test_the_default_view_lists_exactly_the_clauses_whose_outcomes_differ():
    changing = matrix.load().changing()
    expected = [c.id for c in matrix.ordered_clauses() if len(telling_outcomes(c.id)) > 1]
    assert changing == expected
    assert 0 < len(changing) < len(registry.default().clauses)


@needs_results
def test_a_range_that_cuts_the_recorded_releases_puts_its_clause_in_the_default_view():
    versions = sorted({v for v, _ in RECORDED}, key=status.Version)
    changing = set(matrix.load().changing())
    for clause in registry.default().clauses.values():
        covered = [clause.applies_to(v) for v in versions]
        if any(covered) and not all(covered):
            assert clause.id in changing, f"{clause.id} ({clause.range_text()}) is missing from the default view"


@needs_results
def test_the_default_table_has_one_row_per_changing_clause_under_its_page():
    m = matrix.load()
    changing = m.changing()
    node = matrix.matrix_table(m.versions, changing, m.combined)
    rows = list(node.findall(lambda n: n.tagname == "row"))[1:]  # after the header row
    clause_rows = [r for r in rows if "matrix-page" not in r["classes"]]
    assert [r.astext().split()[0] for r in clause_rows] == changing
    pages = {registry.default().clauses[c].page for c in changing}
    assert len(rows) - len(clause_rows) == len(pages)


@needs_results
def test_devices_never_run_get_a_sentence_and_no_table():
    m = matrix.load()
    # a device no recorded run had in any mode (meta never runs the inductor mode, and has other columns)
    never = {d for d, _ in m.never_run if all((d, mode) in m.never_run for mode in matrix.modes.KNOWN)}
    assert {d for d, _ in m.columns}.isdisjoint(never)
    if never:
        sentence = matrix.never_run_sentence(m).astext()
        assert all(d in sentence for d in never)


def test_equal_neighbours_become_one_cell():
    assert matrix.spans(["a", "a", "b", "a"]) == [("a", 2), ("b", 1), ("a", 1)]
    row = matrix.clause_row("DATA-1", [("outside",), ("pass",), ("pass",)], "data")
    link = row.children[0].next_node(nodes.reference)
    assert (link["refuri"], link["tus_page"]) == ("#data-1", "spec/data")  # made relative when the page is written
    entries = row.children[1:]
    assert [e["classes"] for e in entries] == [["outcome-outside"], ["outcome-pass"]]
    assert "morecols" not in entries[0] and entries[1]["morecols"] == 1


def test_why_a_cell_is_not_applicable_comes_from_the_registry_and_the_reasons():
    from conformance.harness.modes import SPECIFIED_FROM

    clause = registry.default().clauses[next(c.id for c in registry.default().clauses.values() if c.since)]
    before = f"{clause.since.major}.{clause.since.minor - 1}.0"
    not_applicable = {"outcome": "not-applicable", "reasons": ["clause is about eager mode only"]}
    assert matrix.kind(clause, before, not_applicable) == "outside"
    assert matrix.kind(clause, str(clause.since), not_applicable) == "not-about"
    assert matrix.kind(clause, str(clause.since), {"outcome": "pass", "reasons": []}) == "pass"
    elsewhere = {"outcome": "not-applicable", "reasons": [SPECIFIED_FROM.format(release="2.9", clauses="INDEX-96")]}
    assert matrix.kind(clause, str(clause.since), elsewhere) == "elsewhere"
    in_part = {"outcome": "pass", "reasons": elsewhere["reasons"]}  # some tests stated by another clause here
    assert matrix.kind(clause, str(clause.since), in_part) == "part"


def test_a_mixed_cell_names_where_each_outcome_was_recorded():
    m = matrix.Matrix(
        ["2.0.1"],
        [("cpu", "eager"), ("meta", "eager"), ("cpu", "compile")],
        [],
        {
            ("cpu", "eager"): {"X-1": {"2.0.1": "pass"}},
            ("meta", "eager"): {"X-1": {"2.0.1": "fail"}},
            ("cpu", "compile"): {"X-1": {"2.0.1": "not-about"}},
        },
    )
    assert m.combined("X-1", "2.0.1") == (("pass", "cpu"), ("fail", "meta"))


def test_a_default_view_over_its_budget_is_a_warning(tmp_path, monkeypatch):
    page = tmp_path / "matrix.html"
    app = SimpleNamespace(
        builder=SimpleNamespace(format="html", get_outfilename=lambda docname: str(page)),
        env=SimpleNamespace(found_docs={matrix.PAGE}),
    )
    warnings = []
    monkeypatch.setattr(matrix, "logger", SimpleNamespace(warning=lambda msg, *args: warnings.append(msg % args)))
    page.write_bytes(b"x" * matrix.BUDGET)
    matrix.check_budget(app, None)
    assert warnings == []
    page.write_bytes(b"x" * (matrix.BUDGET + 1))
    matrix.check_budget(app, None)
    assert len(warnings) == 1 and "over its budget" in warnings[0]


def test_row_parity_classes_are_dropped_from_both_views(tmp_path):
    pages = {doc: tmp_path / f"{doc.replace('/', '_')}.html" for doc in (matrix.PAGE, f"{matrix.PAGE}-full")}
    app = SimpleNamespace(
        builder=SimpleNamespace(format="html", get_outfilename=lambda docname: str(pages[docname])),
        env=SimpleNamespace(found_docs=set(pages)),
    )
    for path in pages.values():
        path.write_text('<tr class="row-odd"><td>✓</td></tr><tr class="matrix-page row-even"><td>p</td></tr>')
    matrix.drop_row_parity(app, None)
    for path in pages.values():
        assert path.read_text() == '<tr><td>✓</td></tr><tr class="matrix-page"><td>p</td></tr>'
