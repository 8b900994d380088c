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
release before 2.4). ``also-on: 2.1`` adds a release series outside that range where
the clause holds too (a behaviour that stopped and came back). ``needs: values`` marks
a clause about tensor values or gradients, which the ``meta`` device (shapes only)
cannot show; ``devices: meta`` limits a clause to the devices named, ``modes: eager``
(or ``compile``, ``inductor``, or several) to those modes (harness/modes.py; without it: eager and
compile). Elsewhere the clause is not-applicable. An example is a
``{example}`` directive holding a doctest; ``:clauses:`` names what it shows.

Options go right below the directive line; a directive ends at a line holding
just its own fence (``:::`` or longer, or backticks), so its body may hold
fenced blocks with another fence. Any mistake (an unclosed directive, an
unknown or misplaced option, a bad value) is a ``SpecError`` naming
``spec/<page>.md:<line>``.

This module is plain Python (no Sphinx, no torch) so that both the pytest
plugin and the Sphinx extension can use it.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
# The spec pages: spec/ of a clone, or their copy inside the installed package (pyproject.toml, force-include).
SPEC_DIR = next((d for d in (ROOT / "conformance" / "spec", ROOT / "spec") if d.is_dir()), ROOT / "spec")

LEVEL_MEANING = {
    "MUST": "torch guarantees it: its docs, its own tests or its deprecation policy treat it as contract",
    "OBSERVED": "torch does it on every release where the clause is in range, checked as strictly as MUST, but it "
    "pins an implementation detail (see its detail) that torch may change without notice",
    "SHOULD": "recommended use; its tests show what goes wrong otherwise",
    "MAY": "allowed; its tests show it works",
    "UNSPECIFIED": "varies or is undocumented: each release's behaviour is recorded, never judged",
}
LEVELS = tuple(LEVEL_MEANING)
# OBSERVED: what torch does on purpose-recorded releases but does not promise; checked per release like MUST, shown
# and reported as an observation. Its :detail: names which implementation details it pins, each for this reason:
DETAILS = {
    "node-name": "the class name of a grad_fn node: generated from tools/autograd/derivatives.yaml, listed in no "
    "torch doc, and renamed across releases (AsStridedBackward1 on 2.1 where later releases give "
    "AsStridedBackward0, SET-97; CompiledFunctionBackward under torch.compile, OOP-90)",
    "version-count": "the size of a _version increase: the docs of torch.autograd.graph.increment_version say that "
    "incrementing the counter several times for one in-place operation is not problematic, and a compiled step "
    "adds 2 where eager adds 1 (VERSION-96)",
    "compiled": "what a compiled step does where eager does otherwise: torch.compile is meant to keep eager "
    "semantics, so each such difference is a behaviour of one compiler layer, not a promise",
    "fixed-bug": "what torch did until a release changed it as a bug fix: true on the releases of its range, and "
    "the behaviour after the fix is a clause of its own",
    "message": "the whole text of an error message, beyond the fragment that stays stable across releases",
    "undocumented": "what torch does where no doc, no test of torch's and no maintainer's word says it must: "
    "found by running it, and free to change without notice",
}
# The tensors a clause is about unless its :scope: says otherwise (a kinds population its tests run, or words).
DEFAULT_SCOPE = (
    "the tensors its tests build: float32 unless it names other dtypes; of shape (2,), (3,) or (2, 2) unless it or "
    "its population names other shapes; contiguous; not a view unless it names views; made with grad mode on"
)
CLAUSE_ID_PATTERN = r"[A-Z][A-Z0-9]*-[1-9][0-9]*"  # one clause ID, e.g. DATA-1 (inside other patterns too)
CLAUSE_ID = re.compile(f"^{CLAUSE_ID_PATTERN}$")
OPTIONS = {
    "level",
    "detail",
    "evidence",
    "scope",
    "since",
    "until",
    "also-on",
    "needs",
    "devices",
    "modes",
    "withdrawn",
}
EXAMPLE_OPTIONS = {"clauses"}
DEVICES = ("cpu", "meta", "cuda", "mps")  # kept in step with harness.devices.KNOWN (no torch import here)
# harness.modes: the update step as written, through torch.compile(backend="aot_eager") (``compile``: the backend the
# compiled clauses were written for, and the one that attributes a divergence to Dynamo or AOTAutograd), or through
# the default backend users get, inductor.
# Each mode: the torch.compile backend it runs the update step through (None: as written), and its word in a clause's
# status line ("Recorded: ... Compiled: ...").
MODE_TABLE = {"eager": (None, "eager"), "compile": ("aot_eager", "compiled"), "inductor": ("inductor", "inductor")}
MODES = tuple(MODE_TABLE)
# The modes of a clause without ``:modes:``: all three. Where a test's compiled step does something else with one
# backend before some release, its ``compiled_since`` mark names the backend's mode (harness/modes.CompiledSince).
DEFAULT_MODES = MODES
COMPILED_MODES = ("compile", "inductor")
BACKENDS = {mode: backend for mode, (backend, _) in MODE_TABLE.items() if backend}
MODE_WORDS = {mode: word for mode, (_, word) in MODE_TABLE.items()}


