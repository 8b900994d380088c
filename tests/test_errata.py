"""The errata: one verdict per claim of the source material, held by docs/errata.md alone.

docs/errata.md is read by conformance/harness/errata.py; spec pages refer to its
entries with the ``{erratum}`` role, which shows the verdict held there. These
tests check that every ID any page names exists, that every entry is complete
and cites clauses and tests that exist, that no page writes a verdict of its
own, and that an unknown ID fails the docs build.
"""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.harness import errata, registry

ROOT = Path(__file__).resolve().parents[1]

PAGES = sorted([*(ROOT / "spec").glob("*.md"), *(ROOT / "docs").glob("*.md")])
SPEC_PAGES = sorted((ROOT / "spec").glob("*.md"))
ENTRIES = errata.load()
ERRATA_SECTION = re.compile(r"^## Errata of the source material.*?(?=^## |\Z)", re.M | re.S)
# A verdict written by hand: the word set off in emphasis (*Wrong*, *does not run*, *Runs; misleading*, ...).
HAND_VERDICT = re.compile(r"\*[^*\n]*\b(correct|wrong|misleading|does not run|runs)\b[^*\n]*\*", re.I)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def errata_sections():
    for path in SPEC_PAGES:
        for m in ERRATA_SECTION.finditer(path.read_text(encoding="utf-8")):
            yield path, m.group(0)


def test_entries_are_read():
    assert len(ENTRIES) >= 54
    assert {e.id.split("-")[0] for e in ENTRIES.values()} == set(errata.SOURCES)


@pytest.mark.parametrize("path", PAGES, ids=rel)
def test_every_id_a_page_names_exists(path):
    text = path.read_text(encoding="utf-8")
    unknown = sorted({m.group(0) for m in errata.MENTION.finditer(text)} - set(ENTRIES))
    unknown += sorted({m["id"] for m in errata.ROLE.finditer(text)} - set(ENTRIES))
    assert not unknown, f"{rel(path)} names errata that docs/errata.md does not define: {unknown}"


def test_ids_are_stable_and_simple():
    # EN-1 .. EN-n and KO-1 .. KO-n without gaps: a split half gets the next free number, never a suffix.
    for key in errata.SOURCES:
        numbers = sorted(e.number for e in ENTRIES.values() if e.id.startswith(key + "-"))
        assert numbers == list(range(1, len(numbers) + 1)), (key, numbers)
    for entry in ENTRIES.values():
        if entry.split_from:
            assert ENTRIES[entry.split_from].number < entry.number, entry.id


@pytest.mark.parametrize("entry", ENTRIES.values(), ids=lambda e: e.id)
def test_entry_is_complete(entry):
    assert entry.verdict in errata.VERDICTS
    assert entry.source.language in ("English", "Korean") and entry.source.title
    assert entry.fix_short, f"{entry.id} has no :fix:"
    assert entry.title and entry.quote
    assert entry.does and entry.fix and entry.proof


@pytest.mark.parametrize("entry", ENTRIES.values(), ids=lambda e: e.id)
def test_entry_cites_clauses_that_exist(entry):
    clauses = registry.default().clauses
    assert entry.clauses, f"{entry.id} cites no clause"
    missing = [c for c in entry.clauses if c not in clauses]
    assert not missing, f"{entry.id} (docs/errata.md:{entry.line}) cites clauses not in spec/*.md: {missing}"


@pytest.mark.parametrize("entry", ENTRIES.values(), ids=lambda e: e.id)
def test_entry_cites_tests_that_exist(entry):
    assert entry.tests, f"{entry.id} cites no test"
    for test in entry.tests:
        file, name = test.split("::")
        path = ROOT / "conformance" / "tests" / file
        assert path.is_file(), f"{entry.id} cites {test}: no {rel(path)}"
        assert re.search(rf"^def {name}\(", path.read_text(encoding="utf-8"), re.M), f"{entry.id} cites {test}"


