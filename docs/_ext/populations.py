"""Sphinx extension: the ``population`` directive, the member list of a population a clause ranges over.

``:::{population} VIEW_OPS`` renders the name, description and member ids of
``conformance.harness.populations.VIEW_OPS``: the same members the clause's tests are
parametrized over. An unknown name is an error. With ``:diverging: INPLACE-98`` it renders
instead the members that ``conformance.harness.modes.MEMBER_DIVERGENCES`` hands to that
clause (the list its tests use, so the page does not repeat it by hand). (Both modules
import without torch, as the docs build has none.)
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from conformance.harness import modes, populations


class PopulationDirective(SphinxDirective):
    required_arguments = 1
    has_content = False
    option_spec = {"diverging": directives.unchanged_required}

    def run(self):
        name = self.arguments[0]
        population = populations.ALL.get(name)
        if population is None:
            raise self.error(f"unknown population {name!r} (not in conformance/harness/populations.py)")
        box = nodes.container(classes=["population"], ids=[f"population-{name.lower()}"])
        if clause := self.options.get("diverging"):
            members = [m for d in modes.MEMBER_DIVERGENCES if d.clause == clause for m in d.members]
            if not members:
                raise self.error(f"no member of {name} diverges by {clause} (conformance/harness/modes.py)")
            box["ids"] = [f"population-{name.lower()}-{clause.lower()}"]
            text = [
                f"**{len(members)} members of `{name}`** whose compiled update {{clause}}`{clause}` covers "
                "(`conformance/harness/modes.py`): " + ", ".join(f"`{m}`" for m in members)
            ]
        elif hasattr(population, "page_lines"):  # drawn from torch (op_db): its recorded members per release
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
