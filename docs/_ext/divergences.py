"""Sphinx extension: the ``divergences`` directive, every place where torch.compile departs from eager.

A divergence is a clause about compiled modes only (``:modes: compile``, ``inductor`` or both: what
compiled code does) beside its eager sibling with ``:modes: eager``. The table is built from the clause
registry, so a new divergence clause appears here without editing this page; the layer column comes from
the recorded results (the observation "diverging layer" of the compiled runs, harness/modes.py).
"""

from __future__ import annotations

from collections import defaultdict

from clauses import _clause_link, _clauses_counted, backends, doc_link, example_link, folded, table
from docutils import nodes
from docutils.statemachine import StringList
from packaging.version import Version
from sphinx.util.docutils import SphinxDirective

from conformance.harness import registry as reg
from conformance.harness import status


def layers(clause_id: str) -> str:
    """'dynamo on 2.1.2–2.8.0; aot_autograd on 2.9.1–2.15.0' from the recorded observations of every device and
    compiled mode of the clause; a layer seen on some devices only names them."""
    clause = reg.default().clauses[clause_id]
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))  # layer -> device -> versions
    devices = set()
    for (version, device), doc in status.recorded().items():
        for mode in set(clause.modes or reg.DEFAULT_MODES) & set(reg.COMPILED_MODES):
            entry = doc["devices"][device][mode][clause_id]
            if entry["outcome"] in ("pass", "fail"):
                devices.add(device)
            if layer := entry["observed"].get("diverging layer"):
                found[layer][device].add(version)
    everything = status.versions()
    told = []
    for layer, by_device in sorted(found.items()):
        versions = sorted(set().union(*by_device.values()), key=Version)
        where = "" if set(by_device) >= devices else f" ({', '.join(sorted(by_device))})"
        told.append(f"{layer} on {status.spans(versions, everything)}{where}")
    return "; ".join(told) or "—"


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    return flat.split(". ")[0].rstrip(".") + "."


class DivergencesDirective(SphinxDirective):
    """One row per clause about compiled modes only: the clause, its releases, backends, layer and statement."""

    def inline(self, text: str) -> nodes.Node:
        """The clause's MyST (code, roles) rendered, not shown raw."""
        parsed = nodes.container()
        self.state.nested_parse(StringList([text], source=self.get_source_info()[0]), self.content_offset, parsed)
        span = nodes.inline()
        span += parsed[0].children  # the one paragraph's inline nodes
        return span

    @staticmethod
    def clause_cell(cid: str, has_example: bool) -> nodes.Node:
        """The clause, and a link to its executed example where it has one."""
        cell = nodes.inline()
        cell += _clause_link(cid)
        if has_example:
            cell += nodes.Text(" · ")
            cell += example_link(cid)
        return cell

    def run(self):
        clauses = [c for c in reg.default().clauses.values() if c.compiled_only and not c.withdrawn]
        if not clauses:
            return [nodes.paragraph("", "No divergence between eager and compiled updates is recorded.")]
        # The first example on the clause's own page is the one linked (clauses.ExampleDirective labels it).
        shown = {cid for e in reg.default().examples for cid in reg.default().of_page(e.page, e.clauses)}
        by_page = defaultdict(list)
        for c in sorted(clauses, key=lambda c: (c.page, int(c.id.rsplit("-", 1)[1]))):
            by_page[c.page].append(c)
        header = ["Clause", "Releases", "Backends", "Layer (recorded)", "Compiled behaviour"]
        out = []
        # One fold per spec page: the page's name and its count on one line each, the table when opened.
        for page, group in by_page.items():
            rows = [
                [
                    self.clause_cell(c.id, c.id in shown),
                    c.range_text(),
                    backends(c.modes),
                    layers(c.id),
                    self.inline(_first_sentence(c.text)),
                ]
                for c in group
            ]
            ids = group[0].id if len(group) == 1 else f"{group[0].id} to {group[-1].id}"
            page_link = nodes.paragraph("", "", nodes.Text("Page: "), doc_link(f"spec/{page}"))
            out += folded(
                f"{page}: {_clauses_counted(len(group))} ({ids})",
                [page_link, table(["divergences"], (12, 14, 12, 16, 46), header, rows)],
                "fold divergences-page",
            )
        return out


def setup(app):
    app.add_directive("divergences", DivergencesDirective)
    return {"version": "1", "parallel_read_safe": True}