def test_pages_named_in_a_proof_refer_to_the_entry():
    """An entry names in its proof exactly the spec pages that refer to it, so neither side goes stale."""
    refs = errata.referring_pages()
    for entry in ENTRIES.values():
        referring = {d.removeprefix("spec/") for d in refs.get(entry.id, []) if d.startswith("spec/")}
        assert set(entry.pages) == referring, (
            f"{entry.id}: proof names {sorted(entry.pages)}, pages referring to it: {sorted(referring)}"
        )


@pytest.mark.parametrize("path", SPEC_PAGES, ids=rel)
def test_spec_pages_write_no_verdict_of_their_own(path):
    text = path.read_text(encoding="utf-8")
    for m in ERRATA_SECTION.finditer(text):
        written = [h.group(0) for h in HAND_VERDICT.finditer(m.group(0))]
        assert not written, f"{rel(path)}: verdicts written by hand (use {{erratum}}`ID`): {written}"


def test_every_numbered_erratum_of_a_spec_page_names_an_entry():
    for path, section in errata_sections():
        items = re.split(r"^\d+\. ", section, flags=re.M)[1:]
        for number, item in enumerate(items, 1):
            assert errata.ROLE.search(item), f"{rel(path)}, erratum {number}, names no {{erratum}} entry"


def test_the_errata_page_writes_no_verdict_by_hand():
    text = errata.ERRATA_PAGE.read_text(encoding="utf-8")
    assert "**Verdict" not in text
    assert not re.search(r"which (calls|judges)", text), "an entry reports another page's verdict"


# The parser's refusals.

GOOD = """\
:::{erratum} EN-1 A title
:verdict: wrong
:fix: `x.fixed()`
:shows: DATA-1

> "A quote."

- *What torch does*: {clause}`DATA-1`.
- *Correct way*: as written.

  ```{code-block} pycon
  :class: corrected

  >>> x.fixed()
  1
  ```
- *Proof*: test `test_data.py::test_x`. Spec page: {doc}`/spec/data`, erratum 1.
:::
"""


def test_a_good_entry_is_read():
    (entry,) = errata.parse(GOOD).values()
    assert (entry.id, entry.title, entry.verdict, entry.quote) == ("EN-1", "A title", "wrong", '"A quote."')
    assert (entry.clauses, entry.tests, entry.pages) == (("DATA-1",), ("test_data.py::test_x",), ("data",))
    assert (entry.fix_short, entry.fix_ko, entry.snippet) == ("`x.fixed()`", "", ">>> x.fixed()\n1")


@pytest.mark.parametrize(
    "change, message",
    [
        ((":verdict: wrong", ":verdict: partly wrong"), "needs :verdict: one of"),
        ((":verdict: wrong\n", ""), "needs :verdict: one of"),
        (("EN-1 A title", "EN-1a A title"), "is not an erratum ID"),
        (("EN-1 A title", "EN-1"), "needs a title"),
        ((":verdict: wrong", ":verdict: wrong\n:verdict: wrong"), "given twice"),
        ((":verdict: wrong", ":verdict: wrong\n:verdikt: wrong"), "unknown option"),
        ((":verdict: wrong", ":verdict: wrong\n:split-from: KO-1"), "not an ID of the same source"),
        ((":verdict: wrong", ":verdict: wrong\n:split-from: EN-7"), "which does not exist"),
        (('> "A quote."', "A quote."), "must start with the quote"),
        (("- *Correct way*: as written.\n", ""), "no bullet - *Correct way*:"),
        (("- *What torch does*:", "**Verdict: wrong.**\n\n- *What torch does*:"), "writes a verdict by hand"),
        (("erratum 1.\n:::\n", "erratum 1.\n"), "not closed"),
        ((":fix: `x.fixed()`\n", ""), "needs :fix:"),
        ((":fix: `x.fixed()`", ":fix: `x.fixed()`\n:fix-ko: 고치세요"), ":fix-ko: (the fix in Korean)"),
    ],
)
def test_format_errors_are_refused(change, message):
    with pytest.raises(errata.ErrataError, match=re.escape(message)):
        errata.parse(GOOD.replace(*change))


