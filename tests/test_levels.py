"""Levels separate what torch promises from what it does today (issue 28, item 4).

A clause at a contract level (MUST, SHOULD, MAY) never pins an implementation detail: the class name of a
``grad_fn`` node, or the size of a ``_version`` increase (VERSION-40 observes it, and the docs of
``torch.autograd.graph.increment_version`` allow more than one increase per update). Such a clause is OBSERVED and
its ``:detail:`` names each detail it pins. These checks read the spec pages only (no torch).
"""

import re

import pytest

from conformance.harness import diff
from conformance.harness import registry as reg

DETAIL_PATTERNS = {
    "node-name": re.compile(r"\b[A-Z]\w*Backward\w*\b|\bCopySlices\b"),
    "version-count": re.compile(
        r"_version`?(?:[^.;:`]|`[^`]*`){0,60}?\b(?:by|to|is) (?:[1-9]|one|two)\b"
        r"|\b(?:increases|grows?|goes up|bumps?)(?: it)? by (?:[1-9]|one|two)\b"
        r"|_version`? (?:[1-9]|one|two) higher\b"
    ),
}


def _pinned(clause) -> list[str]:
    text = " ".join(clause.text.split())
    return [detail for detail, pattern in DETAIL_PATTERNS.items() if pattern.search(text)]


CLAUSES = [c for c in reg.default().clauses.values() if not c.withdrawn and c.level != "UNSPECIFIED"]


@pytest.mark.parametrize("clause", CLAUSES, ids=lambda c: c.id)
def test_a_pinned_detail_is_an_observation(clause):
    pinned = _pinned(clause)
    where = f"{clause.id} ({clause.page}.md:{clause.line})"
    if clause.level == "OBSERVED":
        assert set(pinned) <= set(clause.details), f"{where} pins {pinned}; its :detail: names {list(clause.details)}"
    else:
        assert not pinned, f"{where} is {clause.level} but pins {', '.join(pinned)}: make it OBSERVED (:detail:)"


def test_observed_is_reported_as_an_observation():
    assert "OBSERVED" not in diff.CONTRACT_LEVELS and "MUST" in diff.CONTRACT_LEVELS
    assert set(reg.LEVELS) == set(reg.LEVEL_MEANING) and {"MUST", "OBSERVED", "UNSPECIFIED"} <= set(reg.LEVELS)


def test_version_count_lives_at_one_observed_clause():
    # VERSION-2 promises the increase, VERSION-40 observes its size in eager mode, VERSION-100 records it compiled.
    clauses = reg.default().clauses
    assert clauses["VERSION-2"].level == "MUST" and not _pinned(clauses["VERSION-2"])
    assert (clauses["VERSION-40"].level, clauses["VERSION-40"].details) == ("OBSERVED", ("version-count",))
    assert clauses["VERSION-100"].level == "UNSPECIFIED"


def test_every_must_clause_says_why_it_is_contract():
    """A MUST clause carries :evidence: (why torch treats it as contract: a torch doc, a test of torch's, a
    maintainer's word, a deliberate check). Where none was found (2026-12-06, issue 28) the clause became OBSERVED,
    with the detail that says why (fixed-bug, message, undocumented, compiled)."""
    clauses = reg.default().clauses.values()
    without = sorted(c.id for c in clauses if c.level == "MUST" and not c.withdrawn and not c.evidence)
    assert not without, (
        f"MUST clauses without :evidence: {', '.join(without)}: say what makes each contract (a torch doc, a test of "
        "torch's, an issue, a deliberate check), or give it another level"
    )
