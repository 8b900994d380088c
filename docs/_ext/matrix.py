"""Sphinx extension: the conformance matrix, rendered from the recorded results (conformance/results/).

``{conformance-matrix}`` (docs/matrix.md) is the view a reader starts with: only the clauses whose outcome
changes across releases, devices or modes, one row each, the releases with the same outcome merged into
one cell. ``{conformance-matrix-full}`` (docs/matrix-full.md) shows every clause, one table per device and
mode, each behind a dropdown. Devices that no recorded run had get one sentence, not a table of dots.

A recorded ``not-applicable`` is told apart by its cause, read from the registry: outside the clause's
version range, or not about this device or mode (which includes a clause that needs values on meta).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from clauses import _number, doc_link, table, table_row
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from conformance.harness import modes, results, status
from conformance.harness import registry as reg

logger = logging.getLogger(__name__)

# The kinds of cell, in legend order: kind -> (symbol, name, meaning). The kind is also the cell's CSS class.
KINDS = {
    "pass": ("✓", "pass", "pass"),
    "part": ("◐", "pass in part", "pass of the tests that apply here; another clause states what the others check"),
    "fail": ("✗", "fail", "fail"),
    "outside": ("–", "outside range", "not applicable: outside the clause's version range"),
    "not-about": ("n/a", "n/a here", "not applicable: not about this device or mode (or needs values, on meta)"),
    "elsewhere": ("↪", "another clause", "compiled, another clause states what its tests check on this release"),
    "not-run": ("·", "not run", "not run"),
}
# What makes a clause "change": a not-about cell is the clause's scope, an elsewhere one another clause's, not a
# change of torch's behaviour.
TELLING = {"pass", "part", "fail", "outside", "not-run"}
SCOPE = {"not-about", "elsewhere"}  # left out of a default-view cell that other kinds share
PAGE = "docs/matrix"  # the default view, whose HTML must stay small
BUDGET = 100_000  # bytes of HTML for the default view; a phone on a slow network still opens it
MAX_PHONE_COLUMNS = 40  # the widest merged cell matrix.css spans in the phone view


def kind(clause: reg.Clause, version: str, entry: dict) -> str:
    outcome = entry["outcome"]
    if results.in_part(entry):
        return "part"
    if outcome != "not-applicable":
        return outcome
    # A withdrawn clause holds on no release: outside its range everywhere.
    if clause.withdrawn or not clause.applies_to(version):
        return "outside"
    return "elsewhere" if any(map(status.SPECIFIED_FROM.match, entry["reasons"])) else "not-about"


@dataclass
class Matrix:
    versions: list[str]  # recorded, oldest first
    columns: list[tuple[str, str]]  # (device, mode) in which some recorded run ran a test
    never_run: list[tuple[str, str]]  # (device, mode) that no recorded run had
    cells: dict[tuple[str, str], dict[str, dict[str, str]]]  # column -> clause -> version -> kind

    def changing(self) -> list[str]:
        """The clauses whose outcome changes across releases, devices or modes (in registry order)."""
        return [cid for cid in self.clause_ids() if len(self.telling(cid)) > 1]

    def telling(self, cid: str) -> set[str]:
        return {k for col in self.columns for k in self.cells[col][cid].values()} & TELLING

    def clause_ids(self) -> list[str]:
        return [c.id for c in ordered_clauses()]

    def counts(self) -> Counter:
        return Counter(
            k for col in self.columns for by_version in self.cells[col].values() for k in by_version.values()
        )

    def alone(self, column: tuple[str, str], cid: str, version: str) -> tuple:
        """One cell of a full table, shaped like a cell of the default view: (kind,)."""
        return (self.cells[column][cid].get(version, "not-run"),)

    def combined(self, cid: str, version: str) -> tuple:
        """One cell of the default view: (kind,) when every device and mode the clause is about agrees, else
        ((kind, "cpu, meta compiled"), ...) naming where each kind was recorded."""
        where: dict[str, list[str]] = {}
        for device, mode in self.columns:
            k = self.cells[(device, mode)][cid].get(version, "not-run")
            where.setdefault(k, []).append(status.column(device, mode))
        if where.keys() - SCOPE:  # something recorded here tells; the scope kinds would only clutter the cell
            for k in SCOPE:
                where.pop(k, None)
        if len(where) == 1:
            return (next(iter(where)),)
        return tuple((k, ", ".join(cols)) for k, cols in where.items())


def ordered_clauses() -> list[reg.Clause]:
    return sorted(reg.default().clauses.values(), key=lambda c: (c.page, _number(c.id)))


def load() -> Matrix | None:
    """The matrix of every valid, fresh recorded results file, or None when none is recorded."""
    recorded = status.recorded()
    if not recorded:
        return None
    versions = status.versions()
    clauses = reg.default().clauses
    cells: dict[tuple[str, str], dict[str, dict[str, str]]] = {}
    ran: set[tuple[str, str]] = set()
    for (version, _), doc in recorded.items():
        for column, entries in results.tables(doc):
            by_clause = cells.setdefault(column, {cid: {} for cid in clauses})
            for cid, entry in entries.items():
                by_clause[cid][version] = kind(clauses[cid], version, entry)
                if entry["outcome"] in ("pass", "fail"):
                    ran.add(column)
    every = [(d, m) for d in status.KNOWN for m in modes.KNOWN]
    return Matrix(versions, [c for c in every if c in ran], [c for c in every if c not in ran], cells)


def spans(values: list) -> list[tuple[object, int]]:
    """Runs of equal neighbours: [a, a, b] -> [(a, 2), (b, 1)]; a run becomes one cell across its releases."""
    runs: list[list] = []
    for value in values:
        if runs and runs[-1][0] == value:
            runs[-1][1] += 1
        else:
            runs.append([value, 1])
    return [(v, n) for v, n in runs]


def outcome_cell(value: tuple) -> nodes.Node:
    """The content of a cell: a symbol, or for a mixed cell each symbol followed by where it was recorded."""
    if len(value) == 1:
        return nodes.Text(KINDS[value[0]][0])
    box = nodes.inline()
    for k, where in value:
        box += nodes.inline("", f"{KINDS[k][0]} {where}", classes=[f"outcome-{k}"])
    return box


def clause_row(cid: str, values: list[tuple], page: str) -> nodes.row:
    """A clause's row: its link, then one cell per run of releases with the same outcome."""
    runs = spans(values)
    # A plain link to the clause's anchor on its page (its URI is set once the builder can say it: resolve_links), not
    # a cross-reference: 37 bytes of HTML less a row, which keeps the default view inside its budget.
    link = nodes.reference("", cid, internal=True, refuri=f"#{cid.lower()}", tus_page=f"spec/{page}")
    row = table_row([link, *(outcome_cell(v) for v, _ in runs)])
    for entry, (value, width) in zip(row.children[1:], runs, strict=True):
        entry["classes"].append(f"outcome-{value[0]}" if len(value) == 1 else "outcome-mixed")
        if width > 1:
            entry["morecols"] = width - 1
    return row


