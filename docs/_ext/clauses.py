"""Sphinx extension: the ``clause`` and ``example`` directives, the ``clause`` role, the clause index.

Clauses are parsed by the registry (conformance/harness/registry.py), the one
source of truth; this extension renders them and checks that Sphinx sees the
same clauses the registry does. An unknown clause in a ``{clause}`` reference is
an error under ``-W``.
"""

from __future__ import annotations

import html
import os
import re

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from conformance.harness import registry as reg
from conformance.harness import results, status

logger = logging.getLogger(__name__)


def ref_link(target: str, content: nodes.Node) -> addnodes.pending_xref:
    """A link to a label of the site (a clause, an example, an error message), shown as ``content``."""
    return addnodes.pending_xref(
        "", content, refdomain="std", reftype="ref", reftarget=target, refexplicit=True, refwarn=True
    )


def _clause_link(cid: str) -> addnodes.pending_xref:
    ref = ref_link(cid.lower(), nodes.literal(cid, cid))
    ref["classes"].append("clause-ref")
    return ref


CLAUSE_ID = re.compile(r"\b[A-Z]+-\d+\b")
RELATIVE_DOC = re.compile(r"\{doc\}`([\w]+)`")


def level_badge(clause: reg.Clause) -> list[nodes.Node]:
    """The level after a clause's ID; most clauses are MUST, so only the exceptions carry a badge."""
    if clause.level == "MUST":
        return []
    if clause.level == "OBSERVED":  # what it pins, and why torch does not promise that, on hover
        why = " ".join(f"{d}: {reg.DETAILS[d]}." for d in clause.details)
        badge = nodes.abbreviation(clause.level, clause.level, explanation=why, classes=["clause-level"])
        return [nodes.Text(" "), badge]
    return [nodes.Text(" "), nodes.inline(clause.level, clause.level, classes=["clause-level"])]


def linked_ids(text: str) -> list[nodes.Node]:
    """Plain text with each clause ID in it made a link to its clause."""
    out, at = [], 0
    for match in CLAUSE_ID.finditer(text):
        if match.group() in reg.default().clauses:
            out += [nodes.Text(text[at : match.start()]), _clause_link(match.group())]
            at = match.end()
    return [*out, nodes.Text(text[at:])]


def backends(modes) -> str:
    """'aot_eager and inductor': the torch.compile backends of these modes."""
    return " and ".join(reg.BACKENDS[m] for m in modes if m in reg.BACKENDS)


def first_sentence(text: str, limit: int = 200) -> str:
    """The statement up to its first full stop outside inline code, cut at a space outside code when longer than
    ``limit``; "..." when more follows."""
    inside_code, last_space = False, None
    for i, ch in enumerate(text):
        if ch == "`":
            inside_code = not inside_code
        elif inside_code:
            continue
        elif ch == "." and (i + 1 == len(text) or text[i + 1] == " "):
            return text[: i + 1] + (" ..." if text[i + 1 :].strip() else "")
        elif ch == " ":
            if i > limit and last_space:
                return text[:last_space] + " ..."
            last_space = i
    return text


