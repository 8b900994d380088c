"""Sphinx extension: the ``erratum`` directive and role, links on every erratum ID, and the errata summary.

The errata are read by conformance/harness/errata.py from docs/errata.md, the single source
of every verdict; this extension renders them there and shows them elsewhere:

- ``:::{erratum} EN-10 <title>`` (docs/errata.md only) renders one entry as a
  section with the stable anchor ``#en-10``: its title, the verdict as a
  coloured badge (from ``:verdict:``) with the entry's lead sentence, on a
  Korean entry the verdict and the fix in Korean, and the fix (``:fix:``); then,
  folded under one line (closed): the post it is from, the quote, the
  explanation and the correct way (with its corrected snippet), the proof and
  the pages that refer to the entry;
- ``{erratum}`EN-10``` (any page) renders the ID and the verdict badge of the
  entry, linked to its anchor; an unknown ID is an error (and fails ``-W``);
- every ID written in plain text ("see KO-29") is made a link to its entry;
- ``:::{errata-summary}`` lists the entries split off others, the implied
  claims, and the entries no spec page refers to.

The lookup table at the top of the page is errata_lookup.py.
"""

from __future__ import annotations

from clauses import example_caption, folded
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from conformance.harness import errata as src

logger = logging.getLogger(__name__)

# The bullets of an entry that come last in its fold: the explanation and its proof.
FOLDED = ("- *What torch does*:", "- *Proof*:")
# An entry shows its title, verdict and fix, one after another down the page; the rest folds under this line (closed:
# a link to the entry lands on its title, which is not in the fold).
FOLD_LINE = "The quote, the correct way, what torch does and the proof"


class erratum_ref(nodes.inline):  # noqa: N801 (docutils node classes are lower case)
    """An ``{erratum}`` reference, replaced by a link once the output document is known."""


# The entries of docs/errata.md, read again when each build starts (builder-inited).
_ENTRIES: dict[str, src.Entry] = {}


def entries_of(env) -> dict[str, src.Entry]:
    return _ENTRIES


def _verdict_class(verdict: str) -> str:
    return "verdict-" + verdict.replace(" ", "-")


def verdict_badge(verdict: str, text: str | None = None) -> nodes.inline:
    """The verdict as a badge: sphinx-design's badge shape, our colours (errata.css); the word is always in it."""
    text = text or verdict
    return nodes.inline(text, text, classes=["sd-badge", "verdict-badge", _verdict_class(verdict)])


def entry_link(entry: src.Entry, refuri: str, text: str | None = None) -> nodes.reference:
    """A link to an entry's anchor whose tooltip gives its title and verdict."""
    text = text or entry.id
    ref = nodes.reference(
        "",
        "",
        internal=True,
        refuri=f"{refuri}#{entry.anchor}",
        reftitle=f"{entry.id}. {_plain(entry.title)}: {entry.verdict}",
    )
    ref += nodes.inline(text, text, classes=["erratum-id"])
    return ref


def _plain(text: str) -> str:
    return text.replace("`", "")