def page_row(page: str, width: int) -> nodes.row:
    """The row that opens the group of a spec page: its title, linked, across the whole table."""
    row = table_row([doc_link(f"spec/{page}")])
    row.children[0]["morecols"] = width - 1
    row["classes"].append("matrix-page")
    return row


def matrix_table(versions: list[str], clause_ids: list[str], value) -> nodes.table:
    """Clauses grouped by page; value(cid, version) gives each cell."""
    by_id = reg.default().clauses
    rows, page = [], None
    for cid in clause_ids:
        if by_id[cid].page != page:
            page = by_id[cid].page
            rows.append(page_row(page, len(versions) + 1))
        rows.append(clause_row(cid, [value(cid, v) for v in versions], page))
    return table(["conformance-matrix"], [1] * (len(versions) + 1), ["clause", *labels(versions)], rows)


def phone_grid(versions: list[str]) -> nodes.raw:
    """The rule of the phone view (matrix.css, below 40em) that depends on the number of releases: each row a grid of
    one column per release, the clause (or page) on a line of its own above; the spans of merged cells are in
    matrix.css (inline here they cost the default view 1.4 kB of its HTML budget)."""
    if len(versions) > MAX_PHONE_COLUMNS:  # matrix.css spans merged cells of up to this many releases
        raise ValueError(f"{len(versions)} releases: matrix.css spans {MAX_PHONE_COLUMNS} at most; add its rules")
    rule = f"table.conformance-matrix tr{{grid-template-columns:repeat({len(versions)},minmax(0,1fr))}}"
    return nodes.raw("", f"<style>@media (max-width:40em){{{rule}}}</style>", format="html")


def labels(versions: list[str]) -> list[str]:
    """Column headings: "2.10" for 2.10.0, narrow enough for the page, unless two patches of a minor are recorded."""
    minors = [".".join(v.split(".")[:2]) for v in versions]
    return minors if len(set(minors)) == len(minors) else versions


def legend() -> nodes.bullet_list:
    items = nodes.bullet_list(classes=["matrix-legend"])
    for k, (symbol, _, meaning) in KINDS.items():
        para = nodes.paragraph()
        para += nodes.inline("", symbol, classes=["outcome-symbol", f"outcome-{k}"])
        para += nodes.Text(f" {meaning}")
        items += nodes.list_item("", para)
    # Shown on a phone only (matrix.css), where a cell has no room for each device's and mode's symbol.
    para = nodes.paragraph()
    para += nodes.inline("", "≠", classes=["outcome-symbol", "outcome-mixed"])
    para += nodes.Text(" devices or modes differ here (on a wider screen the cell names each)")
    items += nodes.list_item("", para, classes=["matrix-phone-only"])
    return items


def counted(counts: Counter) -> str:
    return ", ".join(f"{counts[k]:,} {KINDS[k][1]}" for k in KINDS)


