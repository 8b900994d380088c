"""Sphinx extension: the ``error-entry`` directive, one entry of the landing page's lookup by error message.

Readers arrive with a message pasted from a traceback. Each entry shows the message, the situation that raises it,
the page that explains it, the fix, and the clauses whose tests prove torch raises it (tests/test_site.py checks
that each names the message); it makes the message a search object: pasting it into the search box
lists this entry first (docs/_static/scorer.js ranks these objects above pages).
"""

from __future__ import annotations

from clauses import clause_role
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

OBJECT_TYPE = "pasted-error"  # its own directive and role, unused: entries are made by error-entry


class ErrorDirective(SphinxDirective):
    """An error message readers paste: when torch raises it, where the spec explains it, and what to write."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {
        "when": directives.unchanged_required,
        "read": directives.unchanged_required,
        "fix": directives.unchanged_required,
        "clauses": directives.unchanged_required,
    }

    def run(self):
        message = self.arguments[0]
        missing = [name for name in self.option_spec if name not in self.options]
        if missing:
            raise self.error(f"error entry {message!r} needs :{': :'.join(missing)}:")
        entry = nodes.container(classes=["error-entry"])
        node_id = nodes.make_id(f"error-{message}")[:80]
        entry["ids"].append(node_id)
        self.state.document.note_explicit_target(entry)
        # The search index escapes a straight quote twice ("&amp;#x27;" in results): a typographic one reads the same
        name = message.replace("'", "\u2019")
        self.env.get_domain("std").note_object(OBJECT_TYPE, name, node_id, location=self.get_location())
        entry += nodes.paragraph("", "", nodes.literal(message, message), classes=["error-message"])
        for label, name in (("When", "when"), ("Read", "read"), ("Fix", "fix")):
            text, messages = self.parse_inline(self.options[name], lineno=self.lineno)
            entry += nodes.paragraph("", "", nodes.strong(label, label), nodes.Text(": "), *text, *messages)
        proof = nodes.paragraph("", "Proved by ", classes=["clause-status"])
        for i, cid in enumerate(self.options["clauses"].split()):
            proof += [nodes.Text(", ")] if i else []
            proof += clause_role("clause", cid, cid, self.lineno, self.state.inliner)[0]
        entry += proof
        return [entry]


def setup(app):
    app.add_object_type(OBJECT_TYPE, OBJECT_TYPE, objname="error message")
    app.add_directive("error-entry", ErrorDirective)
    return {"version": "1", "parallel_read_safe": False}