def listed(option: str, requested: str, known: tuple[str, ...], error: type[Exception]) -> list[str]:
    """The names a comma-separated option value lists (``--device cpu,meta``, ``--mode eager,compile``); ``error``
    in one line for a list naming nothing, a name with spaces in it, a name given twice, or one not in ``known``."""
    chosen = requested.split(",")
    noun = option.removeprefix("--")
    if not any(name.strip() for name in chosen):
        raise error(f"{option} {requested!r} names no {noun}; give e.g. {option} {','.join(known[:2])}")
    for name in chosen:
        if name != name.strip() or not name:
            raise error(f"{option} {requested!r}: {name!r} is no {noun} name (no spaces, no empty names)")
        if name not in known:
            raise error(f"unknown {noun} {name!r}; known {noun}s: {', '.join(known)}")
        if chosen.count(name) > 1:
            raise error(f"{option} {requested!r} names {noun} {name} twice")
    return chosen


# A directive's opening line, ``:::{name} argument`` (or backticks); it ends at a line holding just the same fence.
_OPENING = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[\w-]+)\}[ \t]*(?P<arg>.*)$")
_OPTION = re.compile(r"^:(?P<key>[A-Za-z][\w-]*):[ \t]*(?P<value>.*)$")


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
    modes: tuple[str, ...] = ()  # empty: DEFAULT_MODES, those its tests take part in
    also_on: tuple[Version, ...] = ()  # release series (2.1 = every 2.1.x) outside since/until where it holds too
    details: tuple[str, ...] = ()  # OBSERVED only: the implementation details it pins, keys of DETAILS
    scope: str | None = None  # the tensors it is about; None: DEFAULT_SCOPE
    # What justifies its level: a torch doc section, a torch test, an issue or a source comment (markdown). Not part of
    # its fingerprint (harness/fingerprints.clause_digest): the reason for a level decides no outcome.
    evidence: str | None = None

    @property
    def anchor(self) -> str:
        return self.id.lower()

    @property
    def url(self) -> str:
        return f"spec/{self.page}.md#{self.anchor}"

    @property
    def scope_text(self) -> str:
        return self.scope or DEFAULT_SCOPE

    @property
    def normative(self) -> bool:
        return self.level != "UNSPECIFIED" and self.withdrawn is None

    @property
    def ranges(self) -> tuple[tuple[Version | None, Version | None], ...]:
        """Every (since, until) range where the clause holds: its own, then one per ``also-on`` series."""
        return ((self.since, self.until), *((v, next_minor(v)) for v in self.also_on))

    @property
    def ranged(self) -> bool:
        return self.ranges != ((None, None),)

    def applies_to(self, torch_version: str) -> bool:
        """Whether one of the clause's version ranges covers this torch (local tags and pre-releases ignored)."""
        release = Version(Version(torch_version).base_version)
        return any(in_range(release, since, until) for since, until in self.ranges)

    def excludes_device(self, device: str) -> str | None:
        """Why this clause says nothing about the device, or None when it applies there."""
        if self.devices and device not in self.devices:
            return f"clause is about {', '.join(self.devices)} only"
        if self.needs_values and device == "meta":
            return "clause needs values; meta tensors have none"
        return None

    def excludes_mode(self, mode: str) -> str | None:
        """Why this clause says nothing about the mode, or None when it may apply there."""
        if self.modes and mode not in self.modes:
            return f"clause is about {', '.join(self.modes)} mode only"
        return None

    @property
    def compiled_only(self) -> bool:
        """A clause about compiled modes only: what a compiled step does where it departs from eager."""
        return bool(self.modes) and "eager" not in self.modes

    def range_text(self) -> str:
        parts = []
        if self.since:
            parts.append(f"since {self.since}")
        if self.until:
            parts.append(f"until {self.until} (exclusive)")
        also = "".join(f", and on {v}" for v in self.also_on)
        return (", ".join(parts) or "all versions") + also


