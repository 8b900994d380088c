"""Each conformance test quotes the clause it proves word for word.

A test's quote is a comment block right above it (or at the top of its body)::

    # > CLONE-2: `x.clone()` has the values of `x`.
    # > VERSION-96 (compile, until 2.5): ... the text goes on over lines that start with "# > " ...

Read as MyST text with the markup dropped (a role such as {clause}`CLONE-2` reads as its text, a link as its
text, backticks go, whitespace is collapsed), the quote is the clause's text, or an excerpt of it: "..." marks
what is left out, and each part between them (without a trailing ".") occurs in the clause's text, in order.
The clause must be one of the registry's (a withdrawn clause still is). These checks read sources only (no torch).

``python -m tests.test_quotes --fix`` rewrites each quote that fails as the clause's whole text (or, for an excerpt,
as the sentences of the clause it excerpts, between "..."), roles and links as their text, code in backticks,
wrapped at 120 characters; nothing else in the file changes.
"""

import re
import sys
from pathlib import Path

import pytest

from conformance.harness import registry as reg

ROOT = Path(__file__).resolve().parents[1]
TEST_FILES = sorted((ROOT / "conformance" / "tests").glob("test_*.py"))
WIDTH = 120  # ruff's line length

# The first line of a quote: the clause, maybe a note in parentheses (its level, range, modes), a colon.
HEADER = re.compile(r"^(?P<indent>[ \t]*)# > (?P<id>[A-Z][A-Z0-9]*-\d+)(?P<note> \([^()]*\))?: ?(?P<text>.*)$")
ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<text>[^`]*?)(?:\s*<[^`<>]*>)?`")  # {clause}`X`, {doc}`title <target>`
LINK = re.compile(r"\[(?P<text>[^\]]*)\]\([^()\s]*\)")  # [text](url)
ELISION = "..."


def normalise(text: str) -> str:
    """The words of MyST text without its markup."""
    text = LINK.sub(r"\g<text>", ROLE.sub(r"\g<text>", text))
    return " ".join(text.replace("`", "").split())


