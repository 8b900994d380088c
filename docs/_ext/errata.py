"""Sphinx extension: the ``erratum`` directive and role, and the errata summary.

The errata are read by errata_source.py from docs/errata.md, the single source
of every verdict; this extension renders them there and shows them elsewhere:

- ``:::{erratum} EN-10 <title>`` (docs/errata.md only) renders one entry as a
  section with the stable anchor ``#en-10``: its title, its source, the quote,
  the verdict (from ``:verdict:``), the body, and the pages that refer to it;
- ``{erratum}`EN-10``` (any page) renders the ID and the verdict of the entry,
  linked to its anchor; an unknown ID is an error (and fails ``-W``);
- ``:::{errata-summary}`` renders the count of entries per verdict and source.
"""

from __future__ import annotations

import errata_source as src
from clauses import doc_link, table, table_row
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)


class erratum_ref(nodes.inline):  # noqa: N801 (docutils node classes are lower case)
    """An ``{erratum}`` reference, replaced by a link once the output document is known."""


def _entries(env) -> dict[str, src.Entry]:
    return getattr(env.app, "tus_errata", {})


def _verdict_class(verdict: str) -> str:
    return "verdict-" + verdict.replace(" ", "-")


def _plain(text: str) -> str:
    return text.replace("`", "")


def erratum_role(name, rawtext, text, lineno, inliner, options=None, content=()):
    env = inliner.document.settings.env
    env.note_dependency(str(src.ERRATA_PAGE))  # a changed verdict re-reads the pages that show it
    eid = text.strip()
    if eid not in _entries(env):
        msg = inliner.reporter.error(f"unknown erratum {eid!r} (not defined in docs/errata.md)", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [erratum_ref(rawtext, "", eid=eid)], []


def resolve_references(app, doctree, docname):
    entries = _entries(app.env)
    for node in list(doctree.findall(erratum_ref)):
        entry = entries.get(node["eid"])
        if entry is None:  # reported when read
            node.replace_self(nodes.Text(node["eid"]))
            continue
        uri = "" if docname == src.ERRATA_DOCNAME else app.builder.get_relative_uri(docname, src.ERRATA_DOCNAME)
        ref = nodes.reference(
            "",
            "",
            internal=True,
            refuri=f"{uri}#{entry.anchor}",
            reftitle=f"{entry.id}. {_plain(entry.title)}: {entry.verdict}",
            classes=["erratum-ref", _verdict_class(entry.verdict)],
        )
        ref += nodes.inline(entry.id, entry.id, classes=["erratum-id"])
        ref += nodes.Text(": ")
        ref += nodes.emphasis(entry.verdict, entry.verdict, classes=["erratum-verdict"])
        node.replace_self(ref)


def _note_sources(env):
    """The errata page shows which pages refer to each entry: re-read it when any page changes."""
    for path in [*(src.ROOT / "spec").glob("*.md"), *(src.ROOT / "docs").glob("*.md")]:
        env.note_dependency(str(path))


class ErratumDirective(SphinxDirective):
    """One claim of the source material, with its stable ID and its verdict."""

    required_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = {
        "verdict": directives.unchanged_required,
        "split-from": directives.unchanged_required,
        "implied": directives.flag,
    }

    def run(self):
        if self.env.docname != src.ERRATA_DOCNAME:
            raise self.error(f"errata are defined in {src.ERRATA_DOCNAME}.md only; elsewhere, refer with {{erratum}}")
        eid = self.arguments[0].split()[0]
        entry = _entries(self.env).get(eid)
        if entry is None or entry.verdict != self.options.get("verdict"):
            raise self.error(f"erratum {eid} is not read the same way by errata_source.py (format error?)")
        self.env.tus_errata_seen = getattr(self.env, "tus_errata_seen", set()) | {eid}
        _note_sources(self.env)

        section = nodes.section(classes=["erratum", _verdict_class(entry.verdict)])
        section["names"].append(entry.anchor)
        self.state.document.note_explicit_target(section)
        title_nodes, messages = self.state.inline_text(f"{entry.id}. {entry.title}", self.lineno)
        section += nodes.title("", "", *title_nodes)
        section += messages

        meta = nodes.paragraph(classes=["erratum-meta"])
        meta += nodes.Text(f"{entry.source.language} source (")
        meta += nodes.literal(entry.source.path, entry.source.path)
        meta += nodes.Text(")")
        if entry.split_from:
            meta += nodes.Text("; split from ")
            meta += erratum_ref("", "", eid=entry.split_from)
        if entry.implied:
            meta += nodes.Text("; a claim the code implies without stating it")
        section += meta

        body = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, body)
        children = list(body.children)
        verdict = nodes.strong("", f"Verdict: {entry.verdict}.", classes=["erratum-verdict-line"])
        at = next((i for i, n in enumerate(children) if isinstance(n, nodes.block_quote)), None)
        if at is None:
            raise self.error(f"erratum {eid}: the body must start with the quote")
        follow = children[at + 1] if at + 1 < len(children) else None
        if isinstance(follow, nodes.paragraph):
            follow.insert(0, nodes.Text(" "))
            follow.insert(0, verdict)
        else:
            children.insert(at + 1, nodes.paragraph("", "", verdict))
        for child in children:
            section += child

        referring = src.referring_pages().get(entry.id, [])
        if referring:
            para = nodes.paragraph(classes=["erratum-referring"])
            para += nodes.Text("Referred to from: ")
            for i, docname in enumerate(referring):
                para += nodes.Text(", " if i else "")
                para += doc_link(docname)
            para += nodes.Text(".")
            section += para
        return [section]


