"""The built site's search, run as readers run it (Sphinx's searchtools.js, under Node.js): a clause ID finds that
clause first, and each error message of the landing page's lookup finds the page that explains it."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.harness import registry

ROOT = registry.ROOT
sphinx_build = pytest.importorskip("sphinx.cmd.build")  # a docs dependency, installed by nox -s tests


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once for this module (the docs build of nox -s tests builds it again, with -W)."""
    out = tmp_path_factory.mktemp("html")
    assert sphinx_build.build_main(["-q", "-b", "html", str(ROOT), str(out)]) == 0
    return out


def search(site: Path, queries: list[str]) -> list[list[list[str]]]:
    node = shutil.which("node")
    assert node, "these tests run the site's search with Node.js (node), which this machine lacks"
    done = subprocess.run(
        [node, str(ROOT / "tests" / "site_search.js"), str(site), json.dumps(queries)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_a_clause_id_finds_that_clause_first(site):
    ids = sorted(registry.default().clauses)
    for cid, results in zip(ids, search(site, ids), strict=True):
        assert results and results[0][1] == cid, f"{cid}: first results {results[:3]}"


def test_each_error_of_the_lookup_finds_the_page_that_explains_it_in_the_first_three(site):
    landing = (ROOT / "docs" / "index.md").read_text()
    entries = re.findall(r"^:::\{error-entry\} (.+)\n(?::(?!read:).*\n)*:read: [^`]*\{doc\}`/([\w/]+)`", landing, re.M)
    assert len(entries) >= 10
    for (message, page), results in zip(entries, search(site, [m for m, _ in entries]), strict=True):
        assert page in [docname for docname, _, _ in results[:3]], f"{message!r}: first results {results[:3]}"