def quotes(path: Path):
    """Every quote of the file: (its first line's number, indent, clause id, note, quoted text, the number of its
    last line)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        head = HEADER.match(lines[i])
        if not head:
            i += 1
            continue
        start, more = i, f"{head['indent']}# >"
        text = [head["text"]]
        i += 1
        while i < len(lines) and lines[i].startswith(more) and not HEADER.match(lines[i]):
            text.append(lines[i][len(more) :])
            i += 1
        yield start + 1, head["indent"], head["id"], head["note"] or "", " ".join(text), i


def missing(quote: str, clause: str) -> str | None:
    """The first part of the quote (split at "...") that does not occur in the clause's text after the part before
    it; None when the quote is a quote of the clause."""
    text, at = normalise(clause), 0
    for part in normalise(quote).split(ELISION):
        part = part.strip().removesuffix(".").strip()
        found = text.find(part, at)
        if found < 0:
            return part
        at = found + len(part)
    return None


def problems(path: Path) -> list[str]:
    clauses = reg.default().clauses
    out = []
    for line, _, cid, _, text, _ in quotes(path):
        where = f"{path.relative_to(ROOT)}:{line}"
        if cid not in clauses:
            out.append(f"{where}: {cid} is not a clause of the spec")
        elif (part := missing(text, clauses[cid].text)) is not None:
            out.append(f"{where}: not a quote of {cid} ({clauses[cid].page}.md:{clauses[cid].line}): {part!r}")
    return out


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: p.name)
def test_quotes_are_the_clauses_words(path):
    found = problems(path)
    shown = "\n".join(found[:20]) + (f"\n... and {len(found) - 20} more" if len(found) > 20 else "")
    if found:
        message = f"{len(found)} quotes are not their clause's words (python -m tests.test_quotes --fix):\n{shown}"
        pytest.fail(message, pytrace=False)


# The fixer.

SENTENCE_END = re.compile(r"(?<=[.;])\s+(?=[A-Z(`_\"'])")  # a sentence (or a part of one) ends before a capital
WORD = re.compile(r"[A-Za-z0-9_]+")
TOKEN = re.compile(r"(?:`[^`]*`|[^\s`]+|`)+")  # a word; a code span with spaces in it is one


def display(text: str) -> str:
    """The clause's text as a quote shows it: roles and links as their text (that of a {torch} role is code), code
    in backticks, on one line."""
    text = ROLE.sub(lambda m: f"`{m['text']}`" if m["role"] == "torch" else m["text"], text)
    return " ".join(LINK.sub(r"\g<text>", text).split())


def _sentences(text: str) -> list[str]:
    """The text cut where a sentence, or a part of one after ";", ends (never inside code or parentheses)."""
    prose = re.sub(r"`[^`]*`", lambda m: "_" * len(m[0]), text)  # code spans blanked out, the same length
    cuts = [m for m in SENTENCE_END.finditer(prose) if prose.count("(", 0, m.start()) == prose.count(")", 0, m.start())]
    starts, ends = [0, *(m.end() for m in cuts)], [*(m.start() for m in cuts), len(text)]
    return [text[a:b] for a, b in zip(starts, ends, strict=True)]


def _excerpt(quote: str, clause: str) -> str:
    """For a quote that starts or ends with "...": the run of the clause's sentences that shares the most words
    with it, between "..." where it leaves some out; the clause's whole text when no run stands out or the run leaves
    out less than a third of the text."""
    sentences = _sentences(display(clause))
    want = set(WORD.findall(normalise(quote).lower()))
    best, score = (0, len(sentences)), 0.0
    for i in range(len(sentences)):
        for j in range(i + 1, len(sentences) + 1):
            have = set(WORD.findall(" ".join(sentences[i:j]).lower()))
            shared = len(want & have)
            f1 = 2 * shared / (len(want) + len(have)) if shared else 0.0
            if f1 > score:
                best, score = (i, j), f1
    i, j = best
    if score < 0.5 or 3 * len(" ".join(sentences[i:j])) > 2 * len(" ".join(sentences)):
        i, j = 0, len(sentences)
    return ("... " if i else "") + " ".join(sentences[i:j]) + (" ..." if j < len(sentences) else "")


def _wrap(first: str, indent: str, text: str) -> list[str]:
    """``text`` as ``# > `` lines, the first starting with ``first`` (the clause and note), at most WIDTH characters
    each, a code span broken only where it is longer than a line, and no line but the first read as a quote's start."""
    more = f"{indent}# > "
    tokens = TOKEN.findall(text)
    if " ".join(tokens) != text:  # unbalanced backticks: plain words
        tokens = text.split()
    for width in range(WIDTH, WIDTH - 40, -1):
        lines, line = [], first.rstrip()
        for token in tokens:
            for word in [token] if len(more) + len(token) <= width else token.split():
                if len(line) + 1 + len(word) <= width or line == first.rstrip():
                    line = f"{line} {word}"
                else:
                    lines.append(line)
                    line = more + word
        lines.append(line)
        if all(len(x) <= WIDTH for x in lines) and not any(HEADER.match(x) for x in lines[1:]):
            return lines
    raise ValueError(f"cannot wrap {first!r}")


def fix(path: Path) -> int:
    """Rewrite the file's quotes that fail; the number rewritten."""
    clauses = reg.default().clauses
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    fixed = 0
    for line, indent, cid, note, text, end in reversed(list(quotes(path))):
        if cid not in clauses or missing(text, clauses[cid].text) is None:
            continue
        quote = normalise(text)
        new = (
            _excerpt(text, clauses[cid].text)
            if quote.startswith(ELISION) or quote.endswith(ELISION)
            else display(clauses[cid].text)
        )
        assert missing(new, clauses[cid].text) is None, (path, line, cid)
        wrapped = _wrap(f"{indent}# > {cid}{note}: ", indent, new)
        lines[line - 1 : end] = [w + "\n" for w in wrapped]
        fixed += 1
    if fixed:
        path.write_text("".join(lines), encoding="utf-8")
    return fixed


if __name__ == "__main__":
    if sys.argv[1:] != ["--fix"]:
        found = [p for path in TEST_FILES for p in problems(path)]
        print("\n".join([*found, "(python -m tests.test_quotes --fix rewrites them)"]) if found else "all quotes hold")
        sys.exit(1 if found else 0)
    total = 0
    for path in TEST_FILES:
        if n := fix(path):
            print(f"{path.relative_to(ROOT)}: {n} quotes rewritten")
            total += n
    print(f"{total} quotes rewritten")