def in_range(release: Version, since: Version | None, until: Version | None) -> bool:
    return (since is None or release >= since) and (until is None or release < until)


def next_minor(series: Version) -> Version:
    return Version(f"{series.major}.{series.minor + 1}")


@dataclass(frozen=True)
class Example:
    page: str  # the stem of its page: a spec page, or "errata" for an erratum's corrected snippet
    line: int
    clauses: tuple[str, ...]
    code: str

    @property
    def name(self) -> str:
        return f"{self.page}.md:{self.line}"

    @property
    def path(self) -> str:
        """Its page in a clone."""
        return "docs/errata.md" if self.page == "errata" else f"spec/{self.page}.md"


@dataclass
class Registry:
    clauses: dict[str, Clause] = field(default_factory=dict)
    examples: list[Example] = field(default_factory=list)

    def pages(self) -> list[str]:
        return sorted({c.page for c in self.clauses.values()})

    def of_page(self, page: str, clause_ids) -> list[str]:
        """Those of ``clause_ids`` defined on ``page``: an example there illustrates them (the site links it from
        elsewhere); it only mentions the others."""
        return [cid for cid in clause_ids if cid in self.clauses and self.clauses[cid].page == page]


Body = list[tuple[int, str]]  # (line number, text) of each line between a directive's fences
Options = dict[str, tuple[str, int]]  # option -> (value, line number)


def read_page(path: Path, page: str, error: type[Exception] = SpecError) -> str:
    """The text of a spec page (or the errata); a page that cannot be read as UTF-8 text raises ``error`` in one line:
    a folder or a dangling link named like a page, bytes that are not UTF-8, a file without read permission."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise error(f"{page}:{line}: not UTF-8 text (byte {exc.object[exc.start : exc.start + 1]!r})") from None
    except OSError as exc:
        why = "a folder, not a page" if path.is_dir() else "a dangling symbolic link" if path.is_symlink() else None
        raise error(f"{page}: cannot read: {why or exc.strerror or exc}") from None


def directives(text: str, page: str, names: tuple[str, ...], error: type[Exception] = SpecError):
    """Yield (name, argument, line, body) of each directive of a page named in ``names`` (MyST fences of colons or
    backticks); one that is not closed before the end of the page, or before another of ``names`` or its own fence
    opens, raises ``error`` naming the line. Read here for spec pages and the errata."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _OPENING.match(lines[i])
        i += 1
        if not m or m["name"] not in names:
            continue
        start, fence, body = i, m["fence"], []
        unclosed = f"{page}:{start}: {m['name']} {m['arg'].strip()}".rstrip() + f" is not closed: no {fence!r} line"
        while i < len(lines) and lines[i].rstrip(" \t") != fence:
            inner = _OPENING.match(lines[i])
            if inner and (inner["name"] in names or inner["fence"] == fence):
                raise error(f"{unclosed} before the next directive (line {i + 1})")
            body.append((i + 1, lines[i]))
            i += 1
        if i == len(lines):
            raise error(f"{unclosed} before the end of the file")
        i += 1
        yield m["name"], m["arg"].strip(), start, body


