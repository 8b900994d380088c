"""The errata of the source material: one entry per claim, read from docs/errata.md (conformance/errata.md in the
installed package, where the clause registry reads the corrected snippets from, as examples the suite runs).

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
``VERDICTS``), ``:fix:`` (required: the fix in a short phrase or code, shown in
the lookup table at the top of the page), ``:fix-ko:`` (required on a Korean
entry: the same fix in Korean, shown after "판정: <verdict>"),
``:split-from:`` (the ID of the entry this one was split from),
``:implied:`` (a flag: the source does not state the claim in words, its code
takes it for granted) and ``:shows:`` (the IDs of the clauses its corrected
snippet shows; given with a snippet and only then). The body starts with the quote (a block quote) and
holds the three bullets above; the clauses an entry cites are the
``{clause}`` roles of its body, its tests the ``test_<page>.py::test_<name>``
literals, its spec pages the ``{doc}`` links of its *Proof* bullet.

An entry whose verdict is *wrong* or *does not run* carries, in its *Correct
way* bullet, the corrected snippet with the output it printed when it was run,
as a ``{code-block} pycon`` with ``:class: corrected``: the clause registry reads it
as an example of the clauses of ``:shows:``, which the conformance suite executes
like every ``{example}`` of the spec pages (conformance/tests/test_examples.py).

Pages refer to an entry with the ``{erratum}`` role (``{erratum}`EN-10```),
which shows the ID and the verdict given here; no page writes a verdict of its
own. IDs are stable: an ID is never reused or renumbered, and the half of a
claim split off an entry gets the next free number of its source, with
``:split-from:``.

This module is plain Python (no Sphinx, no torch) so that the Sphinx extension
(docs/_ext/errata.py), the clause registry and the tests (tests/test_errata.py) read
the errata the same way. Any mistake is an ``ErrataError`` naming
``docs/errata.md:<line>``.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from .registry import SpecError, directives, read_page

ROOT = Path(__file__).resolve().parents[2]
# The page in the installed package (force-included there), else the one of a clone.
_INSTALLED = ROOT / "conformance" / "errata.md"
ERRATA_PAGE = _INSTALLED if _INSTALLED.is_file() else ROOT / "docs" / "errata.md"
ERRATA_DOCNAME = "docs/errata"

VERDICTS = ("correct", "wrong", "misleading", "does not run")
ID = re.compile(r"^(?P<source>EN|KO)-(?P<number>[1-9][0-9]*)$")
OPTIONS = {"verdict", "fix", "fix-ko", "split-from", "implied", "shows"}
# The verdicts that need a corrected snippet, and each verdict in Korean (for the one-line verdict of a KO entry).
NEEDS_SNIPPET = ("wrong", "does not run")
VERDICTS_KO = {"correct": "맞음", "wrong": "틀림", "misleading": "오해의 소지 있음", "does not run": "실행되지 않음"}
PARTS = ("What torch does", "Correct way", "Proof")


@dataclass(frozen=True)
class Source:
    key: str  # the ID prefix
    language: str
    title: str
    title_en: str = ""  # an English translation of a title in another language

    @property
    def name(self) -> str:
        """How the page names the post for a reader who holds it: its language and its title."""
        return f"the {self.language} post \u201c{self.title}\u201d"


SOURCES = {
    "EN": Source(
        "EN",
        "English",
        "Taming the Tensor: Techniques for Updating PyTorch Variables with Backpropagation",
    ),
    "KO": Source(
        "KO",
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
_OPTION = re.compile(r"^:(?P<key>[A-Za-z][\w-]*):[ \t]*(?P<value>.*)$")
_PART = re.compile(r"^- \*(?P<name>[^*]+)\*:")
# The corrected snippet of an entry: a pycon code-block of class "corrected", executed by the suite.
_SNIPPET = re.compile(
    r"^(?P<indent> *)(?P<fence>`{3,})\{code-block\} pycon\n(?P=indent):class: corrected\n\n"
    r"(?P<code>.*?)^(?P=indent)(?P=fence)$",
    re.M | re.S,
)


class ErrataError(SpecError):
    """docs/errata.md breaks the erratum format; the message names the line."""


@dataclass(frozen=True)
class Entry:
    id: str
    line: int  # of the directive in docs/errata.md
    title: str
    verdict: str
    body: str
    fix_short: str  # the :fix: option
    fix_ko: str  # the :fix-ko: option ("" on an English entry)
    snippet: str  # the corrected snippet, a pycon session ("" when the entry has none)
    snippet_line: int  # of the snippet's first line in the errata page (0 when there is none)
    quote: str
    does: str  # what torch does
    fix: str  # the correct way
    proof: str
    clauses: tuple[str, ...]
    shows: tuple[str, ...]  # the :shows: option: the clauses its corrected snippet shows (run as their example)
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


_FENCED = re.compile(r"^```\w*\n(?P<code>.*?)^```$", re.M | re.S)
_NAMED_CODE = re.compile(r"`([^`]+)`")


def _quoted_code(entry: Entry) -> list[str]:
    """The lines of the code the entry quotes, without blank lines, "..." and our translations of comments."""
    lines = []
    for block in _FENCED.finditer(entry.quote):
        for line in block["code"].splitlines():
            line = re.sub(r"\s+\(\"[^\"]*\"\)$", "", line).rstrip()  # '# 값 변경  ("change the value")'
            if line.strip() and line.strip() != "...":
                lines.append(line.strip())
    return lines


def lookup_lines(entries: dict[str, Entry]) -> dict[str, tuple[str, bool]]:
    """For each entry, the line a reader who holds the post looks for, and whether it is code: a line of the code
    it quotes, or its quote.

    A snippet of the Korean post opens with the same ``x = torch.Variable(...)`` line as the others, so the line
    of an entry is the code its title names, else the first code line that opens no earlier snippet of its post,
    else its first line; an entry that quotes no code shows the first paragraph of its quote.
    """
    out: dict[str, tuple[str, bool]] = {}
    openings: set[tuple[str, str]] = set()
    for entry in entries.values():
        code = _quoted_code(entry)
        statements = [line for line in code if not line.startswith("#")]
        calls = [c for c in _NAMED_CODE.findall(entry.title) if "(" in c and "..." not in c]
        line = next((s for c in calls for s in statements if c in s), None)
        line = line or next((s for s in statements if (entry.source.key, s) not in openings), None)
        line = line or (statements or code or [""])[0]
        if statements:
            openings.add((entry.source.key, statements[0]))
        prose = entry.quote.split("\n\n")[0].replace("\n", " ").replace("`", "")  # shown as plain text
        out[entry.id] = (line, True) if line else (_shortened(prose), False)
    return out


def _shortened(text: str, limit: int = 110) -> str:
    """A quote cut after a word near ``limit`` characters, with an ellipsis where something was left out."""
    if len(text) <= limit:
        return text
    return text[: text.rfind(" ", 0, limit)].rstrip(",;:") + " \u2026"


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
    if not opts.get("fix"):
        raise ErrataError(f"{where}: {eid} needs :fix: (the fix in a short phrase or code)")
    if eid.startswith("KO-") != bool(opts.get("fix-ko")):
        raise ErrataError(f"{where}: {eid}: :fix-ko: (the fix in Korean) is given on every KO entry and only there")
    parts = _parts(lines, where)
    text = "\n".join(lines).strip()
    snippet = _SNIPPET.search(text)
    if bool(snippet) != bool(opts.get("shows")):
        raise ErrataError(f"{where}: {eid}: a corrected snippet and :shows: (the clauses it shows) go together")
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
        fix_short=opts["fix"],
        fix_ko=opts.get("fix-ko", ""),
        snippet=textwrap.dedent(snippet["code"]).strip() if snippet else "",
        snippet_line=next((n + 2 for n, line in body if line.strip() == ":class: corrected"), 0) if snippet else 0,
        quote="\n".join(quote).strip(),
        does=parts["What torch does"],
        fix=parts["Correct way"],
        proof=parts["Proof"],
        clauses=tuple(dict.fromkeys(m["id"] for m in _CLAUSE.finditer(text))),
        shows=tuple(opts.get("shows", "").split()),
        tests=tuple(dict.fromkeys(m["test"] for m in _TEST.finditer(text))),
        pages=tuple(pages),
        split_from=split_from,
        implied="implied" in opts,
    )


def parse(text: str, page: str = "docs/errata.md") -> dict[str, Entry]:
    """Every entry of an errata page, by ID, in the order of the page."""
    entries: dict[str, Entry] = {}
    for _, arg, start, body in directives(text, page, ("erratum",), ErrataError):
        entry = _entry(arg, start, body, page)
        if entry.id in entries:
            raise ErrataError(f"{page}:{start}: {entry.id} is defined twice (first at line {entries[entry.id].line})")
        entries[entry.id] = entry
    for entry in entries.values():
        if entry.split_from is not None and entry.split_from not in entries:
            raise ErrataError(f"{page}:{entry.line}: {entry.id} is split from {entry.split_from}, which does not exist")
    return entries


def load(path: Path = ERRATA_PAGE) -> dict[str, Entry]:
    where = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    return parse(read_page(path, where, ErrataError), where)


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
