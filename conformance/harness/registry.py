"""The clause registry: every clause and example, read from the spec pages.

The spec pages (``spec/*.md``) are the single source of truth. A clause is a
MyST directive::

    :::{clause} DATA-1
    :level: MUST
    :since: 2.1
    :until: 2.4
    :needs: values

    The statement, in prose.
    :::

``since`` is inclusive and ``until`` exclusive (``until: 2.4`` = holds on every
release before 2.4). ``needs: values`` marks a clause about tensor values or
gradients, which the ``meta`` device (shapes only) cannot show; ``devices: meta``
limits a clause to the devices named. Elsewhere the clause is not-applicable. An example is a
``{example}`` directive holding a doctest; ``:clauses:`` names what it shows.

This module is plain Python (no Sphinx, no torch) so that both the pytest
plugin and the Sphinx extension can use it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = ROOT / "spec"

LEVELS = ("MUST", "SHOULD", "MAY", "UNSPECIFIED")
CLAUSE_ID = re.compile(r"^[A-Z][A-Z0-9]*-[1-9][0-9]*$")
OPTIONS = {"level", "since", "until", "needs", "devices", "withdrawn"}
DEVICES = ("cpu", "meta", "cuda", "mps")  # kept in step with harness.devices.KNOWN (no torch import here)

# A fenced directive: ``:::{name} argument`` (or backticks) up to its closing fence.
_DIRECTIVE = re.compile(
    r"^(?P<fence>:{3,}|`{3,})\{(?P<name>clause|example)\}[ \t]*(?P<arg>[^\n]*)\n"
    r"(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_OPTION = re.compile(r"^:(?P<key>[a-z]+):[ \t]*(?P<value>.*)$")


class SpecError(ValueError):
    """A spec page breaks the clause format; the message names page and line."""


@dataclass(frozen=True)
class Clause:
    id: str
    page: str  # stem of the spec page, e.g. "data"
    line: int
    level: str
    text: str
    since: Version | None = None
    until: Version | None = None
    needs_values: bool = False
    withdrawn: str | None = None
    devices: tuple[str, ...] = ()  # empty: every device

    @property
    def anchor(self) -> str:
        return self.id.lower()

    @property
    def url(self) -> str:
        return f"spec/{self.page}.md#{self.anchor}"

    @property
    def normative(self) -> bool:
        return self.level != "UNSPECIFIED" and self.withdrawn is None

    def applies_to(self, torch_version: str) -> bool:
        """Whether the clause's version range covers this torch (local tags and pre-releases ignored)."""
        release = Version(Version(torch_version).base_version)
        if self.since is not None and release < self.since:
            return False
        return self.until is None or release < self.until

    def excludes_device(self, device: str) -> str | None:
        """Why this clause says nothing about the device, or None when it applies there."""
        if self.devices and device not in self.devices:
            return f"clause is about {', '.join(self.devices)} only"
        if self.needs_values and device == "meta":
            return "clause needs values; meta tensors have none"
        return None

    def range_text(self) -> str:
        parts = []
        if self.since:
            parts.append(f"since {self.since}")
        if self.until:
            parts.append(f"until {self.until} (exclusive)")
        return ", ".join(parts) or "all versions"


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    clauses: tuple[str, ...]
    code: str

    @property
    def name(self) -> str:
        return f"{self.page}.md:{self.line}"


@dataclass
class Registry:
    clauses: dict[str, Clause] = field(default_factory=dict)
    examples: list[Example] = field(default_factory=list)

    def pages(self) -> list[str]:
        return sorted({c.page for c in self.clauses.values()})


def _options(body: str, where: str) -> tuple[dict[str, str], str]:
    opts: dict[str, str] = {}
    lines = body.splitlines()
    while lines and (m := _OPTION.match(lines[0])):
        if m["key"] in opts:
            raise SpecError(f"{where}: option :{m['key']}: given twice")
        opts[m["key"]] = m["value"].strip()
        lines.pop(0)
    return opts, "\n".join(lines).strip()


def _version(value: str, where: str) -> Version:
    try:
        return Version(value)
    except ValueError:
        raise SpecError(f"{where}: {value!r} is not a version") from None


def parse_page(path: Path) -> tuple[list[Clause], list[Example]]:
    text = path.read_text(encoding="utf-8")
    clauses, examples = [], []
    for m in _DIRECTIVE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        where = f"spec/{path.name}:{line}"
        opts, body = _options(m["body"], where)
        arg = m["arg"].strip()
        if m["name"] == "example":
            ids = tuple(opts.pop("clauses", "").split())
            if not ids or opts:
                raise SpecError(f"{where}: an example takes exactly one option, :clauses: ID ...")
            examples.append(Example(path.stem, line, ids, body + "\n"))
            continue
        if not CLAUSE_ID.match(arg):
            raise SpecError(f"{where}: {arg!r} is not a clause ID like DATA-1")
        if unknown := set(opts) - OPTIONS:
            raise SpecError(f"{where}: unknown option(s) {sorted(unknown)}; allowed {sorted(OPTIONS)}")
        level = opts.get("level", "")
        if level not in LEVELS:
            raise SpecError(f"{where}: {arg} needs :level: one of {', '.join(LEVELS)}")
        needs = opts.get("needs")
        if needs not in (None, "values"):
            raise SpecError(f"{where}: :needs: can only be 'values'")
        since = _version(opts["since"], where) if "since" in opts else None
        until = _version(opts["until"], where) if "until" in opts else None
        devices = tuple(opts.get("devices", "").split())
        if unknown_devices := set(devices) - set(DEVICES):
            raise SpecError(f"{where}: unknown device(s) {sorted(unknown_devices)} in :devices:")
        if since and until and since >= until:
            raise SpecError(f"{where}: empty range since {since} until {until}")
        if not body:
            raise SpecError(f"{where}: {arg} has no statement")
        clauses.append(
            Clause(arg, path.stem, line, level, body, since, until, needs == "values", opts.get("withdrawn"), devices)
        )
    return clauses, examples


def load(spec_dir: Path = SPEC_DIR) -> Registry:
    """Read every spec page. Raises SpecError on a malformed clause or a duplicated ID."""
    registry = Registry()
    for path in sorted(spec_dir.glob("*.md")):
        clauses, examples = parse_page(path)
        for clause in clauses:
            if clause.id in registry.clauses:
                first = registry.clauses[clause.id]
                raise SpecError(
                    f"clause {clause.id} is defined twice: spec/{first.page}.md:{first.line} "
                    f"and spec/{clause.page}.md:{clause.line}"
                )
            registry.clauses[clause.id] = clause
        registry.examples.extend(examples)
    for example in registry.examples:
        for cid in example.clauses:
            if cid not in registry.clauses:
                raise SpecError(f"spec/{example.name}: example names unknown clause {cid}")
    return registry


@functools.cache
def default() -> Registry:
    return load()