def test_an_id_defined_twice_is_refused():
    with pytest.raises(errata.ErrataError, match="defined twice"):
        errata.parse(GOOD + "\n" + GOOD)


# The Sphinx side: the role shows the verdict of the single source, and an unknown ID fails the build.


def build(tmp_path, page):
    pytest.importorskip("myst_parser")
    (tmp_path / "conf.py").write_text(
        textwrap.dedent(f"""\
        import sys
        sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / "docs" / "_ext")!r}]
        extensions = ["myst_parser", "sphinx_design", "errata"]
        """)
    )
    (tmp_path / "index.md").write_text(page, encoding="utf-8")
    out = tmp_path / "_build"
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(tmp_path), str(out)],
        capture_output=True,
        text=True,
    )
    return run, out


def test_the_role_shows_the_verdict_of_the_source(tmp_path):
    entry = ENTRIES["EN-10"]
    run, out = build(tmp_path, "# Page\n\nSee {erratum}`EN-10`.\n")
    assert run.returncode == 0, run.stderr
    html = (out / "index.html").read_text(encoding="utf-8")
    assert re.search(r'href="[^"]*docs/errata\.html#en-10"', html)
    assert (
        f'<span class="sd-badge verdict-badge verdict-{entry.verdict.replace(" ", "-")}">{entry.verdict}</span>' in html
    )


def test_an_unknown_id_fails_the_build(tmp_path):
    run, _ = build(tmp_path, "# Page\n\nSee {erratum}`EN-999`.\n")
    assert run.returncode != 0
    assert "unknown erratum 'EN-999'" in run.stderr


# What a reader holding one of the posts gets: the lookup table, stable anchors, verdict badges, corrected
# snippets, a Korean line for every Korean entry, and the posts named by their titles.

HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.mark.parametrize("entry", ENTRIES.values(), ids=lambda e: e.id)
def test_every_wrong_or_failing_entry_has_a_corrected_snippet(entry):
    if entry.verdict not in errata.NEEDS_SNIPPET:
        return
    assert entry.snippet.startswith(">>> "), f"{entry.id} ({entry.verdict}) has no corrected snippet"
    assert any(not line.startswith((">>> ", "... ")) for line in entry.snippet.splitlines()), (
        f"{entry.id}: the corrected snippet shows no output"
    )


def test_every_corrected_snippet_is_an_example_the_suite_runs():
    """The registry reads each corrected snippet as an example of the clauses its entry shows, so the conformance suite
    executes it on every release like the spec pages' examples (conformance/tests/test_examples.py)."""
    examples = {(e.line + 1, e.code.strip()): e for e in registry.default().examples if e.page == "errata"}
    for entry in ENTRIES.values():
        if entry.snippet:
            example = examples.pop((entry.snippet_line, entry.snippet), None)
            assert example is not None, f"{entry.id}: its corrected snippet is not an example of the registry"
            assert example.clauses == entry.shows and all(c in registry.default().clauses for c in entry.shows)
    assert not examples, f"examples of no entry: {sorted(examples)}"


@pytest.mark.parametrize("entry", [e for e in ENTRIES.values() if e.id.startswith("KO-")], ids=lambda e: e.id)
def test_every_korean_entry_has_its_verdict_and_fix_in_korean(entry):
    assert HANGUL.search(entry.fix_ko), f"{entry.id}: :fix-ko: is not written in Korean"
    assert entry.verdict in errata.VERDICTS_KO


