"""Sphinx extension: the bad-input table of docs/usage.md, generated from tests/bad_input/ (one row per test)."""

from __future__ import annotations

from clauses import table
from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from tests.bad_input import all_cases


class BadInputTableDirective(SphinxDirective):
    def run(self):
        rows = [
            [case.what, nodes.literal(case.shown, case.shown), nodes.literal(case.says, case.says), str(case.exit)]
            for case in all_cases()
        ]
        header = ["What you do", "Command", "What you see (one line)", "Exit"]
        return [table(["bad-input"], (24, 34, 36, 6), header, rows)]


def setup(app):
    app.add_directive("bad-input-table", BadInputTableDirective)
    return {"version": "1", "parallel_read_safe": True}
