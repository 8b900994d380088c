"""The errata: one verdict per claim of the source material, held by docs/errata.md alone.

docs/errata.md is read by docs/_ext/errata_source.py; spec pages refer to its
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

from conformance.harness import registry

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import errata_source as errata  # noqa: E402

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
    assert entry.source.path in ("seeds/000", "seeds/001") and entry.source.title
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

> "A quote."

- *What torch does*: {clause}`DATA-1`.
- *Correct way*: as written.
- *Proof*: test `test_data.py::test_x`. Spec page: {doc}`/spec/data`, erratum 1.
:::
"""


def test_a_good_entry_is_read():
    (entry,) = errata.parse(GOOD).values()
    assert (entry.id, entry.title, entry.verdict, entry.quote) == ("EN-1", "A title", "wrong", '"A quote."')
    assert (entry.clauses, entry.tests, entry.pages) == (("DATA-1",), ("test_data.py::test_x",), ("data",))


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
        extensions = ["myst_parser", "errata"]
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
    assert f'<em class="erratum-verdict">{entry.verdict}</em>' in html


def test_an_unknown_id_fails_the_build(tmp_path):
    run, _ = build(tmp_path, "# Page\n\nSee {erratum}`EN-999`.\n")
    assert run.returncode != 0
    assert "unknown erratum 'EN-999'" in run.stderr
