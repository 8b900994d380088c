"""Fingerprints: what decides each clause's recorded outcome, hashed, so that a change makes stale exactly the
clauses it can change, and a recorded outcome stays valid while its clause's fingerprint matches.

A clause's fingerprint covers

- the harness that runs and judges every test (``HARNESS``: the pytest plugin, its fixtures, the recorder, the
  manifest, the modes, the global-state guard, the outcome rules): a change there makes every clause
  stale;
- the clause itself: level, text, version range, devices, modes, needs-values, withdrawn;
- the examples (spec pages, errata) that name it;
- every test that names it, with what the test reaches: the module-level functions, classes and constants of its
  module it uses, and those of the harness modules it imports from (helpers, populations, op_db), followed name by
  name (``ast``), each with the module-level statements that run on import (``pytestmark`` ...) and the data files
  its module reads (``DATA``).

Sound first: code is compared as syntax trees (a comment or a moved line changes nothing), names are followed
wherever they appear (a local that shadows a module-level name still pulls it in), a whole module stands in for a
module used as a value, and a test whose clause marker is not written out (``clause(*ids)``) is tied to every clause
(``test_examples.py``: every clause an example names). ``check_item`` verifies, at collection, that every clause a
test is marked with is one its source names: a marker the analysis cannot see is an error, never "fresh".
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from . import registry as reg

SUITE_DIR = reg.ROOT / "conformance"
HARNESS_DIR = SUITE_DIR / "harness"
TESTS_DIR = SUITE_DIR / "tests"
# The harness that runs and judges every test, whole modules, with what they reach of other modules (results.py's
# build and merge, say, but not its validator, which decides no outcome).
HARNESS = tuple(
    [SUITE_DIR / "conftest.py"]
    + [
        HARNESS_DIR / f"{m}.py"
        for m in ("plugin", "recorder", "manifest", "modes", "state", "devices", "opdb_plugin", "outcomes")
    ]
)
# Files a module reads (they decide what its populations hold).
DATA = {HARNESS_DIR / "opdb.py": (HARNESS_DIR / "opdb_inplace.json",)}
EXAMPLES_MODULE = TESTS_DIR / "test_examples.py"
# Not followed: this module decides which outcomes are stale, never what one is (a change to it that should re-run
# everything is `nox -s conformance -- --all`).
UNFOLLOWED = {"conformance.harness.fingerprints"}
CLAUSE_ID = re.compile(reg.CLAUSE_ID_PATTERN)
LENGTH = 16  # hexadecimal digits kept: 64 bits


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()


@dataclass(eq=False)  # one per file (module() caches it): hashed by identity
class Module:
    """One Python module of the suite: its module-level names and the statements that run on import."""

    path: Path
    package: str  # "conformance.harness"
    tree: ast.Module
    names: dict[str, ast.stmt] = field(default_factory=dict)  # defined here
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # alias: (module, name or None)
    on_import: list[ast.stmt] = field(default_factory=list)  # not a definition: runs whenever the module is used
    star_imports: list[str] = field(default_factory=list)  # `from x import *`: any name of x may be used

    @classmethod
    def parse(cls, path: Path) -> Module:
        tree = ast.parse(read_source(path), str(path))
        package = ".".join(path.relative_to(reg.ROOT).with_suffix("").parts[:-1])
        module = cls(path, package, tree)
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                module.bind([stmt.name], stmt)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    # `import a.b` binds a; `import a.b as c` binds c to a.b
                    module.imports[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0],
                        None,
                    )
            elif isinstance(stmt, ast.ImportFrom):
                source = _absolute(stmt, package)
                for alias in stmt.names:
                    if alias.name == "*":
                        module.star_imports.append(source)
                    else:
                        module.imports[alias.asname or alias.name] = (source, alias.name)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and not _implicit(stmt):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                module.bind([name for target in targets for name in _bound(target)], stmt)
            elif not _docstring(stmt) and not _main_block(stmt):
                module.on_import.append(stmt)  # if, for, with, a call ... and pytestmark
        return module

    def bind(self, names: list[str], stmt: ast.stmt) -> None:
        """``stmt`` defines ``names``. A statement that binds no name (``TABLE[key] = x``, ``obj.attr = x``) or binds
        one again (``X = X[:-1]``, ``X += ...``) changes what earlier statements made: it runs whenever the module is
        used, as the other statements on import do, so that neither it nor the first definition is lost."""
        if not names or any(name in self.names for name in names):
            self.on_import.append(stmt)
        for name in names:
            self.names.setdefault(name, stmt)


def _bound(target: ast.expr) -> list[str]:
    """The names an assignment target binds: ``a``, ``a, (b, *c)``; none for ``t[k]`` or ``o.attr``, which change an
    object without binding a name."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _bound(element)]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return []


