"""Sphinx extension: one "What changed in torch X.Y" page per release boundary, from the clause ranges.

The boundaries are the ``since`` and ``until`` values of the clauses (conformance/harness/releases.py).
When the builder starts, a small stub per boundary and an index are written into docs/releases/
(git-ignored, the way autosummary writes its pages): a title and a directive, which renders the clauses
at build time. No page is written by hand, so a new range in a spec page is a new page on the next build.
"""

from __future__ import annotations

from pathlib import Path

from clauses import _clause_link, doc_link, level_badge, table
from docutils import nodes
from docutils.statemachine import StringList
from packaging.version import Version
from sphinx.util.docutils import SphinxDirective

from conformance.harness import registry as reg
from conformance.harness import releases

INDEX_TITLE = "torch release notes for updates"
RELEASE_OBJECT = "torch-release"


def page_title(version: Version) -> str:
    return f"What changed in torch {version}"


def stubs(versions: list[Version]) -> dict[str, str]:
    """{file name: MyST text} of the generated pages: one per boundary, and the index (newest first)."""
    pages = {f"torch-{v}.md": f"# {page_title(v)}\n\n```{{release-changes}} {v}\n```\n" for v in versions}
    toctree = "\n".join(f"torch-{v}" for v in reversed(versions))
    timeline = "```{diagram} release-timeline\nWhere the clause ranges start or stop, per spec page.\n```\n\n"
    pages["index.md"] = (
        f"# {INDEX_TITLE}\n\n{timeline}```{{release-index}}\n```\n\n```{{toctree}}\n:hidden:\n\n{toctree}\n```\n"
    )
    return pages


def write_stubs(folder: Path, versions: list[Version]) -> None:
    """Write the stubs: a stale one removed, an unchanged one left alone (else Sphinx would read it again)."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = stubs(versions)
    for path in folder.glob("*.md"):
        if path.name not in wanted:
            path.unlink()
    for name, text in wanted.items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def generate(app):
    write_stubs(Path(app.srcdir) / releases.FOLDER, releases.boundaries())


class ReleaseChangesDirective(SphinxDirective):
    """The clauses that stop and start holding at one release, side by side, grouped by spec page."""

    required_arguments = 1

    def run(self):
        version = Version(self.arguments[0])
        stops, starts = releases.stopping(version), releases.starting(version)
        intro = nodes.paragraph(
            "",
            f"The clauses whose version range ends or begins at torch {version}: {len(stops)} hold up to the "
            f"release before it and no longer on {version} (until {version}), {len(starts)} hold from {version} on "
            f"(since {version}). For each page of the spec, what held before is shown next to what holds from "
            f"{version}.",
        )
        # A search object: "2.9" or "torch 2.9" in the search box finds this page first (docs/_static/scorer.js)
        target = nodes.target("", "", ids=[f"torch-{version}"])
        self.env.get_domain("std").note_object(RELEASE_OBJECT, str(version), target["ids"][0], location=intro)
        out = [target, intro]
        for page in sorted({c.page for c in stops + starts}):
            heading = nodes.rubric("", "", doc_link(f"spec/{page}"), classes=["release-page"])
            pair = nodes.container(classes=["release-pair"])
            pair += self.column(f"Before {version}", [c for c in stops if c.page == page], "stops")
            pair += self.column(f"From {version}", [c for c in starts if c.page == page], "starts")
            out += [heading, pair]
        return out

    def column(self, title: str, clauses: list[reg.Clause], kind: str) -> nodes.container:
        box = nodes.container(classes=["release-column", f"release-{kind}"])
        box += nodes.paragraph("", "", nodes.strong(title, title), classes=["release-column-title"])
        if not clauses:
            box += nodes.paragraph("", "No clause of this page " + ("stops." if kind == "stops" else "starts."))
        for clause in clauses:
            box += self.statement(clause)
        return box

    def statement(self, clause: reg.Clause) -> nodes.container:
        """A clause as its page shows it: ID (linked), level, range, the statement parsed as MyST, and its citations."""
        box = nodes.container(classes=["clause", f"clause-{clause.level.lower()}"])
        head = nodes.paragraph(classes=["clause-head"])
        head += _clause_link(clause.id)
        head += level_badge(clause)
        head += nodes.inline("", f" · {clause.range_text()}", classes=["clause-range"])
        box += head
        self.state.nested_parse(StringList(clause.text.splitlines(), source=f"spec/{clause.page}.md"), 0, box)
        if cited := releases.citations(clause.text):
            para = nodes.paragraph("", "Cited: ", classes=["clause-status"])
            for i, (number, url) in enumerate(cited):
                para += nodes.Text(", " if i else "")
                para += nodes.reference("", f"pytorch/pytorch#{number}", refuri=url)
            box += para
        return box


class ReleaseIndexDirective(SphinxDirective):
    """A table of every boundary: how many clauses stop and start there, and on which pages."""

    def run(self):
        intro = nodes.paragraph(
            "",
            "Every torch release at which a clause of this spec starts or stops holding (the clauses' "
            "since and until), newest first, with the page that shows what held before and what holds from then.",
        )
        rows = []
        for version in reversed(releases.boundaries()):
            stops, starts = releases.stopping(version), releases.starting(version)
            link = doc_link(releases.docname(version), nodes.inline("", f"torch {version}"))
            pages = ", ".join(sorted({c.page for c in stops + starts}))
            rows.append([link, str(len(stops)), str(len(starts)), pages])
        return [intro, table(["release-index"], (14, 10, 10, 66), ["release", "stop", "start", "spec pages"], rows)]


def always_read(app, env, added, changed, removed):
    """The pages are made of the spec pages' clauses, which may have changed: read them on every build."""
    return [doc for doc in env.found_docs if doc.startswith(releases.FOLDER + "/")]


def setup(app):
    app.add_object_type(RELEASE_OBJECT, RELEASE_OBJECT, objname="torch release")
    app.connect("builder-inited", generate)
    app.connect("env-get-outdated", always_read)
    app.add_directive("release-changes", ReleaseChangesDirective)
    app.add_directive("release-index", ReleaseIndexDirective)
    return {"version": "1", "parallel_read_safe": False}
