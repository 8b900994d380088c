"""Release boundaries (conformance/harness/releases.py) and their generated pages (docs/_ext/releases.py)."""

import re
import sys

import pytest
from packaging.version import Version

from conformance.harness import registry, releases

sys.path.insert(0, str(registry.ROOT / "docs" / "_ext"))
pages = pytest.importorskip("releases")  # the Sphinx extension (needs sphinx, a docs dependency)


def test_the_boundaries_are_every_since_and_until_of_the_spec_pages():
    # Read from the spec pages' text, not through the registry, so that the two can be compared.
    written = {
        Version(m[1])
        for path in registry.SPEC_DIR.glob("*.md")
        for m in re.finditer(r"^:(?:since|until):\s*(\S+)", path.read_text(encoding="utf-8"), re.M)
    }
    assert releases.boundaries() == sorted(written)


def test_each_boundary_has_a_clause_that_starts_or_stops_there():
    for version in releases.boundaries():
        assert releases.starting(version) or releases.stopping(version), version
        assert all(version in (since for since, _ in c.ranges) for c in releases.starting(version))
        assert all(version in (until for _, until in c.ranges) for c in releases.stopping(version))


def test_each_boundary_gets_a_page_and_the_index_lists_them_all(tmp_path):
    versions = releases.boundaries()
    pages.write_stubs(tmp_path, versions)
    written = sorted(p.name for p in tmp_path.glob("*.md"))
    assert written == sorted(["index.md", *(f"torch-{v}.md" for v in versions)])
    for v in versions:
        text = (tmp_path / f"torch-{v}.md").read_text(encoding="utf-8")
        assert text.startswith(f"# What changed in torch {v}\n") and f"{{release-changes}} {v}" in text
        assert releases.docname(v) == f"docs/releases/torch-{v}"
    toctree = (tmp_path / "index.md").read_text(encoding="utf-8").split(":hidden:")[1].split()
    assert toctree == [f"torch-{v}" for v in reversed(versions)] + ["```"]


def test_stubs_are_rewritten_only_when_they_change_and_stale_ones_removed(tmp_path):
    pages.write_stubs(tmp_path, [Version("2.1"), Version("2.9")])
    kept = tmp_path / "torch-2.1.md"
    before = kept.stat().st_mtime_ns
    pages.write_stubs(tmp_path, [Version("2.1")])
    assert kept.stat().st_mtime_ns == before  # Sphinx reads an untouched file again only if it changed
    assert not (tmp_path / "torch-2.9.md").exists()


@pytest.mark.parametrize(
    ("old", "new", "crossed"),
    [
        ("2.8.0", "2.9.1", ["2.9"]),
        ("2.9.1", "2.8.0", ["2.9"]),  # either way round
        ("2.9.0", "2.9.1", []),  # a patch release crosses no boundary
        ("2.15.0", "2.16.0rc1", []),  # a pre-release goes by its release
        ("2.0.1", "2.2.2", ["2.1", "2.2"]),
    ],
)
def test_the_boundaries_between_two_versions(old, new, crossed):
    fake = registry.Registry()
    for n, (since, until) in enumerate([("2.1", None), (None, "2.2"), ("2.9", "2.13")], start=1):
        fake.clauses[f"X-{n}"] = registry.Clause(
            f"X-{n}", "x", 1, "MUST", "text", Version(since) if since else None, Version(until) if until else None
        )
    assert [str(v) for v in releases.between(old, new, fake) if v < Version("2.13")] == crossed


def test_citations_of_pytorch_issues_and_prs_become_links():
    text = (
        "(pytorch/pytorch#131665 and #132652), PR #121157, "
        "[#185953](https://github.com/pytorch/pytorch/pull/185953), pytorch/pytorch#131665 again, step #3"
    )
    assert releases.citations(text) == [
        (n, f"https://github.com/pytorch/pytorch/issues/{n}") for n in ("131665", "132652", "121157", "185953")
    ]