def read_source(path: Path) -> str:
    """The source of a module (one place, so that the tests can try an edit without making it)."""
    return path.read_text(encoding="utf-8")


def _absolute(stmt: ast.ImportFrom, package: str) -> str:
    if not stmt.level:
        return stmt.module or ""
    base = package.split(".")[: len(package.split(".")) - stmt.level + 1]
    return ".".join([*base, *([stmt.module] if stmt.module else [])])


def _implicit(stmt: ast.stmt) -> bool:
    """A module-level name pytest reads without any test naming it."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return any(isinstance(t, ast.Name) and t.id in ("pytestmark", "pytest_plugins") for t in targets)


def _main_block(stmt: ast.stmt) -> bool:
    """``if __name__ == "__main__":``: runs when the module is a program, never when it is imported."""
    test = getattr(stmt, "test", None)
    return (
        isinstance(stmt, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


@cache
def module(path: Path) -> Module:
    return Module.parse(path)


def module_path(dotted: str) -> Path | None:
    """The file of a module of this project (conformance.*), or None for any other (torch, pytest ...) and for
    UNFOLLOWED."""
    if (dotted != "conformance" and not dotted.startswith("conformance.")) or dotted in UNFOLLOWED:
        return None
    base = reg.ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@dataclass(frozen=True)
class Statement:
    """What one statement (or a whole module: "*") is and uses, read once."""

    digest: str  # of its syntax tree
    uses: tuple[tuple[str, tuple[str, ...]], ...]  # names, with the attributes read of them: ("populations", ("X",))
    clause_ids: frozenset[str]  # strings in it that are clause IDs
    computed_marker: bool  # it marks a clause with IDs that are not written out: clause(*ids)
    imports: tuple[tuple[str, str | None], ...] = ()  # what it imports inside (a function's own import): (module, name)


@cache
def statement(path: Path, key: str) -> Statement:
    mod = module(path)
    node = mod.tree if key == "*" else mod.on_import[int(key[8:-1])] if key.startswith("<module ") else mod.names[key]
    uses, ids, imports, computed = set(), set(), set(), False
    roots = set()  # the name a.b.c starts at: used as a, b of it, not as a value of its own
    # A whole module's own imports are followed by the names it uses of them (mod.imports), an import inside a
    # function (not a name of the module) as the whole module it imports.
    top = {id(stmt) for stmt in mod.tree.body if isinstance(stmt, (ast.Import, ast.ImportFrom))} if key == "*" else ()
    for sub in ast.walk(node):
        if id(sub) in top:
            continue
        elif isinstance(sub, ast.Attribute) and (chain := _chain(sub)):
            uses.add((chain[0], tuple(chain[1:])))
            roots.add(id(_root(sub)))
        elif isinstance(sub, ast.Name) and id(sub) not in roots:
            uses.add((sub.id, ()))
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            ids.update(CLAUSE_ID.findall(sub.value))
        elif isinstance(sub, ast.Call) and _is_clause_marker(sub.func):
            computed |= any(not (isinstance(a, ast.Constant) and isinstance(a.value, str)) for a in sub.args)
        elif isinstance(sub, ast.Import):
            imports.update((alias.name, None) for alias in sub.names)
        elif isinstance(sub, ast.ImportFrom):
            imports.update((_absolute(sub, mod.package), alias.name) for alias in sub.names)
    dump = ast.dump(node, annotate_fields=False)
    return Statement(_digest(dump), tuple(sorted(uses)), frozenset(ids), computed, tuple(sorted(imports)))


class Reach:
    """What a piece of code reaches in the project's modules: the statements (and data files) it depends on."""

    def __init__(self) -> None:
        self.reached: dict[tuple[Path, str], Statement] = {}
        self.data: dict[Path, str] = {}

    def digest(self) -> str:
        parts = [_label(*node) for node in self.reached]
        parts += [f"{_rel(p)}:{d}" for p, d in self.data.items()]
        return _digest(*sorted(parts))

    def visit(self, path: Path, key: str) -> None:
        """A statement of a module (or all of it: "*"), with what runs whenever the module is used, and everything
        its names reach."""
        todo = [(path, key)]
        while todo:
            node = todo.pop()
            if node in self.reached:
                continue
            self.reached[node] = statement(*node)
            for data in DATA.get(node[0], ()):
                self.data[data] = _data_digest(data)
            todo += _edges(*node)