def erratum_role(name, rawtext, text, lineno, inliner, options=None, content=()):
    env = inliner.document.settings.env
    env.note_dependency(str(src.ERRATA_PAGE))  # a changed verdict re-reads the pages that show it
    eid = text.strip()
    if eid not in entries_of(env):
        msg = inliner.reporter.error(f"unknown erratum {eid!r} (not defined in docs/errata.md)", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [erratum_ref(rawtext, "", eid=eid)], []


def _uri(app, docname: str) -> str:
    return "" if docname == src.ERRATA_DOCNAME else app.builder.get_relative_uri(docname, src.ERRATA_DOCNAME)


def verdict_role(name, rawtext, text, lineno, inliner, options=None, content=()):
    """``{verdict}`wrong```: the badge of a verdict, for prose that explains the verdicts."""
    if text not in src.VERDICTS:
        msg = inliner.reporter.error(f"unknown verdict {text!r}; one of {', '.join(src.VERDICTS)}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [verdict_badge(text)], []


def resolve_references(app, doctree, docname):
    entries = entries_of(app.env)
    for node in list(doctree.findall(erratum_ref)):
        entry = entries.get(node["eid"])
        if entry is None:  # reported when read
            node.replace_self(nodes.Text(node["eid"]))
            continue
        ref = entry_link(entry, _uri(app, docname))
        ref["classes"] += ["erratum-ref", _verdict_class(entry.verdict)]
        ref += nodes.Text(" ")
        ref += verdict_badge(entry.verdict)
        node.replace_self(ref)
    link_mentions(app, doctree, docname)


# Text in these is not made a link: it is one already, code, or a heading (whose entry is the section itself).
_NO_LINKS = (nodes.reference, nodes.literal, nodes.literal_block, nodes.title, nodes.raw, nodes.comment)


def link_mentions(app, doctree, docname):
    """Every erratum ID written in plain text ("see KO-29", "EN-2 to EN-8") becomes a link to its entry."""
    entries = entries_of(app.env)
    if not entries:
        return
    for text in list(doctree.findall(nodes.Text)):
        if not src.MENTION.search(text) or any(isinstance(a, _NO_LINKS) for a in _ancestors(text)):
            continue
        out, at = [], 0
        for m in src.MENTION.finditer(text):
            if m.group(0) in entries:
                out += [nodes.Text(text[at : m.start()]), entry_link(entries[m.group(0)], _uri(app, docname))]
                at = m.end()
        if out:
            text.parent.replace(text, [*out, nodes.Text(text[at:])])


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


def note_sources(env):
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
        "fix": directives.unchanged_required,
        "fix-ko": directives.unchanged_required,
        "split-from": directives.unchanged_required,
        "implied": directives.flag,
        "shows": directives.unchanged_required,  # read by conformance/harness/errata.py
    }

    def run(self):
        if self.env.docname != src.ERRATA_DOCNAME:
            raise self.error(f"errata are defined in {src.ERRATA_DOCNAME}.md only; elsewhere, refer with {{erratum}}")
        eid = self.arguments[0].split()[0]
        entry = entries_of(self.env).get(eid)
        if entry is None or entry.verdict != self.options.get("verdict"):
            raise self.error(f"erratum {eid} is not read the same way by conformance/harness/errata.py (format error?)")
        self.env.tus_errata_seen = getattr(self.env, "tus_errata_seen", set()) | {eid}
        note_sources(self.env)

        # The anchor is the ID (#en-10), never a slug of the title, so links survive a retitled entry.
        section = nodes.section(classes=["erratum", _verdict_class(entry.verdict)])
        section["names"].append(entry.anchor)
        self.state.document.note_explicit_target(section)
        title_nodes, messages = self.state.inline_text(f"{entry.id}. {entry.title}", self.lineno)
        section += nodes.title("", "", *title_nodes)
        section += messages

        shown, proof = self._split_folded()
        body = nodes.container()
        self.state.nested_parse(shown, self.content_offset, body)
        children = list(body.children)
        at = next((i for i, n in enumerate(children) if isinstance(n, nodes.block_quote)), None)
        if at is None:
            raise self.error(f"erratum {eid}: the body must start with the quote")
        verdict = [nodes.Text("Verdict: "), verdict_badge(entry.verdict)]
        follow = children[at + 1] if at + 1 < len(children) else None
        if isinstance(follow, nodes.paragraph):  # the entry's lead sentence follows its verdict
            follow["classes"].append("erratum-verdict-line")
            follow[0:0] = [*verdict, nodes.Text(" ")]
        else:
            children.insert(at + 1, nodes.paragraph("", "", *verdict, classes=["erratum-verdict-line"]))
            follow = children[at + 1]
        # Shown: the verdict and the fix (one paragraph), in Korean too on a Korean entry; folded under one line: the
        # rest.
        fix, messages = self.state.inline_text(entry.fix_short, self.lineno)
        follow += [nodes.Text(" "), nodes.inline("", "", nodes.Text("Fix: "), *fix, classes=["erratum-fix"]), *messages]
        shown_nodes = [follow, *([self._korean_line(entry)] if entry.fix_ko else [])]
        rest = [self._meta(entry), *(child for child in children if child is not follow)]
        for node in rest:
            for block in list(node.findall(nodes.literal_block)):
                if "corrected" in block["classes"]:  # run by the suite as an example of the clauses it shows
                    block.parent.insert(block.parent.index(block) + 1, example_caption(entry.shows))
        section += shown_nodes
        section += folded(FOLD_LINE, [*rest, *self._proof(entry, proof)], "fold erratum-proof")
        return [section]

    def _meta(self, entry: src.Entry) -> nodes.paragraph:
        meta = nodes.paragraph(classes=["erratum-meta"])
        meta += nodes.Text(f"In {entry.source.name}")
        if entry.split_from:
            meta += nodes.Text("; split from ")
            meta += erratum_ref("", "", eid=entry.split_from)
        if entry.implied:
            meta += nodes.Text("; a claim the code implies without stating it")
        return meta

    def _korean_line(self, entry: src.Entry) -> nodes.paragraph:
        """The verdict and the fix in one Korean sentence, for the reader of the Korean post."""
        fix, messages = self.state.inline_text(entry.fix_ko, self.lineno)
        para = nodes.paragraph(classes=["erratum-ko", "language-ko"])  # docutils writes lang="ko"
        para += nodes.Text("판정: ")
        para += verdict_badge(entry.verdict, src.VERDICTS_KO[entry.verdict])
        para += nodes.Text(" — ")
        para += fix
        para += messages
        return para

    def _split_folded(self) -> tuple[StringList, StringList]:
        """The content without its *What torch does* and *Proof* bullets, and those two bullets, as written."""
        shown, proof, in_proof = StringList(), StringList(), False
        for line, (source, offset) in zip(self.content, self.content.items, strict=True):
            if line.startswith("- *"):
                in_proof = line.startswith(FOLDED)
            elif line.strip() and not line.startswith("  "):
                in_proof = False
            (proof if in_proof else shown).append(line, source, offset)
        return shown, proof

    def _proof(self, entry: src.Entry, proof: StringList) -> list[nodes.Node]:
        """What torch does and the proof (clauses, tests, spec pages), then the pages that refer to the entry."""
        text = StringList()
        text.extend(proof)
        referring = src.referring_pages().get(entry.id, [])
        if referring:
            links = ", ".join(f"{{doc}}`/{d}`" for d in referring)
            text.append("", "<errata>")
            text.append(f"Referred to from: {links}.", "<errata>")
        holder = nodes.container()
        self.state.nested_parse(text, self.content_offset, holder)
        return list(holder.children)


class ErrataSummaryDirective(SphinxDirective):
    """The entries split off others, the implied claims, and the entries no spec page refers to."""

    def run(self):
        entries = entries_of(self.env)
        note_sources(self.env)
        out = []
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
    _ENTRIES.clear()
    try:
        _ENTRIES.update(src.load())
    except src.ErrataError as exc:
        logger.error("%s", exc)


def check_consistency(app, env):
    if src.ERRATA_DOCNAME not in env.found_docs:  # a project without the errata page (the tests' own)
        return
    entries = entries_of(env)
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
    app.add_role("verdict", verdict_role)
    app.add_directive("erratum", ErratumDirective)
    app.add_directive("errata-summary", ErrataSummaryDirective)
    app.add_css_file("errata.css")
    app.connect("builder-inited", load_errata)
    app.connect("env-purge-doc", purge_doc)
    app.connect("env-check-consistency", check_consistency)
    app.connect("doctree-resolved", resolve_references)
    return {"version": "1", "parallel_read_safe": False, "env_version": 1}
