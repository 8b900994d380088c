"""Sphinx extension: the built site publishes the spec as data, spec.json and its JSON Schema, at its root
(conformance/harness/spec_data.py), and the ``spec-data`` directive links them."""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from conformance.harness import spec_data


class SpecDataDirective(SphinxDirective):
    """A paragraph linking spec.json and its schema, relative to the page it is on."""

    def run(self):
        root = "../" * self.env.docname.count("/")
        para = nodes.paragraph("", "The whole specification as data, with the recorded outcomes: ")
        para += nodes.reference("", "spec.json", refuri=f"{root}spec.json")
        para += nodes.Text(" (its JSON Schema: ")
        para += nodes.reference("", spec_data.SCHEMA.name, refuri=f"{root}{spec_data.SCHEMA.name}")
        para += nodes.Text(").")
        return [para]


def publish(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        spec_data.write(app.outdir)


def setup(app):
    app.add_directive("spec-data", SpecDataDirective)
    app.connect("build-finished", publish)
    return {"version": "1", "parallel_read_safe": True}