@cache
def _edges(path: Path, key: str) -> tuple[tuple[Path, str], ...]:
    """The statements one statement leads to: those that run whenever its module is used, and what its names and
    imports stand for (read once: every test that reaches it shares them)."""
    stmt, mod = statement(path, key), module(path)
    found = [(path, f"<module {i}>") for i in range(len(mod.on_import))]
    for source in mod.star_imports:
        found += imported(source, "*", ())
    for name, attrs in stmt.uses:
        found += resolve(mod, name, attrs)
    for source, name in stmt.imports:
        found += imported(source, name, ())
    return tuple(dict.fromkeys(found))


@cache
def _label(path: Path, key: str) -> str:
    return f"{_rel(path)}:{key}:{statement(path, key).digest}"


@cache
def _data_digest(path: Path) -> str:
    return _digest(path.read_bytes())


@cache
def resolve(mod: Module, name: str, attrs: tuple[str, ...]) -> tuple[tuple[Path, str], ...]:
    """The statements a name used in a module stands for: its definition there, or in the project module it is
    imported from; a project module used as a value: all of it. Names of other packages (torch ...): none."""
    if name in mod.names:
        return ((mod.path, name),)
    if name not in mod.imports:
        return ()
    return imported(*mod.imports[name], attrs)


def imported(source: str, name: str | None, attrs: tuple[str, ...]) -> tuple[tuple[Path, str], ...]:
    """What ``from source import name`` (or ``import source``: name None) stands for, used as name.attrs."""
    if (path := module_path(f"{source}.{name}" if name else source)) is not None:  # a module
        return resolve(module(path), attrs[0], attrs[1:]) if attrs else ((path, "*"),)
    if name and name != "*" and (path := module_path(source)) is not None:  # a name defined in a module
        return resolve(module(path), name, attrs)
    if name == "*" and (path := module_path(source)) is not None:
        return ((path, "*"),)
    return ()


def _root(node: ast.Attribute) -> ast.AST:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


@cache
def _rel(path: Path) -> str:
    return path.relative_to(reg.ROOT).as_posix()


def _chain(node: ast.Attribute) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None when it does not start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


# -- the tests: which clauses each names, and what it reaches --


@dataclass(frozen=True)
class Unit:
    """A module-level test function or class of a test module."""

    path: Path
    name: str
    clauses: frozenset[str] | None  # the clause IDs it names; None: its marker is computed (tied to every clause)
    digest: str


def _named_clauses(path: Path, reach: Reach) -> frozenset[str] | None:
    """The clause IDs a test names: every string that is a clause ID in the code it reaches (over-approximate: an
    ID in a shared table ties the test to it too); None when its own module marks a clause with IDs that are not
    written out (``clause(*example.clauses)``)."""
    if any(p == path and s.computed_marker for (p, _), s in reach.reached.items()):
        return None
    return frozenset().union(*(s.clause_ids for s in reach.reached.values()))


def _is_clause_marker(func: ast.AST) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "clause") or (
        isinstance(func, ast.Name) and func.id == "clause"
    )


def _is_test(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test")) or (
        isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Test")
    )


