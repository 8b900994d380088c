"""Sphinx configuration for the torch-update-spec site (sources: spec/ and docs/)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(ROOT / "docs" / "_ext")]

project = "torch-update-spec"
author = "torch-update-spec contributors"
copyright = "2026, torch-update-spec contributors"

root_doc = "docs/index"
include_patterns = ["spec/**", "docs/**"]
exclude_patterns = ["_build", "docs/_ext/**"]

extensions = [
    "myst_parser",
    "sphinx_design",
    "sphinx_copybutton",
    "sphinx.ext.extlinks",
    "clauses",
    "matrix",
    "releases",
    "bad_input_table",
    "populations",
    "errata",
    "errata_lookup",
    "divergences",
    "errors",
    "diagrams",
    "spec_json",
]
myst_enable_extensions = ["colon_fence", "deflist", "substitution"]


def _sabotage_share() -> str:
    """'271 of 434': the MUST clauses some sabotage case breaks (tests/sabotage WITHOUT_CASE lists the others)."""
    from conformance.harness import registry
    from tests.sabotage import WITHOUT_CASE

    must = {c.id for c in registry.default().clauses.values() if c.level == "MUST" and not c.withdrawn}
    return f"{len(must - WITHOUT_CASE)} of {len(must)}"


myst_substitutions = {"sabotage_share": _sabotage_share()}
myst_heading_anchors = 3

# Links to the PyTorch API reference; extlinks need no network at build time (unlike intersphinx).
extlinks = {
    "torch": ("https://pytorch.org/docs/stable/generated/%s.html", "%s"),
}
extlinks_detect_hardcoded_links = False

# furo: maintained, accessible, readable tables and code on narrow screens, no JS framework to build.
html_theme = "furo"
html_title = "torch-update-spec"
html_favicon = "docs/_static/favicon.svg"  # else every page asks for /favicon.ico, a 404
html_static_path = ["docs/_static"]
html_extra_path = ["docs/_root"]  # index.html at the site root, redirecting to the landing page
html_css_files = ["clauses.css", "matrix.css", "releases.css"]
# your_torch.js: the "Your torch" page (docs/your_torch.md), nothing elsewhere; clause_fold.js: opens the fold a link
# lands in (docs/_ext/clauses.py, fold_page).
html_js_files = ["your_torch.js", "clause_fold.js"]
html_search_scorer = "docs/_static/scorer.js"  # clause IDs and pasted errors find their entry first
copybutton_prompt_text = r">>> |\.\.\. "
copybutton_prompt_is_regexp = True
smartquotes = False  # commands and flags (--device, --lf) must read as typed
