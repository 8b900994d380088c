"""Sphinx extension: the bad-input table of docs/usage.md, generated from tests/bad_input/ (one row per test)."""

from __future__ import annotations

from clauses import folded, table
from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from tests.bad_input import all_cases, bench, cli, release_check, results, run, spec

# Each module of tests/bad_input/ and what it is about: the line a reader opens (unfolded, the table was 17 screens).
GROUPS = (
    (run, "a suite run (python -m pytest conformance, nox -s conformance)"),
    (spec, "a malformed spec page"),
    (results, "the results checker (python -m conformance.harness.results)"),
    (release_check, "the release check"),
    (cli, "the torch-update-spec command"),
    (bench, "the benchmark (benchmarks/bench.py)"),
)
HEADER = ["What you do", "Command", "What you see (one line)", "Exit"]


class BadInputTableDirective(SphinxDirective):
    """One table per module of tests/bad_input/, each folded under a line naming what it is about and its count."""

    def run(self):
        if sum(len(module.CASES) for module, _ in GROUPS) != len(all_cases()):
            raise self.error("a module of tests/bad_input/ is missing from GROUPS in docs/_ext/bad_input_table.py")
        out = []
        for module, about in GROUPS:
            rows = [
                [case.what, nodes.literal(case.shown, case.shown), nodes.literal(case.says, case.says), str(case.exit)]
                for case in module.CASES
            ]
            out += folded(
                f"Bad input of {about}: {len(rows)} cases", [table(["bad-input"], (24, 34, 36, 6), HEADER, rows)]
            )
        return out


def setup(app):
    app.add_directive("bad-input-table", BadInputTableDirective)
    return {"version": "1", "parallel_read_safe": True}
