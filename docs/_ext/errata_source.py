"""The errata of the source material: one entry per claim, read from docs/errata.md.

``docs/errata.md`` is the single source of every verdict. An entry is a MyST
directive whose argument is the entry's stable ID and its title::

    :::{erratum} EN-10 "This prevents backpropagation from working on the new value"
    :verdict: wrong

    > "This prevents backpropagation from working on the new value."

    As a general statement: ... (optional paragraph, shown after the verdict)

    - *What torch does*: ... {clause}`REBIND-4` ...
    - *Correct way*: ...
    - *Proof*: tests `test_rebinding.py::test_fresh_tensor_does_not_require_grad`, ...
    :::

Options (right below the directive line): ``:verdict:`` (required, one of
``VERDICTS``), ``:split-from:`` (the ID of the entry this one was split from)
and ``:implied:`` (a flag: the source does not state the claim in words, its
code takes it for granted). The body starts with the quote (a block quote) and
holds the three bullets above; the clauses an entry cites are the
``{clause}`` roles of its body, its tests the ``test_<page>.py::test_<name>``
literals, its spec pages the ``{doc}`` links of its *Proof* bullet.

Pages refer to an entry with the ``{erratum}`` role (``{erratum}`EN-10```),
which shows the ID and the verdict given here; no page writes a verdict of its
own. IDs are stable: an ID is never reused or renumbered, and the half of a
claim split off an entry gets the next free number of its source, with
``:split-from:``.

This module is plain Python (no Sphinx, no torch) so that both the Sphinx
extension (docs/_ext/errata.py) and the tests (tests/test_errata.py) read the
errata the same way. Any mistake is an ``ErrataError`` naming
``docs/errata.md:<line>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ERRATA_PAGE = ROOT / "docs" / "errata.md"
ERRATA_DOCNAME = "docs/errata"

VERDICTS = ("correct", "wrong", "misleading", "does not run")
ID = re.compile(r"^(?P<source>EN|KO)-(?P<number>[1-9][0-9]*)$")
OPTIONS = {"verdict", "split-from", "implied"}
PARTS = ("What torch does", "Correct way", "Proof")


@dataclass(frozen=True)
class Source:
    key: str  # the ID prefix
    path: str  # the write-up in the project's seeds
    language: str
    title: str
    title_en: str = ""  # an English translation of a title in another language


SOURCES = {
    "EN": Source(
        "EN",
        "seeds/000",
        "English",
        "Taming the Tensor: Techniques for Updating PyTorch Variables with Backpropagation",
    ),
    "KO": Source(
        "KO",
        "seeds/001",
        "Korean",
        "PyTorch Variable에 새 값을 할당하면서 역전파를 유지하는 방법",
        "How to assign a new value to a PyTorch Variable while keeping backpropagation",
    ),
}

# A role naming an entry; IDs mentioned in plain text are matched by MENTION.
ROLE = re.compile(r"\{erratum\}`(?P<id>[^`]*)`")
MENTION = re.compile(r"\b(?:EN|KO)-[0-9]+\b")
_CLAUSE = re.compile(r"\{clause\}`(?P<id>[^`]+)`")
_TEST = re.compile(r"`(?P<test>test_\w+\.py::test_\w+)(?:\[[^\]`]*\])?`")
_DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?(?P<target>[^`>]+)>?`")
_OPENING = re.compile(r"^(?P<fence>:{3,}|`{3,})\{erratum\}[ \t]*(?P<arg>.*)$")
_OPTION = re.compile(r"^:(?P<key>[A-Za-z][\w-]*):[ \t]*(?P<value>.*)$")
_PART = re.compile(r"^- \*(?P<name>[^*]+)\*:")


class ErrataError(ValueError):
    """docs/errata.md breaks the erratum format; the message names the line."""


@dataclass(frozen=True)
class Entry:
    id: str
    line: int  # of the directive in docs/errata.md
    title: str
    verdict: str
    body: str
    quote: str
    does: str  # what torch does
    fix: str  # the correct way
    proof: str
    clauses: tuple[str, ...]
    tests: tuple[str, ...]
    pages: tuple[str, ...]  # spec pages named in the proof, e.g. "data"
    split_from: str | None = None
    implied: bool = False

    @property
    def anchor(self) -> str:
        return self.id.lower()

    @property
    def source(self) -> Source:
        return SOURCES[self.id.split("-")[0]]

    @property
    def number(self) -> int:
        return int(self.id.split("-")[1])


def _parts(body: list[str], where: str) -> dict[str, str]:
    """The text of each bullet ``- *Name*: ...`` of a body (continuation lines indented)."""
    parts: dict[str, list[str]] = {}
    current = None
    for line in body:
        m = _PART.match(line)
        if m:
            current = m["name"]
            parts[current] = [line[m.end() :].strip()]
        elif current and (line.startswith("  ") or not line.strip()):
            parts[current].append(line.strip())
        else:
            current = None
    missing = [p for p in PARTS if p not in parts]
    if missing:
        raise ErrataError(f"{where}: no bullet {', '.join(f'- *{p}*:' for p in missing)}")
    return {name: " ".join(" ".join(lines).split()) for name, lines in parts.items()}


def _entry(arg: str, start: int, body: list[tuple[int, str]], page: str) -> Entry:
    where = f"{page}:{start}"
    eid, _, title = arg.partition(" ")
    if not ID.match(eid):
        raise ErrataError(f"{where}: {eid!r} is not an erratum ID like EN-1 or KO-1")
    title = title.strip()
    if not title:
        raise ErrataError(f"{where}: {eid} needs a title after its ID")
    opts: dict[str, str] = {}
    k = 0
    while k < len(body) and (m := _OPTION.match(body[k][1])):
        if m["key"] not in OPTIONS:
            known = " ".join(f":{o}:" for o in sorted(OPTIONS))
            raise ErrataError(f"{page}:{body[k][0]}: unknown option :{m['key']}: of {eid}; known: {known}")
        if m["key"] in opts:
            raise ErrataError(f"{page}:{body[k][0]}: option :{m['key']}: of {eid} given twice")
        opts[m["key"]] = m["value"].strip()
        k += 1
    verdict = opts.get("verdict")
    if verdict not in VERDICTS:
        got = f" (got {verdict!r})" if verdict is not None else ""
        raise ErrataError(f"{where}: {eid} needs :verdict: one of {', '.join(VERDICTS)}{got}")
    split_from = opts.get("split-from") or None
    if split_from is not None and (not ID.match(split_from) or split_from.split("-")[0] != eid.split("-")[0]):
        raise ErrataError(f"{where}: {eid} :split-from: {split_from!r} is not an ID of the same source")
    if "implied" in opts and opts["implied"]:
        raise ErrataError(f"{where}: :implied: of {eid} is a flag and takes no value")
    lines = [text for _, text in body[k:]]
    while lines and not lines[0].strip():
        lines.pop(0)
    quote = []
    for text in lines:
        if not text.startswith(">"):
            break
        quote.append(text[1:].strip())
    if not quote:
        raise ErrataError(f"{where}: the body of {eid} must start with the quote (a '>' block)")
    for n, text in body[k:]:
        if re.search(r"\*\*Verdict", text):
            raise ErrataError(f"{page}:{n}: {eid} writes a verdict by hand; the :verdict: option gives it")
    parts = _parts(lines, where)
    text = "\n".join(lines).strip()
    pages = []
    for m in _DOC.finditer(parts["Proof"]):
        target = m["target"].strip()
        if target.startswith("/spec/") and target[6:] not in pages:
            pages.append(target[6:])
    return Entry(
        id=eid,
        line=start,
        title=title,
        verdict=verdict,
        body=text,
        quote="\n".join(quote).strip(),
        does=parts["What torch does"],
        fix=parts["Correct way"],
        proof=parts["Proof"],
        clauses=tuple(dict.fromkeys(m["id"] for m in _CLAUSE.finditer(text))),
        tests=tuple(dict.fromkeys(m["test"] for m in _TEST.finditer(text))),
        pages=tuple(pages),
        split_from=split_from,
        implied="implied" in opts,
    )


def parse(text: str, page: str = "docs/errata.md") -> dict[str, Entry]:
    """Every entry of an errata page, by ID, in the order of the page."""
    lines = text.splitlines()
    entries: dict[str, Entry] = {}
    i = 0
    while i < len(lines):
        m = _OPENING.match(lines[i])
        i += 1
        if not m:
            continue
        start, fence, body = i, m["fence"], []
        while i < len(lines) and lines[i].rstrip(" \t") != fence:
            if _OPENING.match(lines[i]):
                raise ErrataError(f"{page}:{start}: erratum is not closed before the next one (line {i + 1})")
            body.append((i + 1, lines[i]))
            i += 1
        if i == len(lines):
            raise ErrataError(f"{page}:{start}: erratum is not closed: no {fence!r} line")
        i += 1
        entry = _entry(m["arg"].strip(), start, body, page)
        if entry.id in entries:
            raise ErrataError(f"{page}:{start}: {entry.id} is defined twice (first at line {entries[entry.id].line})")
        entries[entry.id] = entry
    for entry in entries.values():
        if entry.split_from is not None and entry.split_from not in entries:
            raise ErrataError(f"{page}:{entry.line}: {entry.id} is split from {entry.split_from}, which does not exist")
    return entries


def load(path: Path = ERRATA_PAGE) -> dict[str, Entry]:
    where = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    return parse(path.read_text(encoding="utf-8"), where)


def referring_pages(root: Path = ROOT) -> dict[str, list[str]]:
    """For each erratum ID named by an ``{erratum}`` role, the documents (``spec/data``) whose role names it."""
    refs: dict[str, list[str]] = {}
    for path in sorted([*(root / "spec").glob("*.md"), *(root / "docs").glob("*.md")]):
        docname = path.relative_to(root).with_suffix("").as_posix()
        if docname == ERRATA_DOCNAME:
            continue
        for m in ROLE.finditer(path.read_text(encoding="utf-8")):
            pages = refs.setdefault(m["id"].strip(), [])
            if docname not in pages:
                pages.append(docname)
    return refs