class ErrataSummaryDirective(SphinxDirective):
    """Entries per verdict and source, and the entries no page refers to, from the single source."""

    def run(self):
        entries = _entries(self.env)
        _note_sources(self.env)
        keys = list(src.SOURCES)
        header = ["verdict", *[f"{s.language} ({s.path})" for s in src.SOURCES.values()], "total"]
        rows = []
        for verdict in src.VERDICTS:
            counts = [sum(e.verdict == verdict and e.id.startswith(k + "-") for e in entries.values()) for k in keys]
            rows.append([verdict, *map(str, counts), str(sum(counts))])
        totals = [sum(e.id.startswith(k + "-") for e in entries.values()) for k in keys]
        rows.append(table_row(["total", *map(str, totals), str(len(entries))], strong=True))
        summary = table(["errata-summary"], (30, *[20] * len(keys), 10), header, rows)
        out = [summary]
        referring = src.referring_pages()
        for label, ids in (
            ("Entries split off another entry: ", [e.id for e in entries.values() if e.split_from]),
            ("Claims the code implies without stating them: ", [e.id for e in entries.values() if e.implied]),
            (
                "Entries that no spec page refers to (each names its closest clauses instead): ",
                [e.id for e in entries.values() if not any(d.startswith("spec/") for d in referring.get(e.id, []))],
            ),
        ):
            if ids:
                para = nodes.paragraph()
                para += nodes.Text(label)
                for i, eid in enumerate(ids):
                    para += nodes.Text(", " if i else "")
                    para += erratum_ref("", "", eid=eid)
                para += nodes.Text(".")
                out.append(para)
        return out


def load_errata(app):
    try:
        app.tus_errata = src.load()
    except src.ErrataError as exc:
        app.tus_errata = {}
        logger.error("%s", exc)


def check_consistency(app, env):
    if src.ERRATA_DOCNAME not in env.found_docs:  # a project without the errata page (the tests' own)
        return
    entries = _entries(env)
    seen = getattr(env, "tus_errata_seen", set())
    missing = [eid for eid in entries if eid not in seen]
    if missing:
        logger.warning("errata in docs/errata.md but not rendered by Sphinx: %s", ", ".join(missing))
    # An ID named in plain text ("see KO-29") must exist too, though only the role shows a verdict.
    for docname in sorted(env.found_docs):
        path = src.ROOT / f"{docname}.md"
        if not path.is_file():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in src.MENTION.finditer(src.ROLE.sub("", line)):  # roles report their own errors
                if m.group(0) not in entries:
                    msg = "unknown erratum %s (not defined in docs/errata.md)"
                    logger.warning(msg, m.group(0), location=(docname, n))


def purge_doc(app, env, docname):
    if docname == src.ERRATA_DOCNAME:
        env.tus_errata_seen = set()


def setup(app):
    app.add_node(erratum_ref)
    app.add_role("erratum", erratum_role)
    app.add_directive("erratum", ErratumDirective)
    app.add_directive("errata-summary", ErrataSummaryDirective)
    app.add_css_file("errata.css")
    app.connect("builder-inited", load_errata)
    app.connect("env-purge-doc", purge_doc)
    app.connect("env-check-consistency", check_consistency)
    app.connect("doctree-resolved", resolve_references)
    return {"version": "1", "parallel_read_safe": False, "env_version": 1}
