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

from conformance.harness import kinds, modes, populations  # noqa: F401 - kinds adds TENSOR_KINDS to populations.ALL


def population_text(name: str, diverging: str | None = None) -> list[str]:
    """The directive's MyST lines for population ``name`` (or its members that clause ``diverging`` covers); a
    ValueError says what is wrong."""
    population = populations.ALL.get(name)
    if population is None:
        raise ValueError(f"unknown population {name!r} (not in conformance/harness/populations.py)")
    if diverging:
        members = [m for d in modes.MEMBER_DIVERGENCES if d.clause == diverging for m in d.members]
        if not members:
            raise ValueError(f"no member of {name} diverges by {diverging} (conformance/harness/modes.py)")
        return [
            f"**{len(members)} members of `{name}`** whose compiled update {{clause}}`{diverging}` covers "
            "(`conformance/harness/modes.py`): " + ", ".join(f"`{m}`" for m in members)
        ]
    if hasattr(population, "page_lines"):  # drawn from torch (op_db): its recorded members per release, folded
        head, *members = population.page_lines()
        return [head, "", "::::{dropdown} Its members on each recorded release, and the sample", *members, "::::"]
    ids = ", ".join(f"`{mid}`" for mid in population.ids())
    # The description stays in view; the members fold (a long list would push the clauses screens down the page).
    head = f"**Population `{name}`** ({len(population.members)} members): {population.description}"
    return [head, "", f"::::{{dropdown}} The {len(population.members)} members of `{name}`", ids, "::::"]


class PopulationDirective(SphinxDirective):
    required_arguments = 1
    has_content = False
    option_spec = {"diverging": directives.unchanged_required}

    def run(self):
        name, clause = self.arguments[0], self.options.get("diverging")
        try:
            text = population_text(name, clause)
        except ValueError as e:
            raise self.error(str(e)) from None
        if hasattr(populations.ALL[name], "data_file"):  # rebuild the page when the recorded members change
            self.env.note_dependency(str(populations.ALL[name].data_file))
        ids = [f"population-{name.lower()}" + (f"-{clause.lower()}" if clause else "")]
        box = nodes.container(classes=["population"], ids=ids)
        self.state.nested_parse(StringList(text, source=self.get_source_info()[0]), self.content_offset, box)
        return [box]


def setup(app):
    app.add_directive("population", PopulationDirective)
    return {"version": "1", "parallel_read_safe": True}