def clause_role(name, rawtext, text, lineno, inliner, options=None, content=()):
    cid = text.strip()
    if cid not in reg.default().clauses:
        msg = inliner.reporter.error(f"unknown clause {cid!r} (not defined in spec/*.md)", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [_clause_link(cid)], []


class ClauseDirective(SphinxDirective):
    """One normative statement with a stable ID, level and version range."""

    required_arguments = 1
    has_content = True
    # The registry reads and checks the options (harness/registry.py); Sphinx need only accept the same ones.
    option_spec = {key: directives.unchanged for key in sorted(reg.OPTIONS)} | {"level": directives.unchanged_required}

    def run(self):
        cid = self.arguments[0]
        clause = reg.default().clauses.get(cid)
        if clause is None or clause.page != self.env.docname.split("/")[-1]:
            raise self.error(f"clause {cid} is not in the registry for this page (format error?)")
        self.env.tus_clauses_seen = getattr(self.env, "tus_clauses_seen", set()) | {cid}
        box = nodes.container(classes=["clause", f"clause-{clause.level.lower()}"])
        box["names"].append(clause.anchor)
        self.state.document.note_explicit_target(box)
        head = nodes.paragraph(classes=["clause-head"])
        head += nodes.reference("", "", nodes.strong(cid, cid), refid=box["ids"][0], classes=["clause-id"])
        head += level_badge(clause)
        # A search target: the clause ID finds this box first (Sphinx's object search).
        self.env.get_domain("std").note_object("clause-id", cid, box["ids"][0], location=self.get_location())
        facts = [clause.range_text()]
        if clause.details:
            facts.append(f"observed, not promised: {', '.join(d.replace('-', ' ') for d in clause.details)}")
        if clause.scope:
            facts.append(f"about {clause.scope}")
        if clause.needs_values:
            facts.append("needs values (not applicable on meta)")
        if clause.devices:
            facts.append(f"about {', '.join(clause.devices)} only")
        if clause.modes == ("eager",):
            facts.append("eager mode only (differs under torch.compile)")
        elif clause.compiled_only:
            facts.append(f"under torch.compile only ({backends(clause.modes)})")
        elif "inductor" in clause.modes:
            facts.append("checked with inductor too")
        if clause.withdrawn:
            facts.append(f"withdrawn: {clause.withdrawn}")
        # Parsed as markup: a scope may name code (`Symmetric`) or another clause ({clause}`FUNC-15`).
        facts_nodes, problems = self.state.inline_text(" · " + "; ".join(facts), self.lineno)
        head += nodes.inline("", "", *facts_nodes, *problems, classes=["clause-range"])
        box += head
        self.state.nested_parse(self.content, self.content_offset, box)
        if clause.evidence:  # why its level, folded: its line sits in the box's top right corner (clauses.css)
            said, problems = self.state.inline_text(clause.evidence, self.lineno)
            box += folded(f"why {clause.level}", [nodes.paragraph("", "", *said, *problems)], "clause-evidence")
        box += nodes.paragraph("", "", *linked_ids(status.clause_line(clause)), classes=["clause-status", "no-search"])
        return [box]


class ExampleDirective(SphinxDirective):
    """An executed example (a doctest); the conformance suite runs it."""

    has_content = True
    option_spec = {"clauses": directives.unchanged_required}

    def run(self):
        code = "\n".join(self.content)
        block = nodes.literal_block(code, code, language="pycon", classes=["spec-example"])
        # The first example of each clause on the page is the target `example-<id>` (the divergences table links it).
        labelled = self.env.temp_data.setdefault("tus_example_labels", set())
        page = self.env.docname.split("/")[-1]
        for cid in reg.default().of_page(page, self.options["clauses"].split()):
            if cid not in labelled:
                labelled.add(cid)
                block["names"].append(example_anchor(cid))
        if block["names"]:
            self.state.document.note_explicit_target(block)
        return [block, example_caption(self.options["clauses"].split())]


def example_anchor(cid: str) -> str:
    return f"example-{cid.lower()}"


def example_link(cid: str) -> addnodes.pending_xref:
    """A link to the first executed example of a clause (on its own page)."""
    return ref_link(example_anchor(cid), nodes.inline("example", "example"))


def example_caption(clause_ids) -> nodes.paragraph:
    """Said under every example the suite executes (an {example}, an erratum's corrected snippet)."""
    caption = nodes.paragraph(classes=["example-caption"])
    caption += nodes.Text("Executed by the conformance suite; shows ")
    for i, cid in enumerate(clause_ids):
        caption += nodes.Text(", " if i else "")
        caption += _clause_link(cid)
    return caption


def doc_link(docname: str, content: nodes.Node | None = None) -> addnodes.pending_xref:
    """A link to a page of the site; without content, Sphinx shows the page's title."""
    return addnodes.pending_xref(
        "",
        content if content is not None else nodes.inline(docname, docname),
        refdomain="std",
        reftype="doc",
        reftarget=f"/{docname}",
        refexplicit=content is not None,
        refwarn=True,
    )


def table_row(cells, strong=False) -> nodes.row:
    """One row of a generated table; a cell is text or a node."""
    row = nodes.row()
    for cell in cells:
        para = nodes.paragraph()
        if isinstance(cell, nodes.container):  # parsed markup: paragraphs of its own
            para = cell
        elif isinstance(cell, nodes.Node):
            para += cell
        else:
            para += nodes.strong(cell, cell) if strong else nodes.Text(cell)
        entry = nodes.entry()
        entry += para
        row += entry
    return row


def table(classes: list[str], widths, header, rows) -> nodes.table:
    """A generated table (every table this extension and its siblings render): header row, then rows."""
    node = nodes.table(classes=classes)
    group = nodes.tgroup(cols=len(widths))
    node += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head, body = nodes.thead(), nodes.tbody()
    group += head
    group += body
    head += table_row(header)
    for row in rows:
        body += row if isinstance(row, nodes.row) else table_row(row)
    return node


class ClauseIndexDirective(SphinxDirective):
    """A table of every clause of every page, generated from the registry: the first sentence of each statement
    rendered as MyST (so its code and clause links read as on the page), its page, versions and recorded status."""

    def run(self):
        # One table per page, folded under the page's title and count: the index is a screen long until opened.
        out = []
        for page in reg.default().pages():
            clauses = sorted((c for c in reg.default().clauses.values() if c.page == page), key=lambda c: _number(c.id))
            rows = []
            for c in clauses:
                statement = nodes.container()
                text = RELATIVE_DOC.sub(r"{doc}`/spec/\1`", first_sentence(" ".join(c.text.split())))  # spec/ relative
                self.state.nested_parse(StringList([text]), 0, statement)
                declared = c.range_text().replace(" (exclusive)", "").replace("all versions", "all")
                versions = declared if c.level == "MUST" else f"{c.level}; {declared}"
                rows.append([_clause_link(c.id), versions, status.short(c), statement])
            title = _page_title(page)
            summary = f'<details class="clause-index-page"><summary>{html.escape(title)} ({len(clauses)} clauses: '
            summary += f"{html.escape(clauses[0].id)} to {html.escape(clauses[-1].id)})</summary>"
            out += [nodes.raw("", summary, format="html"), nodes.paragraph("", "", doc_link(f"spec/{page}"))]
            header = ["Clause", "Versions", "Holds on", "Statement"]
            out += [table(["clause-index"], (10, 12, 14, 64), header, rows), nodes.raw("", "</details>", format="html")]
        return out


def _page_title(page: str) -> str:
    """The page's heading as plain text (its first line, without the markup)."""
    first = (reg.SPEC_DIR / f"{page}.md").read_text(encoding="utf-8").splitlines()[0]
    return re.sub(r"[`*]", "", first.lstrip("# ").strip())


def _number(cid: str) -> int:
    return int(cid.rsplit("-", 1)[1])


class CoverageDirective(SphinxDirective):
    """Where the recorded results come from (versions, devices, modes): said once, for the whole site."""

    def run(self):
        return [nodes.paragraph("", status.coverage(), classes=["results-coverage"])]


def add_page_coverage(app, doctree):
    """Once per spec page, before its first section: where the results under its clauses come from."""
    if not any("clause" in node["classes"] for node in doctree.findall(nodes.container)):
        return
    page = next(doctree.findall(nodes.section), None)
    first = next((child for child in page.children if isinstance(child, nodes.section)), None) if page else None
    if first is not None:
        note = nodes.paragraph(
            "", status.coverage() + " Under each clause: where it holds.", classes=["results-coverage", "no-search"]
        )
        page.insert(page.index(first), note)


def add_compiled_line(app, doctree):
    """On each spec page that has clauses about one mode: a "Compiled:" line right under its summary, so that a reader
    who runs torch.compile learns there, not sections further down, which clauses differ and which state what
    compiled code does (the differences by release: spec/compile)."""
    docname = app.env.docname
    if not docname.startswith("spec/") or docname == "spec/compile":
        return
    clauses = [c for c in reg.default().clauses.values() if c.page == docname[5:] and not c.withdrawn]
    eager = [c.id for c in clauses if c.modes == ("eager",)]
    compiled = [c.id for c in clauses if c.compiled_only]
    if not eager and not compiled:
        return
    line = nodes.paragraph(classes=["compiled-line"])
    line += nodes.strong("Compiled:", "Compiled:")
    text = f" under torch.compile ({backends(reg.MODES)}) {len(eager)} clauses of this page hold in eager mode only"
    line += nodes.Text(text + ("; what compiled code does is stated by " if compiled else ""))
    for i, cid in enumerate(compiled):
        line += [nodes.Text(", " if i else ""), _clause_link(cid)]
    line += [nodes.Text(". Every difference, by release: "), doc_link("spec/compile"), nodes.Text(".")]
    page = next(doctree.findall(nodes.section), None)
    if page is None:
        return
    summary = next(
        (n for n in page.children if isinstance(n, nodes.paragraph) and n.astext().startswith("Summary.")), None
    )
    after = summary if summary is not None else next((n for n in page.children if isinstance(n, nodes.paragraph)), None)
    page.insert(page.index(after) + 1 if after is not None else 1, line)


# Parts of a spec page that a reader looking for the rule of eager code does not need on first view fold under one
# line, where they stand; headings stay in the page's contents, and clause_fold.js opens the fold a link lands in.
# Sections by the start of their title, with the line said for them ({n}: their executed examples, {k}: clauses):
FOLDED_SECTIONS = {
    "Under torch.compile": "what changes when the update runs under torch.compile ({k})",
    "Examples": "{n} executed examples",
    "Errata of the source material": "what the source write-ups get wrong here, entry by entry",
}


def fold_page(app, doctree):
    """On each spec page: the sections of FOLDED_SECTIONS fold whole, and elsewhere (but on the compile page, all of it
    about compiled code) every run of consecutive clauses about compiled code only folds under a line naming them."""
    docname = app.env.docname
    if not docname.startswith("spec/"):
        return
    clauses = reg.default().clauses
    folded = []
    for section in list(doctree.findall(nodes.section)):
        title = section[0].astext() if section.children and isinstance(section[0], nodes.title) else ""
        line = next((line for start, line in FOLDED_SECTIONS.items() if title.startswith(start)), None)
        if line is None or len(section) < 2 or any(section in fold.parent.findall(nodes.section) for fold in folded):
            continue
        body = list(section.children[1:])
        n = sum(1 for b in body for x in b.findall(nodes.literal_block) if "spec-example" in x["classes"])
        k = sum(1 for b in body for x in b.findall(nodes.container) if _clause_of(x, clauses))
        folded.append(_fold(section, body, line.format(n=n, k=_clauses_counted(k))))
    if docname == "spec/compile":
        return
    for parent in list(doctree.findall(nodes.Element)):
        run: list[nodes.Element] = []
        for child in [*parent.children, None]:
            clause = _clause_of(child, clauses)
            if clause is not None and clause.compiled_only:
                run.append(child)
                continue
            if len(run) and not any(run[0] in fold.parent.findall(nodes.container) for fold in folded):
                ids = ", ".join(_clause_of(box, clauses).id for box in run)
                _fold(parent, run, f"Under torch.compile: {_clauses_counted(len(run))} ({ids})")
            run = []


def _clauses_counted(k: int) -> str:
    return {0: "prose", 1: "1 clause"}.get(k, f"{k} clauses")


def _clause_of(node, clauses) -> reg.Clause | None:
    if not isinstance(node, nodes.container) or "clause" not in node["classes"]:
        return None
    return next((clauses[name.upper()] for name in node["names"] if name.upper() in clauses), None)


def folded(line: str, children: list[nodes.Node], classes: str = "fold") -> list[nodes.Node]:
    """``children`` inside an HTML <details> (closed) whose summary is ``line``: every fold of the site."""
    opening = nodes.raw("", f'<details class="{classes}"><summary>{html.escape(line)}</summary>', format="html")
    return [opening, *children, nodes.raw("", "</details>", format="html")]


def _fold(parent: nodes.Element, children: list[nodes.Node], line: str) -> nodes.raw:
    """``children`` of ``parent`` (consecutive) folded in place under ``line``; the fold's opening."""
    at = parent.index(children[0])
    for child in children:
        parent.remove(child)
    parent[at:at] = fold = folded(line, children)
    return fold[0]


def check_consistency(app, env):
    seen = getattr(env, "tus_clauses_seen", set())
    missing = sorted(set(reg.default().clauses) - seen)
    if missing:
        logger.warning("clauses in the registry but not rendered by Sphinx: %s", ", ".join(missing))


def check_results(app):
    """Recorded results must be valid and fresh for the current tests, or the site would show stale claims: the
    build stops at once with the results checker's message (the stale clauses and the command that refreshes them),
    before a page could fail on a clause that has no results yet. (SystemExit: Sphinx prints any other exception
    with a crash report.) A draft (status.DRAFT_ENV=1, the short loop's build) shows stale clauses as not run
    and says how many."""
    draft = os.environ.get(status.DRAFT_ENV) == "1"
    try:
        stale, _ = results.check_recorded(allow_stale=draft)
    except results.ResultsError as exc:
        logger.error("%s", exc)
        raise SystemExit(2) from None
    if stale:
        status.DRAFT_STALE.update((version, set(cids)) for version, cids in stale.items())
        shown = sorted({c for cids in stale.values() for c in cids}, key=results.natural)
        logger.info("a draft: %d stale clauses shown as not run (%s)", len(shown), ", ".join(shown[:8]))


class LevelsDirective(SphinxDirective):
    """What each level means, what an OBSERVED clause may pin and why, and the default scope: from the registry,
    the one place that defines them (spec.json carries the same)."""

    def run(self):
        levels = nodes.definition_list()
        for level, meaning in reg.LEVEL_MEANING.items():
            levels += nodes.definition_list_item(
                "", nodes.term(level, level), nodes.definition("", nodes.paragraph(meaning, meaning))
            )
        details = nodes.bullet_list()
        for key, why in reg.DETAILS.items():
            details += nodes.list_item("", nodes.paragraph("", "", nodes.literal(key, key), nodes.Text(f": {why}.")))
        intro = "An OBSERVED clause names the details it pins; each is a detail for this reason:"
        scope = f"Scope. A clause is about {reg.DEFAULT_SCOPE}, unless its head says which tensors it is about "
        scope += "(a kinds population its tests run in full, such as TENSOR_KINDS, or words)."
        return [levels, nodes.paragraph(intro, intro), details, nodes.paragraph(scope, scope)]


def setup(app):
    app.add_object_type("clause-id", "clause-id", objname="spec clause")  # search targets (see ClauseDirective)
    app.connect("doctree-read", add_page_coverage)
    app.connect("doctree-read", add_compiled_line)
    app.connect("doctree-read", fold_page)
    app.add_directive("results-coverage", CoverageDirective)
    app.add_role("clause", clause_role)
    app.add_directive("clause", ClauseDirective)
    app.add_directive("example", ExampleDirective)
    app.add_directive("clause-index", ClauseIndexDirective)
    app.add_directive("levels", LevelsDirective)
    app.connect("env-check-consistency", check_consistency)
    app.connect("builder-inited", check_results)
    return {"version": "1", "parallel_read_safe": False, "env_version": 1}
