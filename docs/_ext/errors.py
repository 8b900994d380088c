"""Sphinx extension: the landing page's lookup by error message, and the same messages on the pages that explain them.

Readers arrive with a message pasted from a traceback. On the landing page, an ``error-entry`` shows the message,
the situation that raises it, the page that explains it, the fix, and the clauses whose tests prove torch raises it
(tests/test_site.py checks that each names the message). The page named first under "Read" lists the message under
"Errors this page explains". Each entry is a search object: a pasted message, or a whole traceback line holding it,
finds the entry with its fix first (docs/_static/scorer.js ranks these objects above pages that merely contain its
words, and reads a pasted line as the message it holds).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from clauses import clause_role, ref_link
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

OBJECT_TYPE = "pasted-error"  # its own directive and role go unused: the pages' lists are made below
LANDING = Path(__file__).resolve().parents[1] / "index.md"
ENTRY = re.compile(
    r"^:::\{error-entry\} (?P<message>.+)\n(?::(?!read:).*\n)*:read: [^`]*\{doc\}`/(?P<page>[\w/]+)`", re.M
)


@functools.cache
def owners() -> dict[str, list[str]]:
    """{docname: [messages]}: each landing entry's message under the first page its "Read" names."""
    found: dict[str, list[str]] = {}
    for m in ENTRY.finditer(LANDING.read_text(encoding="utf-8")):
        found.setdefault(m["page"], []).append(m["message"])
    return found


def anchor(message: str) -> str:
    return nodes.make_id(f"error-{message}")[:80].rstrip("-")  # as docutils would make the id of the cut name


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
        missing = [option for option in self.option_spec if option not in self.options]
        if missing:
            raise self.error(f"error entry {message!r} needs :{': :'.join(missing)}:")
        if not any(message in messages for messages in owners().values()):
            raise self.error(f"error entry {message!r}: its :read: must name a page with {{doc}}`/spec/...` first")
        entry = nodes.container(classes=["error-entry"], names=[anchor(message)])  # a label: pages link here
        self.state.document.note_explicit_target(entry)
        # The search object of the message is this entry, which holds the fix: a pasted message lands here first.
        # (The search index escapes a straight quote twice, "&amp;#x27;" in results: a typographic one reads the same.)
        std = self.env.get_domain("std")
        std.note_object(OBJECT_TYPE, message.replace("'", "\u2019"), entry["ids"][0], location=entry)
        entry += nodes.paragraph("", "", nodes.literal(message, message), classes=["error-message"])
        for label, option in (("When", "when"), ("Read", "read"), ("Fix", "fix")):
            text, problems = self.parse_inline(self.options[option], lineno=self.lineno)
            entry += nodes.paragraph("", "", nodes.strong(label, label), nodes.Text(": "), *text, *problems)
        proof = nodes.paragraph("", "Proved by ", classes=["clause-status"])
        for i, cid in enumerate(self.options["clauses"].split()):
            proof += [nodes.Text(", ")] if i else []
            proof += clause_role("clause", cid, cid, self.lineno, self.state.inliner)[0]
        entry += proof
        return [entry]


def add_errors_here(app, doctree) -> None:
    """On a page that explains some of the landing page's errors: list them under its "Do this instead" box (or its
    first paragraphs), each a search object, each linked to its entry with the fix."""
    messages = owners().get(app.env.docname)
    if not messages:
        return
    box = nodes.container(classes=["errors-here"])
    box += nodes.paragraph("", "", nodes.strong("Errors this page explains", "Errors this page explains"))
    items = nodes.bullet_list()
    for message in messages:
        item = nodes.paragraph("", "", ids=[anchor(message)])
        item += nodes.literal(message, message)
        fix = ref_link(anchor(message), nodes.inline("", "when, and the fix"))
        item += [nodes.Text(" ("), fix, nodes.Text(")")]
        doctree.note_explicit_target(item)
        items += nodes.list_item("", item)
    box += items
    page = next(doctree.findall(nodes.section))
    after = next((n for n in page.findall(nodes.admonition) if "do-instead" in n["classes"]), None)
    page.insert(page.index(after) + 1 if after is not None and after.parent is page else 1, box)


def setup(app):
    app.add_object_type(OBJECT_TYPE, OBJECT_TYPE, objname="error message")
    app.add_directive("error-entry", ErrorDirective)
    app.connect("doctree-read", add_errors_here)
    return {"version": "1", "parallel_read_safe": False, "env_version": 2}  # 2: the objects moved to the entries
