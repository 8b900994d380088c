"""Counts the pages state about the spec ("15 clauses, LOADSD-1 to LOADSD-10, ...") agree with the clauses they
list: a hand-written count drifts when a clause is added (issue 31). Each sentence that says "N clauses" and names
clauses (IDs, "A to B" ranges of one prefix) must name exactly N existing clauses; a sentence that names none must
say "of this page", and the page must have N clauses besides its compiled-only ones."""

from __future__ import annotations

import re

import pytest

from conformance.harness import registry as reg

ROOT = reg.ROOT
# The spec pages, the README and the site's own pages; the changelog tells what each change did at the time.
PAGES = [
    *sorted((ROOT / "spec").glob("*.md")),
    ROOT / "README.md",
    *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "changelog.md"),
]
COUNT = re.compile(r"\b(\d+) clauses\b")
ID = reg.CLAUSE_ID_PATTERN
# "FUNC-1 to FUNC-6", "{clause}`SET-1` to {clause}`SET-11`", or one ID
NAMED = re.compile(rf"(?:\{{clause\}}`)?({ID})`?(?: to (?:\{{clause\}}`)?({ID})`?)?")


def sentences(text: str):
    """(line, sentence) of a page's prose, a sentence ending at ". ", "; " or a blank line."""
    line = 1
    for block in re.split(r"(\n\s*\n)", text):
        for sentence in re.split(r"(?<=\.)\s+(?=[A-Z{(])|(?<=;)\s+", block):
            yield line, " ".join(sentence.split())
        line += block.count("\n")


def named(sentence: str, clauses: dict) -> set[str]:
    """The clauses a sentence names: IDs, and "A to B" ranges expanded over the registry's numbers of that prefix."""
    found = set()
    for first, last in NAMED.findall(sentence):
        if not last:
            found.add(first)
            continue
        prefix, lo, hi = first.rsplit("-", 1)[0], int(first.rsplit("-", 1)[1]), int(last.rsplit("-", 1)[1])
        found.update(c for c in clauses if c.rsplit("-", 1)[0] == prefix and lo <= int(c.rsplit("-", 1)[1]) <= hi)
    return found


def problems(path) -> list[str]:
    clauses = reg.default().clauses
    page = path.stem
    out = []
    for line, sentence in sentences(path.read_text()):
        for match in COUNT.finditer(sentence):
            count = int(match[1])
            ids = named(sentence, clauses)
            where = f"{path.relative_to(ROOT)}:{line}"
            if ids:
                if len(ids) != count:
                    out.append(f"{where}: says {count} clauses and names {len(ids)}: {sentence[:160]}")
            elif "of this page" in sentence:  # its clauses about eager code (the compiled siblings come with them)
                on_page = sum(1 for c in clauses.values() if c.page == page and not (c.withdrawn or c.compiled_only))
                if on_page != count:
                    out.append(f"{where}: says {count} clauses of this page, which has {on_page} (compiled-only aside)")
            else:
                out.append(f"{where}: says {count} clauses without naming them: generate the count or name them")
    return out


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_stated_counts_name_their_clauses(path):
    assert not (found := problems(path)), "\n".join(found)
