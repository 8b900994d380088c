"""Sphinx extension: the lookup table at the top of docs/errata.md, generated from the entries.

For a reader with one of the two posts open: per post, how many claims got
each verdict, then one row per entry in the order of the post: the line of
the post to look for (conformance/harness/errata.py, lookup_lines), the entry's ID linking to
its anchor, its verdict badge, and its fix (the ``:fix:`` option; a Korean
entry gives the fix in Korean too, under its verdict). Nothing in it is written
by hand.
"""

from __future__ import annotations

from clauses import table, table_row
from docutils import nodes
from errata import entries_of, entry_link, note_sources, verdict_badge
from sphinx.util.docutils import SphinxDirective

from conformance.harness import errata as src


class ErrataLookupDirective(SphinxDirective):
    """``:::{errata-lookup}``: the counts per verdict and the lookup table, per post."""

    def run(self):
        entries = entries_of(self.env)
        note_sources(self.env)
        lines = src.lookup_lines(entries)
        out = []
        for source in src.SOURCES.values():
            mine = [e for e in entries.values() if e.source == source]
            out.append(self._counts(source, mine))
            rows = [self._row(e, *lines[e.id]) for e in mine]
            out.append(table(["errata-lookup"], (40, 8, 12, 40), ["In the post", "Entry", "Verdict", "Fix"], rows))
        return out

    def _counts(self, source: src.Source, mine: list[src.Entry]) -> nodes.paragraph:
        para = nodes.paragraph(classes=["errata-counts"])
        para += nodes.strong(source.name[0].upper() + source.name[1:], source.name[0].upper() + source.name[1:])
        para += nodes.Text(f": {len(mine)} claims: ")
        for i, verdict in enumerate(src.VERDICTS):
            para += nodes.Text(f"{', ' if i else ''}{sum(e.verdict == verdict for e in mine)}\u00a0")
            para += verdict_badge(verdict)
        para += nodes.Text(".")
        return para

    def _row(self, entry: src.Entry, line: str, is_code: bool) -> nodes.row:
        looked_for = nodes.literal(line, line) if is_code else nodes.Text(line)
        fix, messages = self.state.inline_text(entry.fix_short, self.lineno)
        cells = [looked_for, entry_link(entry, ""), verdict_badge(entry.verdict), nodes.inline("", "", *fix, *messages)]
        return table_row(cells)


def setup(app):
    app.setup_extension("errata")
    app.add_directive("errata-lookup", ErrataLookupDirective)
    return {"version": "1", "parallel_read_safe": False}
