"""A clause never says more than its tests run: each quantifying clause names what it ranges over.

A clause whose text says every/any/all/each/always/never/whatever either
- names a population of conformance/harness/populations.py, shows it on its page
  (``:::{population} NAME``) and has a test that runs over it; or
- refers to a clause that does ("any spelling of {clause}`DETACH-4`"); or
- lists its members in its own text (ENUMERATED below: the test runs each listed member); or
- does not quantify over a set of cases at all (NOT_QUANTIFIED below, with the reason).
These checks read sources only (no torch).
"""

import ast
import functools
import re
from pathlib import Path

import pytest

from conformance.harness import kinds, populations  # noqa: F401 - kinds adds TENSOR_KINDS to populations.ALL
from conformance.harness import registry as reg

QUANTIFIER = re.compile(r"\b(every|any|all|each|always|never|whatever|whichever)\b", re.IGNORECASE)
CLAUSE_REF = re.compile(r"\{clause\}`([A-Z][A-Z0-9]*-\d+)`")

# The clause lists its members itself; its tests run every member listed (checked by reading them).
ENUMERATED: dict[str, str] = {
    "DTENSOR-27": "the two updates it names (copy_, zero_), each with grad mode and under no_grad; the test runs "
    "NO_SHARDING_STRATEGY, those two, in both",
    "DTENSOR-28": "the three updates it names (add_, mul_, zero_); the test runs those three",
    "DTENSOR-29": "the three updates it names (add_, mul_, zero_); the test runs those three",
    "DTENSOR-33": "the two ranks of its mesh; the test checks each rank's shard and sum",
    "DTENSOR-34": "the two ranks of the mesh of DTENSOR-33; the test checks each rank's shard and sum",
    "COPY-1": "its five sources; the test runs SOURCES, the same five",
    "COPY-3": "the sources of COPY-1; the test runs SOURCES, the same five",
    "COPY-90": "the sources of COPY-1; the test (that of COPY-3) runs SOURCES, the same five",
    "INDEX-61": "the spellings INDEX-60 lists (torch.where with a tensor, a 0-d tensor, a number; "
    "masked_fill); the test runs WHERE, those four",
    "NOGRAD-92": "the nine updates it lists; the test runs UPDATES, those nine",
    "NEW-10": "the shapes (), (1,), (1, 1); the test runs them and (1, 1, 1)",
    "REQGRAD-5": "six floating and complex dtypes, three spellings, five integer and bool dtypes; the tests "
    "run GRAD_DTYPES x the three spellings, and INT_DTYPES + GRAD_DTYPES",
    "REQGRAD-90": "the six floating and complex dtypes of REQGRAD-5; the test runs GRAD_DTYPES, those six",
    "VERSION-15": "the six operations it gives call counts for; the test runs PACKED, those six",
    "VERSION-64": "three aliases and four writes; the test runs all twelve pairs",
    "FUNC-1": (
        "'each named parameter' is the replacements the clause lists (the weight alone; the weight and the "
        "bias, every parameter of the nn.Linear), with args as a tuple and as a single tensor; the test runs "
        "all four"
    ),
    "LOADSD-10": (
        "'whatever the state dict's tensor had' ranges over requires_grad True/False of the two kinds the "
        "clause names (a plain tensor, an nn.Parameter): the test runs all four, each with the module's "
        "requires_grad True and False; 'every release of the window' is the run matrix"
    ),
    "PUPD-6": (
        "'each of them' is the three cases the clause lists (one plain step, one with weight_decay, two with "
        "momentum); the test runs all three and asserts p.grad after every step"
    ),
    "SET-1": "lists its cases: s, s.t() and s[1:], and the four shapes of x; the test runs all twelve combinations",
    "SET-4": (
        "'each' is the three forms the clause lists (set_(storage), set_(storage, offset, size, stride), "
        "set_()); the test checks the version of each"
    ),
    "FWAD-2": "the updates of FWAD-1, listed there; the test runs UPDATES, the same fourteen",
    "INPLACE-24": "the ten updates it lists, on the four dtypes it names; the test runs PROMOTING_UPDATES, those ten, "
    "on each dtype",
    "INPLACE-25": "the updates and dtypes of INPLACE-24; the test runs PROMOTING_UPDATES on each dtype",
}