def _options(body: Body, allowed: set[str], page: str) -> tuple[Options, str]:
    """Split a body into its options (the lines right below the directive line) and its text."""
    opts: Options = {}
    k = 0
    while k < len(body) and (m := _OPTION.match(body[k][1])):
        n, key = body[k][0], m["key"]
        if key not in allowed:
            close = difflib.get_close_matches(key.lower(), sorted(allowed), n=1)
            hint = f" (did you mean :{close[0]}:?)" if close else ""
            known = " ".join(f":{o}:" for o in sorted(allowed))
            raise SpecError(f"{page}:{n}: unknown option :{key}:{hint}; known: {known}")
        if key in opts:
            raise SpecError(f"{page}:{n}: option :{key}: given twice (first at line {opts[key][1]})")
        opts[key] = (m["value"].strip(), n)
        k += 1
    for n, line in body[k:]:
        if m := _OPTION.match(line):
            raise SpecError(
                f"{page}:{n}: option :{m['key']}: after the statement started; "
                "options go right below the directive line"
            )
    return opts, "\n".join(line for _, line in body[k:]).strip()


def _version(opts: Options, key: str, page: str) -> Version | None:
    if key not in opts:
        return None
    value, n = opts[key]
    try:
        return Version(value)
    except ValueError:
        raise SpecError(f"{page}:{n}: :{key}: {value!r} is not a version like 2.1") from None


def _clause(arg: str, line: int, body: Body, page: str, stem: str) -> Clause:
    if not CLAUSE_ID.match(arg):
        raise SpecError(f"{page}:{line}: {arg!r} is not a clause ID like DATA-1")
    opts, text = _options(body, OPTIONS, page)
    at = {key: f"{page}:{n}" for key, (_, n) in opts.items()}
    level = opts.get("level", ("",))[0]
    if level not in LEVELS:
        got = f" (got {level!r})" if "level" in opts else ""
        raise SpecError(f"{at.get('level', f'{page}:{line}')}: {arg} needs :level: one of {', '.join(LEVELS)}{got}")
    needs = opts.get("needs", (None,))[0]
    if needs not in (None, "values"):
        raise SpecError(f"{at['needs']}: :needs: can only be 'values' (got {needs!r})")
    since, until = _version(opts, "since", page), _version(opts, "until", page)
    if since and until and since >= until:
        raise SpecError(f"{at['until']}: empty range: since {since} is not before until {until}")
    also_on = _also_on(opts, since, until, page)
    devices = tuple(opts.get("devices", ("",))[0].split())
    if "devices" in opts and not devices:
        raise SpecError(f"{at['devices']}: :devices: names no device; name one or more of {', '.join(DEVICES)}")
    if unknown := sorted(set(devices) - set(DEVICES)):
        raise SpecError(f"{at['devices']}: unknown device(s) {', '.join(unknown)}; known: {', '.join(DEVICES)}")
    modes = tuple(opts.get("modes", ("",))[0].split())
    if "modes" in opts and not modes:
        raise SpecError(f"{at['modes']}: :modes: names no mode; name one of {', '.join(MODES)}")
    if unknown := sorted(set(modes) - set(MODES)):
        raise SpecError(f"{at['modes']}: unknown mode(s) {', '.join(unknown)}; known: {', '.join(MODES)}")
    details = tuple(opts.get("detail", ("",))[0].replace(",", " ").split())
    if (level == "OBSERVED") != bool(details):
        where = at.get("detail", at.get("level", f"{page}:{line}"))
        raise SpecError(
            f"{where}: :detail: goes with :level: OBSERVED, and OBSERVED needs it (one or more of {', '.join(DETAILS)})"
        )
    if unknown := sorted(set(details) - set(DETAILS)):
        raise SpecError(f"{at['detail']}: unknown detail(s) {', '.join(unknown)}; known: {', '.join(DETAILS)}")
    scope = opts.get("scope", (None,))[0]
    if scope == "":
        raise SpecError(f"{at['scope']}: :scope: needs the tensors the clause is about")
    evidence = opts.get("evidence", (None,))[0]
    if evidence == "":
        raise SpecError(f"{at['evidence']}: :evidence: needs what justifies the level (a doc, a test, an issue)")
    withdrawn = opts.get("withdrawn", (None,))[0]
    if withdrawn == "":
        raise SpecError(f"{at['withdrawn']}: :withdrawn: needs a reason")
    if not text:
        raise SpecError(f"{page}:{line}: {arg} has no statement")
    return Clause(
        arg,
        stem,
        line,
        level,
        text,
        since,
        until,
        needs == "values",
        withdrawn,
        devices,
        modes,
        also_on,
        details,
        scope,
        evidence,
    )


