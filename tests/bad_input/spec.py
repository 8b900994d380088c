"""Bad input: a malformed spec page (spec/*.md). The registry refuses it with one line, ``spec/<page>.md:<line>: ...``;
the harness turns that into a pytest usage error (exit 4) before any test runs."""

from __future__ import annotations

from pathlib import Path

from . import PYTEST, RELEASE_CHECK, Case  # noqa: F401


def _broken(page: str):
    """A setup that adds spec/broken.md (its directive starts at line 3, below a title) to the demo project."""

    def setup(project: Path) -> None:
        (project / "spec" / "broken.md").write_text("# Broken\n\n" + page)

    return setup


def _case(id: str, what: str, page, says: str) -> Case:
    """A case of a broken page: its text (str), or a setup that breaks the spec folder another way."""
    setup = page if callable(page) else _broken(page)
    return Case(id=f"spec-{id}", what=what, argv=PYTEST, says=says, exit=4, setup=setup)


def _not_utf8(project: Path) -> None:
    (project / "spec" / "broken.md").write_bytes(b"# Broken\n\ncaf\xe9\n")


def _folder_named_like_a_page(project: Path) -> None:
    (project / "spec" / "x.md").mkdir()


def _dangling_link(project: Path) -> None:
    (project / "spec" / "gone.md").symlink_to(project / "spec" / "deleted.md")


CASES = [
    _case(
        "unclosed-fence",
        "a `{clause}` directive is not closed before the next one opens",
        ":::{clause} BROKEN-1\n:level: MUST\n\nx\n\n:::{clause} BROKEN-2\n:level: MUST\n\ny\n:::\n",
        "spec/broken.md:3: clause BROKEN-1 is not closed: no ':::' line before the next directive (line 8)",
    ),
    _case(
        "unclosed-at-end",
        "an `{example}` directive is not closed at the end of the page",
        "```{example}\n:clauses: DEMO-1\n\n>>> 1\n1\n",
        "spec/broken.md:3: example is not closed: no '```' line before the end of the file",
    ),
    _case(
        "misspelled-option",
        "a clause option is misspelled",
        ":::{clause} BROKEN-1\n:level: MUST\n:untill: 2.4\n\nx\n:::\n",
        "spec/broken.md:5: unknown option :untill: (did you mean :until:?)",
    ),
    _case(
        "capitalised-option",
        "a clause option is capitalised",
        ":::{clause} BROKEN-1\n:level: MUST\n:Since: 2.1\n\nx\n:::\n",
        "spec/broken.md:5: unknown option :Since: (did you mean :since:?)",
    ),
    _case(
        "option-after-blank-line",
        "a clause option comes after a blank line",
        ":::{clause} BROKEN-1\n:level: MUST\n\n:since: 2.1\n\nx\n:::\n",
        "spec/broken.md:6: option :since: after the statement started; options go right below the directive line",
    ),
    _case(
        "option-after-text",
        "a clause option comes after the statement",
        ":::{clause} BROKEN-1\n:level: MUST\n\nx\n:devices: meta\n:::\n",
        "spec/broken.md:7: option :devices: after the statement started",
    ),
    _case(
        "bad-version",
        "a clause's `:since:` is not a version",
        ":::{clause} BROKEN-1\n:level: MUST\n:since: 2.x\n\nx\n:::\n",
        "spec/broken.md:5: :since: '2.x' is not a version like 2.1",
    ),
    _case(
        "empty-range",
        "a clause's `:since:` is not before its `:until:`",
        ":::{clause} BROKEN-1\n:level: MUST\n:since: 2.4\n:until: 2.2\n\nx\n:::\n",
        "spec/broken.md:6: empty range: since 2.4 is not before until 2.2",
    ),
    _case(
        "unknown-level",
        "a clause's `:level:` is not one of the levels",
        ":::{clause} BROKEN-1\n:level: SHALL\n\nx\n:::\n",
        "spec/broken.md:4: BROKEN-1 needs :level: one of MUST, OBSERVED, SHOULD, MAY, UNSPECIFIED (got 'SHALL')",
    ),
    _case(
        "unknown-device",
        "a clause's `:devices:` names an unknown device",
        ":::{clause} BROKEN-1\n:level: MUST\n:devices: gpu\n\nx\n:::\n",
        "spec/broken.md:5: unknown device(s) gpu; known: cpu, meta, cuda, mps",
    ),
    _case(
        "duplicate-id",
        "two clauses have the same ID",
        ":::{clause} BROKEN-1\n:level: MUST\n\nx\n:::\n\n:::{clause} BROKEN-1\n:level: MAY\n\ny\n:::\n",
        "spec/broken.md:9: clause BROKEN-1 is defined twice (first at spec/broken.md:3)",
    ),
    _case(
        "example-unknown-clause",
        "an `{example}` names a clause no page defines",
        ":::{example}\n:clauses: DEMO-9\n\n>>> 1\n1\n:::\n",
        "spec/broken.md:4: example names unknown clause DEMO-9",
    ),
    _case(
        "lowercase-id",
        "a clause ID is in lowercase",
        ":::{clause} broken-1\n:level: MUST\n\nx\n:::\n",
        "spec/broken.md:3: 'broken-1' is not a clause ID like DATA-1",
    ),
    _case(
        "empty-statement",
        "a clause has no statement",
        ":::{clause} BROKEN-1\n:level: MUST\n\n:::\n",
        "spec/broken.md:3: BROKEN-1 has no statement",
    ),
    _case(
        "duplicated-option",
        "a clause gives an option twice",
        ":::{clause} BROKEN-1\n:level: MUST\n:until: 2.4\n:until: 2.5\n\nx\n:::\n",
        "spec/broken.md:6: option :until: given twice (first at line 5)",
    ),
    _case("not-utf8", "a spec page is not UTF-8", _not_utf8, "spec/broken.md:3: not UTF-8 text (byte b'\\xe9')"),
    _case(
        "folder-named-like-a-page",
        "a folder in spec/ is named like a page (x.md)",
        _folder_named_like_a_page,
        "spec/x.md: cannot read: a folder, not a page",
    ),
    _case(
        "dangling-link",
        "a page in spec/ is a symbolic link to nothing",
        _dangling_link,
        "spec/gone.md: cannot read: a dangling symbolic link",
    ),
]
