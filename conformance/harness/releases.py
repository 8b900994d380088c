"""Release boundaries: the torch releases at which some clause starts or stops holding.

Each is a ``since`` or ``until`` value of a clause range (the one source of truth); the site has one
"What changed in torch X.Y" page per boundary (docs/_ext/releases.py), and the release check names the
pages of the boundaries between the two versions it compares. Plain Python (no Sphinx, no torch).
"""

from __future__ import annotations

import re

from packaging.version import Version

from . import registry as reg

# Where the pages of the boundaries live: docs/releases/torch-<X.Y>.md, generated at build time.
FOLDER = "docs/releases"
# The spec cites only pytorch/pytorch by number: "pytorch/pytorch#131665", "PR #121157", "[#185953](...)".
CITATION = re.compile(r"(?:(?<=pytorch/pytorch)|(?<![\w/]))#(\d{5,})\b")
GITHUB = "https://github.com/pytorch/pytorch/issues/{}"  # GitHub redirects an issue URL to a PR's page


def boundaries(registry: reg.Registry | None = None) -> list[Version]:
    """Every distinct ``since`` and ``until`` of the clauses' ranges, oldest first."""
    registry = registry or reg.default()
    found = {v for c in registry.clauses.values() for r in c.ranges for v in r if v is not None}
    return sorted(found)


def starting(version: Version, registry: reg.Registry | None = None) -> list[reg.Clause]:
    """The clauses that hold from this release on (a range's ``since`` == version)."""
    return [c for c in (registry or reg.default()).clauses.values() if any(s == version for s, _ in c.ranges)]


def stopping(version: Version, registry: reg.Registry | None = None) -> list[reg.Clause]:
    """The clauses that hold until this release, not on it (a range's ``until`` == version)."""
    return [c for c in (registry or reg.default()).clauses.values() if any(u == version for _, u in c.ranges)]


def between(old: str, new: str, registry: reg.Registry | None = None) -> list[Version]:
    """The boundaries crossed going from one torch to another (either way round): after the older, up to the newer."""
    low, high = sorted(Version(Version(v).base_version) for v in (old, new))
    return [b for b in boundaries(registry) if low < b <= high]


def docname(version: Version) -> str:
    """The page of a boundary, as Sphinx names it (no suffix): docs/releases/torch-2.9."""
    return f"{FOLDER}/torch-{version}"


def built_page(version: Version) -> str:
    """Where a boundary's page is once the site is built (nox -s docs builds it into _build/html)."""
    return f"_build/html/{docname(version)}.html"


def citations(text: str) -> list[tuple[str, str]]:
    """(number, URL) of every pytorch/pytorch issue or PR a clause's statement cites, in order, once each."""
    numbers = dict.fromkeys(CITATION.findall(text))
    return [(n, GITHUB.format(n)) for n in numbers]
