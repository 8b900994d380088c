"""Sphinx extension: the bad-input table of docs/usage.md, generated from tests/bad_input/ (one row per test)."""

from __future__ import annotations

from clauses import ClauseIndexDirective
from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from tests.bad_input import all_cases


class BadInputTableDirective(SphinxDirective):
    def run(self):
        table = nodes.table(classes=["bad-input"])
        group = nodes.tgroup(cols=4)
        table += group
        for width in (24, 34, 36, 6):
            group += nodes.colspec(colwidth=width)
        head, body = nodes.thead(), nodes.tbody()
        group += head
        group += body
        head += ClauseIndexDirective._row(["What you do", "Command", "What you see (one line)", "Exit"])
        for case in all_cases():
            body += ClauseIndexDirective._row(
                [case.what, nodes.literal(case.shown, case.shown), nodes.literal(case.says, case.says), str(case.exit)]
            )
        return [table]


def setup(app):
    app.add_directive("bad-input-table", BadInputTableDirective)
    return {"version": "1", "parallel_read_safe": True}