def test_lookup_lines_are_lines_of_the_quotes():
    lines = errata.lookup_lines(ENTRIES)
    assert list(lines) == list(ENTRIES)
    for entry in ENTRIES.values():
        text, is_code = lines[entry.id]
        assert text, entry.id
        if is_code:
            assert text in entry.quote, f"{entry.id}: {text!r} is not a line of its quote"
    # The line every Korean snippet opens with stands for the first entry only; the others show their own line.
    assert lines["KO-5"] == ("x.add_(1)", True)
    assert lines["KO-8"] == ("x.copy_(torch.randn(5))", True)


def test_no_page_calls_the_posts_by_their_file_names():
    paths = [*PAGES, ROOT / "README.md", *sorted((ROOT / "docs" / "_ext").glob("*.py"))]
    named = [rel(p) for p in paths if "seeds/00" in p.read_text(encoding="utf-8")]
    assert not named, f"name the posts by their titles, not seeds/000 or seeds/001: {named}"


def _luminance(hex_colour: str) -> float:
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def test_verdict_badges_have_enough_contrast():
    css = (ROOT / "docs" / "_static" / "errata.css").read_text(encoding="utf-8")
    pairs = re.findall(r"--badge-bg: (#[0-9a-f]{6}); --badge-fg: (#[0-9a-f]{6})", css)
    assert len(pairs) >= 1 + 4 * 3, "a colour pair per verdict, in light mode and in both dark-mode rules"
    for bg, fg in pairs:
        hi, lo = sorted((_luminance(bg), _luminance(fg)), reverse=True)
        assert (hi + 0.05) / (lo + 0.05) >= 4.5, f"badge {fg} on {bg}: below WCAG AA"
    for verdict in errata.VERDICTS:
        assert css.count(f".verdict-{verdict.replace(' ', '-')} {{ --badge-bg") == 3, verdict


@pytest.fixture(scope="module")
def errata_html(tmp_path_factory):
    """The errata page as the site build renders it (the whole site, once)."""
    pytest.importorskip("sphinx_design")
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(ROOT), str(out)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    return (out / "docs" / "errata.html").read_text(encoding="utf-8")


def test_every_entry_is_anchored_at_its_id(errata_html):
    anchors = re.findall(r'<section class="erratum [^"]*" id="([^"]+)"', errata_html)
    assert anchors == [e.id.lower() for e in ENTRIES.values()]


def test_the_lookup_table_has_one_row_per_entry_linking_to_it(errata_html):
    tables = re.findall(r'<table class="[^"]*errata-lookup.*?</table>', errata_html, re.S)
    rows = [row for table in tables for row in re.findall(r"<tr[^>]*>.*?</tr>", table.split("<tbody>")[1], re.S)]
    assert len(rows) == len(ENTRIES)
    for row, entry in zip(rows, ENTRIES.values(), strict=True):
        assert f'href="#{entry.anchor}"' in row, entry.id
        assert f'verdict-badge verdict-{entry.verdict.replace(" ", "-")}">{entry.verdict}<' in row, entry.id


def test_entries_show_a_badge_a_korean_line_and_a_closed_proof(errata_html):
    sections = re.split(r'<section class="erratum ', errata_html)[1:]
    assert len(sections) == len(ENTRIES)
    for html, entry in zip(sections, ENTRIES.values(), strict=True):
        assert f'Verdict: <span class="sd-badge verdict-badge verdict-{entry.verdict.replace(" ", "-")}">' in html
        assert ('lang="ko"' in html) == entry.id.startswith("KO-"), entry.id
        assert re.search(r'<details class="[^"]*erratum-proof[^"]*"(?![^>]*open)', html), entry.id
        assert ("Executed by the conformance suite; shows" in html) == bool(entry.snippet), entry.id


def test_ids_written_in_plain_text_are_links(errata_html):
    # "the fix of EN-13" in the lookup table, and "(KO-2)" in the text of an entry.
    assert re.search(r'the fix of <a [^>]*href="#en-13"', errata_html)
    assert re.search(r'stops at <code[^>]*>.*?</code> \(<a [^>]*href="#ko-2"', errata_html)