@cache
def units() -> tuple[Unit, ...]:
    found = []
    for path in sorted(TESTS_DIR.glob("test_*.py")):
        mod = module(path)
        for stmt in mod.tree.body:
            if _is_test(stmt):
                reach = Reach()
                reach.visit(path, stmt.name)
                found.append(Unit(path, stmt.name, _named_clauses(path, reach), reach.digest()))
    return tuple(found)


def modules_of(clauses) -> set[Path]:
    """The test modules that hold tests of these clauses (and every module with a computed marker, tied to all)."""
    wanted = set(clauses)
    return {u.path for u in units() if u.clauses is None or u.clauses & wanted}


@cache
def harness_digest() -> str:
    reach = Reach()
    for path in HARNESS:
        reach.visit(path, "*")
    return reach.digest()


def clause_digest(clause: reg.Clause) -> str:
    """What of a clause decides its outcomes: everything but its evidence (why its level is what it is)."""
    c = clause
    meta = (c.id, c.page, c.level, " ".join(c.text.split()), str(c.since), str(c.until), c.needs_values)
    meta += (c.withdrawn, c.devices, c.modes, tuple(str(v) for v in c.also_on), c.details, c.scope)
    return repr(meta)


def compute(registry: reg.Registry | None = None) -> dict[str, str]:
    """{clause id: its fingerprint} for every clause of the registry."""
    registry = registry or reg.default()
    examples: dict[str, list[str]] = {}
    for e in registry.examples:
        for cid in e.clauses:
            examples.setdefault(cid, []).append(repr((e.page, e.clauses, e.code)))
    tests: dict[str, list[str]] = {cid: [] for cid in registry.clauses}
    for unit in units():
        if unit.clauses is not None:
            tied = unit.clauses
        elif unit.path == EXAMPLES_MODULE:
            tied = examples.keys()
        else:
            tied = registry.clauses.keys()
        for cid in tied:
            if cid in tests:
                tests[cid].append(f"{unit.path.name}::{unit.name}:{unit.digest}")
    harness = harness_digest()
    return {
        cid: _digest(harness, clause_digest(c), *sorted(examples.get(cid, [])), *sorted(tests[cid]))[:LENGTH]
        for cid, c in registry.clauses.items()
    }


@cache
def _units_by_name() -> dict[tuple[Path, str], Unit]:
    """units() by (module, name): check_item looks one up for every collected item (tens of thousands)."""
    return {(u.path, u.name): u for u in units()}


def clear() -> None:
    """Forget what was read: the next ``compute`` reads the files again (a run checks they did not change)."""
    for cached in (
        module,
        statement,
        resolve,
        units,
        _units_by_name,
        harness_digest,
        _edges,
        _label,
        _data_digest,
        _rel,
    ):
        cached.cache_clear()


def sources() -> dict[Path, tuple[int, int]]:
    """(modification time, size) of every file a fingerprint reads: the suite's modules and data, the spec pages and
    the errata. Cheap (no parsing): a run takes it as it starts and again before it writes; if it changed, what
    the tests ran is not what the fingerprints would say."""
    files = [*SUITE_DIR.rglob("*.py"), *(d for data in DATA.values() for d in data), *reg.SPEC_DIR.glob("*.md")]
    files += [p for p in (reg.SPEC_DIR.parent / "docs" / "errata.md", reg.SPEC_DIR.parent / "errata.md") if p.is_file()]
    found = {}
    for path in files:
        stat = path.stat()
        found[path] = (stat.st_mtime_ns, stat.st_size)
    return found


def check_item(item, clause_ids: list[str]) -> str | None:
    """Why the fingerprints cannot see a collected test's clause markers, or None when they can."""
    path = Path(str(item.path))
    name = getattr(getattr(item, "cls", None), "__name__", None) or getattr(item, "originalname", item.name)
    unit = _units_by_name().get((path, name))
    if unit is None:
        return f"{item.nodeid}: not a module-level test function or class of {path.name}; fingerprints cannot see it"
    if unit.clauses is None:
        return None
    if unseen := [cid for cid in clause_ids if cid not in unit.clauses]:
        return (
            f"{item.nodeid}: marked with {', '.join(unseen)}, which its source does not name; write the clause ID "
            "out in the test or a module-level name it uses, so that a change to the test makes the clause stale"
        )
    return None