def _also_on(opts: Options, since: Version | None, until: Version | None, page: str) -> tuple[Version, ...]:
    """The ``also-on`` release series: each a major.minor outside the clause's own range."""
    if "also-on" not in opts:
        return ()
    value, n = opts["also-on"]
    series = []
    for word in value.replace(",", " ").split() or [""]:
        try:
            v = Version(word)
        except ValueError:
            raise SpecError(f"{page}:{n}: :also-on: {word!r} is not a release series like 2.1") from None
        if len(v.release) != 2:
            raise SpecError(f"{page}:{n}: :also-on: {word!r} is not a release series like 2.1 (no patch number)")
        if in_range(v, since, until):
            raise SpecError(f"{page}:{n}: :also-on: {word} is inside the clause's own range already")
        series.append(v)
    return tuple(sorted(set(series)))


def _example(arg: str, line: int, body: Body, page: str, stem: str) -> Example:
    opts, code = _options(body, EXAMPLE_OPTIONS, page)
    if arg:
        raise SpecError(f"{page}:{line}: an example takes no argument (got {arg!r}); name its clauses in :clauses:")
    ids = tuple(opts.get("clauses", ("",))[0].split())
    if not ids:
        raise SpecError(f"{page}:{line}: an example needs :clauses: ID ... right below the directive line")
    if not code:
        raise SpecError(f"{page}:{line}: example has no code")
    return Example(stem, line, ids, code + "\n")


def parse_page(path: Path) -> tuple[list[Clause], list[Example]]:
    page = f"spec/{path.name}"
    clauses, examples = [], []
    for name, arg, line, body in directives(read_page(path, page), page, ("clause", "example")):
        if name == "clause":
            clauses.append(_clause(arg, line, body, page, path.stem))
        else:
            examples.append(_example(arg, line, body, page, path.stem))
    return clauses, examples


def errata_examples(spec_dir: Path) -> list[Example]:
    """The corrected snippets of the errata that go with these spec pages (docs/errata.md of a clone,
    conformance/errata.md of the package), each an example of the clauses its entry shows; none without errata."""
    from . import errata

    path = next(
        (p for p in (spec_dir.parent / "docs" / "errata.md", spec_dir.parent / "errata.md") if p.is_file()), None
    )
    if path is None:
        return []
    entries = errata.load(path).values()
    # line - 1: the line before the first code line, as for an {example} (whose line is its directive's)
    return [Example("errata", e.snippet_line - 1, e.shows, e.snippet + "\n") for e in entries if e.snippet]


def load(spec_dir: Path = SPEC_DIR) -> Registry:
    """Read every spec page and the errata's corrected snippets. Raises SpecError on a malformed clause or a
    duplicated ID."""
    registry = Registry()
    for path in sorted(spec_dir.glob("*.md")):
        clauses, examples = parse_page(path)
        for clause in clauses:
            if clause.id in registry.clauses:
                first = registry.clauses[clause.id]
                raise SpecError(
                    f"spec/{clause.page}.md:{clause.line}: clause {clause.id} is defined twice "
                    f"(first at spec/{first.page}.md:{first.line})"
                )
            registry.clauses[clause.id] = clause
        registry.examples.extend(examples)
    registry.examples.extend(errata_examples(spec_dir))
    for example in registry.examples:
        for cid in example.clauses:
            if cid not in registry.clauses:
                raise SpecError(f"{example.path}:{example.line + 1}: example names unknown clause {cid}")
    return registry


@functools.cache
def default() -> Registry:
    return load()