def never_run_sentence(matrix: Matrix) -> nodes.paragraph | None:
    devices = [d for d in status.KNOWN if all((d, m) in matrix.never_run for m in modes.KNOWN)]
    if not devices:
        return None
    many = len(devices) > 1
    text = (
        f"Not run: {' and '.join(devices)}. No recorded run had {'these devices' if many else 'this device'}, "
        "so every clause is not run there, and no table is shown."
    )
    return nodes.paragraph("", text)


def resolve_links(app, doctree, docname):
    """Point each clause row's link at its page, relative to the page being written (clause_row)."""
    for ref in doctree.findall(nodes.reference):
        if page := ref.attributes.pop("tus_page", None):
            ref["refuri"] = app.builder.get_relative_uri(docname, page) + ref["refuri"]


class MatrixDirective(SphinxDirective):
    """The default view: a summary, the legend, and the clauses whose outcome changes."""

    def run(self):
        matrix = load()
        if matrix is None:
            return [nodes.paragraph("", "No results are recorded yet.")]
        changing = matrix.changing()
        columns = " and ".join(", ".join(status.column(d, m) for d, m in matrix.columns).rsplit(", ", 1))
        summary = nodes.paragraph(classes=["matrix-summary"])
        summary += nodes.strong("", f"{len(matrix.clause_ids())} clauses, {len(changing)} of them change")
        summary += nodes.Text(
            f" across the {len(matrix.versions)} recorded releases ({matrix.versions[0]} to {matrix.versions[-1]}), "
            f"run on {columns}. Outcomes recorded: {counted(matrix.counts())}."
        )
        out = [summary, legend()]
        if sentence := never_run_sentence(matrix):
            out.append(sentence)
        out.append(matrix_table(matrix.versions, changing, matrix.combined))
        out.append(phone_grid(matrix.versions))
        return out


class FullMatrixDirective(SphinxDirective):
    """Every clause, one table per device and mode, each inside a dropdown (HTML <details>)."""

    def run(self):
        matrix = load()
        if matrix is None:
            return [nodes.paragraph("", "No results are recorded yet.")]
        out = [legend()]
        if sentence := never_run_sentence(matrix):
            out.append(sentence)
        for column in matrix.columns:
            cells = matrix.cells[column]
            title = f"{status.column(*column)}: {counted(Counter(k for v in cells.values() for k in v.values()))}"
            box = self.dropdown(title)
            box += matrix_table(matrix.versions, matrix.clause_ids(), functools.partial(matrix.alone, column))
            out.append(box)
        out.append(phone_grid(matrix.versions))
        return out

    def dropdown(self, title: str) -> nodes.Element:
        """An empty sphinx-design dropdown, parsed from MyST so that its HTML stays sphinx-design's."""
        holder = nodes.Element()
        self.state.nested_parse(StringList([f":::{{dropdown}} {title}", ":::"]), self.content_offset, holder)
        return holder.children[0]


ROW_CLASSES = re.compile(r'<tr class="([^"]*)">')


def drop_row_parity(app, exception):
    """Sphinx marks every table row "row-odd" or "row-even", which neither furo nor matrix.css reads: 16 bytes a row
    that the default view's budget is better spent on (about 2.7 kB at 166 rows). Runs before check_budget."""
    if exception is not None or app.builder.format != "html":
        return
    for doc in (PAGE, f"{PAGE}-full"):
        path = Path(app.builder.get_outfilename(doc))
        if doc in app.env.found_docs and path.is_file():
            html = path.read_text(encoding="utf-8")
            path.write_text(ROW_CLASSES.sub(_without_parity, html), encoding="utf-8")


def _without_parity(match: re.Match) -> str:
    kept = " ".join(c for c in match[1].split() if c not in ("row-odd", "row-even"))
    return f'<tr class="{kept}">' if kept else "<tr>"


def check_budget(app, exception):
    """The default view must stay small: a warning (an error under -W) when its HTML grows past the budget. (Not in
    a draft: its stale clauses, shown as not run, are rows the recorded site does not have.)"""
    if exception is not None or app.builder.format != "html" or PAGE not in app.env.found_docs or status.DRAFT_STALE:
        return
    path = Path(app.builder.get_outfilename(PAGE))
    if path.is_file() and (size := path.stat().st_size) > BUDGET:
        logger.warning("%s is %d bytes of HTML, over its budget of %d: show fewer rows by default", path, size, BUDGET)


def always_read(app, env, added, changed, removed):
    """Both pages are made of the recorded results, which Sphinx does not watch: read them on every build."""
    return [doc for doc in (PAGE, f"{PAGE}-full") if doc in env.found_docs]


def setup(app):
    app.connect("env-get-outdated", always_read)
    app.add_directive("conformance-matrix", MatrixDirective)
    app.add_directive("conformance-matrix-full", FullMatrixDirective)
    app.connect("doctree-resolved", resolve_links)
    app.connect("build-finished", drop_row_parity)  # before check_budget: connected first, run first
    app.connect("build-finished", check_budget)
    return {"version": "1", "parallel_read_safe": False}
