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


# MUST clauses for which no evidence was found that torch treats them as contract (no doc, test, maintainer's word or
# deliberate check; 2026-12-06, issue 28): eager behaviours torch later called a bug and fixed, or never documented.
# Each is a candidate for OBSERVED (a :detail: for "a bug, fixed later" and for "undocumented" does not exist yet; the
# compiled divergences that were here are OBSERVED with :detail: compiled). This list may only shrink.
MUST_WITHOUT_EVIDENCE = frozenset(
    """
    COPY-17 COPY-20
    DATA-13
    FWAD-4
    GRAD-21
    INDEX-4 INDEX-5
    INFER-20 INFER-25 INFER-41
    INPLACE-26 INPLACE-27 INPLACE-82
    NEW-17
    NOGRAD-14
    REQGRAD-14
    VERSION-41 VERSION-44 VERSION-70
    """.split()
)


def test_every_must_clause_says_why_it_is_contract():
    """A MUST clause carries :evidence: (why torch treats it as contract), unless it is one of the older clauses of
    MUST_WITHOUT_EVIDENCE; a clause that leaves MUST or gets evidence leaves that list."""
    clauses = reg.default().clauses.values()
    without = {c.id for c in clauses if c.level == "MUST" and not c.withdrawn and not c.evidence}
    assert not (new := sorted(without - MUST_WITHOUT_EVIDENCE)), (
        f"MUST clauses without :evidence: {', '.join(new)}: say what makes each contract (a torch doc, a test of "
        "torch's, an issue, a deliberate check), or give it another level"
    )
    assert not (done := sorted(MUST_WITHOUT_EVIDENCE - without)), (
        f"take {', '.join(done)} out of MUST_WITHOUT_EVIDENCE (tests/test_levels.py): each has evidence now, or is "
        "no MUST clause"
    )