# The quantifier word does not range over cases a test would have to enumerate.
NOT_QUANTIFIED: dict[str, str] = {
    "COMPILE-9": "'all' is inside the quoted error message ('Please convert all Tensors to FakeTensors first')",
    "INFER-8": "'all ones' describes the values of one gradient, asserted for both operations listed",
    "VERSION-10": "'all ones' describes the values of one gradient, asserted for the three operations listed",
    "VERSION-62": "'every release run' refers to the recorded runs of this UNSPECIFIED clause; "
    "its three operations run",
    "VIEW-17": "'every output' means all outputs of the one call, each checked; the bases, operations (VIEW-14) and "
    "spellings (VIEW-15) it refers to are listed there and all run",
    "FUNC-9": (
        "'at every access' is a property of repeated access, which the test exercises (three accesses, three "
        "distinct tensors)"
    ),
    "GRAD-65": (
        "'each backward()' is a property of repeated backward passes: the test runs two and checks the hook "
        "was called once per pass, with p, after the accumulation"
    ),
    "LOADSD-5": (
        "'when all keys match' describes one state (the state dict's keys are the module's), not a set of cases"
    ),
    "NOGRAD-17": (
        "'at each step' is a property of the repeated training step, which the test runs three times, "
        "asserting the gradient and the value after each"
    ),
    "SWAP-5": (
        "'every release of the window' is the run matrix of the suite (the range :since: 2.4 states it), not "
        "a set of cases"
    ),
    "VAR-1": (
        "'any call torch.Variable(...)' fails at the attribute lookup, before the call and its arguments are "
        "evaluated: one lookup decides every call; the test runs the lookup and two calls"
    ),
}


def _named(clause) -> list[str]:
    return [name for name in populations.ALL if re.search(rf"\b{name}\b", clause.text)]


