"""Sphinx extension: the ``population`` directive, the member list of a population a clause ranges over.

``:::{population} VIEW_OPS`` renders the name, description and member ids of
``conformance.harness.populations.VIEW_OPS``: the same members the clause's tests are
parametrized over. An unknown name is an error. (The populations module imports without
torch, as the docs build has none.)
"""

from __future__ import annotations

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from conformance.harness import populations


class PopulationDirective(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        name = self.arguments[0]
        population = populations.ALL.get(name)
        if population is None:
            raise self.error(f"unknown population {name!r} (not in conformance/harness/populations.py)")
        box = nodes.container(classes=["population"], ids=[f"population-{name.lower()}"])
        if hasattr(population, "page_lines"):  # drawn from torch (op_db): its recorded members per release
            self.env.note_dependency(str(population.data_file))
            text = population.page_lines()
        else:
            ids = ", ".join(f"`{mid}`" for mid in population.ids())
            text = [
                f"**Population `{name}`** ({len(population.members)} members): {population.description}",
                "",
                ids,
            ]
        self.state.nested_parse(StringList(text, source=self.get_source_info()[0]), self.content_offset, box)
        return [box]


def setup(app):
    app.add_directive("population", PopulationDirective)
    return {"version": "1", "parallel_read_safe": True}