@functools.cache
def _test_sources() -> dict[str, list[str]]:
    """Clause id -> the source each of its tests reaches: the function, its decorators, and the module-level
    assignments and helper functions of the names it uses (``WRITES = [... INPLACE_SPELLINGS ...]``)."""
    sources: dict[str, list[str]] = {}
    for path in sorted((reg.ROOT / "conformance" / "tests").glob("test_*.py")):
        src = path.read_text()
        tree = ast.parse(src)
        lines = src.splitlines()

        def segment(node, lines=lines) -> str:
            # Whole lines: ast.get_source_segment splits the file again on each call (10 s over the suite).
            return "\n".join(lines[node.lineno - 1 : node.end_lineno])

        assigned = {
            target.id: segment(node)
            for node in tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        # and the module's helper functions it calls (``_member(m, device)`` draws from OPDB_INPLACE)
        assigned |= {node.name: segment(node) for node in tree.body if isinstance(node, ast.FunctionDef)}
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test"):
                continue
            text = "\n".join(segment(d) for d in node.decorator_list)
            text += segment(node)
            used = {n.id for d in [node, *node.decorator_list] for n in ast.walk(d) if isinstance(n, ast.Name)}
            reach = text + "\n".join(assigned[name] for name in used if name in assigned)
            for marker in node.decorator_list:
                # @pytest.mark.clause(...), also as a parameter's mark, and by_mode("EAGER-ID", "COMPILED-ID", ...)
                for call in ast.walk(marker):
                    if not isinstance(call, ast.Call):
                        continue
                    name = ast.unparse(call.func)
                    ids = (
                        call.args if name.endswith("mark.clause") else call.args[:2] if name.endswith("by_mode") else []
                    )
                    for arg in ids:
                        sources.setdefault(ast.literal_eval(arg), []).append(reach)
    return sources


def _clauses():
    return [c for c in reg.default().clauses.values() if not c.withdrawn and QUANTIFIER.search(c.text)]


def _covered(clause, seen=()) -> bool:
    """The clause names a population, or refers to a clause that (in turn) does."""
    if _named(clause):
        return True
    clauses = reg.default().clauses
    return any(
        ref not in seen and ref in clauses and _covered(clauses[ref], (*seen, clause.id))
        for ref in CLAUSE_REF.findall(clause.text)
    )


@pytest.mark.parametrize("clause", _clauses(), ids=lambda c: c.id)
def test_quantifying_clause_says_what_it_ranges_over(clause):
    # An exemption stands beside a reference to a clause that names a population (REQGRAD-90 lists its dtypes and
    # also cites REQGRAD-6), never beside a population the clause names itself, nor in both lists.
    listed = [clause.id in ENUMERATED, clause.id in NOT_QUANTIFIED]
    assert sum(listed) + bool(_named(clause)) <= 1 and (any(listed) or _covered(clause)), (
        f"{clause.id} ({clause.page}.md:{clause.line}) quantifies: name a population of "
        "conformance/harness/populations.py, refer to a clause that does, or list it in exactly one of "
        "ENUMERATED / NOT_QUANTIFIED with the reason"
    )


@pytest.mark.parametrize("clause", [c for c in _clauses() if _named(c)], ids=lambda c: c.id)
def test_named_population_is_shown_and_run(clause):
    page = (reg.SPEC_DIR / f"{clause.page}.md").read_text()
    reach = "\n".join(_test_sources().get(clause.id, []))
    for name in _named(clause):
        assert re.search(rf"^:::+\{{population\}} {name}$", page, re.MULTILINE), (
            f"{clause.page}.md does not show {name}"
        )
        assert re.search(rf"\b{name}\b", reach), f"no test of {clause.id} runs over {name}"


def test_exemption_lists_hold_only_quantifying_clauses():
    ids = {c.id for c in _clauses()}
    for listed in (ENUMERATED, NOT_QUANTIFIED):
        assert set(listed) <= ids, sorted(set(listed) - ids)


def test_population_file_is_torch_free():
    assert "import torch\n" not in Path(populations.__file__).read_text().split('"""', 2)[2].split("def ")[0]


# Scope: which tensors a clause is about. Without :scope: it is registry.DEFAULT_SCOPE (float32, one or two
# dimensions, contiguous, made with grad mode on); a clause that speaks of every kind of tensor says so in its
# :scope: by naming the kinds population its tests run in full.
KIND_POPULATIONS = ("TENSOR_KINDS", "TENSORS")
EVERY_KIND = re.compile(r"\b(every|any|all|whatever)\s+(\S+\s+)?(tensors?|dtypes?|shapes?|layouts?|kinds?)\b", re.I)
QUOTED = re.compile(r'"[^"]*"')  # a quoted message says nothing about scope


def _kinds_reached(clause) -> list[str]:
    reach = "\n".join(_test_sources().get(clause.id, []))
    return [name for name in KIND_POPULATIONS if re.search(rf"\b{name}\b", reach)]


@pytest.mark.parametrize("clause", [c for c in reg.default().clauses.values() if not c.withdrawn], ids=lambda c: c.id)
def test_scope_names_the_kinds_its_tests_run(clause):
    named = [name for name in KIND_POPULATIONS if clause.scope and re.search(rf"\b{name}\b", clause.scope)]
    reached = _kinds_reached(clause)
    where = f"{clause.id} ({clause.page}.md:{clause.line})"
    assert named == reached, (
        f"{where}: its tests run {reached or 'no kinds population'} but its :scope: names {named or 'none'}; "
        "a clause about every kind of tensor names the kinds population in :scope: and its tests run it"
    )
    if not clause.scope:
        said = EVERY_KIND.search(QUOTED.sub("", " ".join(clause.text.split())))
        assert not said, (
            f"{where} says {said.group()!r} but has the default scope ({reg.DEFAULT_SCOPE}): give it a :scope:"
        )
