"""The spec parser (conformance/harness/registry.py): what it reads, and every mistake it refuses.

Each refusal is a SpecError of one line, ``spec/<page>.md:<line>: <what>``, where
the line is that of the offending line (an option, a value), not just of the
directive.
"""

import re

import pytest

from conformance.harness import registry
from conformance.harness.registry import SpecError

GOOD = """\
# Page

:::{clause} P-1
:level: MUST
:since: 2.1
:until: 2.4
:needs: values
:devices: cpu meta

The statement,
on two lines.
:::

::::{clause} P-2
:level: UNSPECIFIED

A body with a nested block of another fence:

:::{note}
Not the end.
:::

```python
x = 1
```
::::

```{example}
:clauses: P-1 P-2

>>> 1 + 1
2
```
"""


def write(tmp_path, page, name="p.md"):
    (tmp_path / name).write_text(page)
    return tmp_path


def test_a_good_page_is_read(tmp_path):
    reg = registry.load(write(tmp_path, GOOD))
    p1, p2 = reg.clauses["P-1"], reg.clauses["P-2"]
    assert (p1.page, p1.line, p1.level, p1.text) == ("p", 3, "MUST", "The statement,\non two lines.")
    assert (str(p1.since), str(p1.until), p1.needs_values, p1.devices) == ("2.1", "2.4", True, ("cpu", "meta"))
    assert p2.text.startswith("A body with") and ":::{note}" in p2.text and p2.text.endswith("```")
    assert p2.since is None and p2.until is None and p2.devices == () and not p2.needs_values
    [example] = reg.examples
    assert (example.line, example.clauses, example.code) == (28, ("P-1", "P-2"), ">>> 1 + 1\n2\n")


def test_real_spec_keeps_ranges_and_devices():
    copy16 = registry.load().clauses["COPY-16"]
    assert (str(copy16.since), copy16.devices) == ("2.1", ("meta",))


CLAUSE = ":::{clause} X-1\n:level: MUST\n\nx\n:::\n"

REJECTED = [
    # (id, page, the message's start: file and line first)
    (
        "unclosed-fence",
        ":::{clause} X-1\n:level: MUST\n\nx\n\n:::{clause} X-2\n:level: MUST\n\ny\n:::\n",
        "spec/p.md:1: clause X-1 is not closed: no ':::' line before the next directive (line 6)",
    ),
    (
        "unclosed-at-end",
        CLAUSE + "\n```{example}\n:clauses: X-1\n\n>>> 1\n1\n",
        "spec/p.md:7: example is not closed: no '```' line before the end of the file",
    ),
    (
        "same-fence-directive-inside",
        ":::{clause} X-1\n:level: MUST\n\nx\n:::{note}\ny\n:::\n",
        "spec/p.md:1: clause X-1 is not closed: no ':::' line before the next directive (line 5)",
    ),
    (
        "clause-inside-example",
        "````{example}\n:clauses: X-1\n\n:::{clause} X-1\n:level: MUST\n\nx\n:::\n````\n",
        "spec/p.md:1: example is not closed: no '````' line before the next directive (line 4)",
    ),
    (
        "misspelled-option",
        ":::{clause} X-1\n:level: MUST\n:sinse: 2.1\n\nx\n:::\n",
        "spec/p.md:3: unknown option :sinse: (did you mean :since:?)",
    ),
    (
        "capitalised-option",
        ":::{clause} X-1\n:level: MUST\n:Since: 2.1\n\nx\n:::\n",
        "spec/p.md:3: unknown option :Since: (did you mean :since:?)",
    ),
    (
        "unknown-option",
        ":::{clause} X-1\n:level: MUST\n:color: red\n\nx\n:::\n",
        "spec/p.md:3: unknown option :color:; known: :also-on: :detail: :devices: :evidence: :level:",
    ),
    (
        "example-option",
        ":::{example}\n:clause: X-1\n\n>>> 1\n1\n:::\n",
        "spec/p.md:2: unknown option :clause: (did you mean :clauses:?)",
    ),
    (
        "option-after-blank-line",
        ":::{clause} X-1\n:level: MUST\n\n:since: 2.1\n\nx\n:::\n",
        "spec/p.md:4: option :since: after the statement started; options go right below the directive line",
    ),
    (
        "option-after-text",
        ":::{clause} X-1\n:level: MUST\n\nx\n:devices: meta\n:::\n",
        "spec/p.md:5: option :devices: after the statement started",
    ),
    (
        "option-after-example-code",
        ":::{example}\n\n:clauses: X-1\n>>> 1\n1\n:::\n",
        "spec/p.md:3: option :clauses: after the statement started",
    ),
    (
        "bad-version",
        ":::{clause} X-1\n:level: MUST\n:since: 2.1\n:until: two\n\nx\n:::\n",
        "spec/p.md:4: :until: 'two' is not a version like 2.1",
    ),
    (
        "empty-range",
        ":::{clause} X-1\n:level: MUST\n:since: 2.4\n:until: 2.2\n\nx\n:::\n",
        "spec/p.md:4: empty range: since 2.4 is not before until 2.2",
    ),
    (
        "also-on-inside-range",
        ":::{clause} X-1\n:level: MUST\n:since: 2.4\n:also-on: 2.5\n\nx\n:::\n",
        "spec/p.md:4: :also-on: 2.5 is inside the clause's own range already",
    ),
    (
        "also-on-patch-release",
        ":::{clause} X-1\n:level: MUST\n:since: 2.4\n:also-on: 2.1.2\n\nx\n:::\n",
        "spec/p.md:4: :also-on: '2.1.2' is not a release series like 2.1 (no patch number)",
    ),
    (
        "also-on-empty",
        ":::{clause} X-1\n:level: MUST\n:since: 2.4\n:also-on:\n\nx\n:::\n",
        "spec/p.md:4: :also-on: '' is not a release series like 2.1",
    ),
    (
        "equal-range",
        ":::{clause} X-1\n:level: MUST\n:until: 2.2\n:since: 2.2\n\nx\n:::\n",
        "spec/p.md:3: empty range: since 2.2 is not before until 2.2",
    ),
    (
        "unknown-level",
        ":::{clause} X-1\n:level: SHALL\n\nx\n:::\n",
        "spec/p.md:2: X-1 needs :level: one of MUST, OBSERVED, SHOULD, MAY, UNSPECIFIED (got 'SHALL')",
    ),
    (
        "observed-without-detail",
        ":::{clause} X-1\n:level: OBSERVED\n\nx\n:::\n",
        "spec/p.md:2: :detail: goes with :level: OBSERVED, and OBSERVED needs it (one or more of node-name,",
    ),
    (
        "detail-of-a-promise",
        ":::{clause} X-1\n:level: MUST\n:detail: node-name\n\nx\n:::\n",
        "spec/p.md:3: :detail: goes with :level: OBSERVED",
    ),
    (
        "unknown-detail",
        ":::{clause} X-1\n:level: OBSERVED\n:detail: node-name colour\n\nx\n:::\n",
        "spec/p.md:3: unknown detail(s) colour; known: node-name, version-count, compiled",
    ),
    ("empty-scope", ":::{clause} X-1\n:level: MUST\n:scope:\n\nx\n:::\n", "spec/p.md:3: :scope: needs the tensors"),
    (
        "empty-evidence",
        ":::{clause} X-1\n:level: MUST\n:evidence:\n\nx\n:::\n",
        "spec/p.md:3: :evidence: needs what justifies the level",
    ),
    ("missing-level", "\n:::{clause} X-1\n:since: 2.1\n\nx\n:::\n", "spec/p.md:2: X-1 needs :level: one of"),
    (
        "bad-needs",
        ":::{clause} X-1\n:level: MUST\n:needs: grads\n\nx\n:::\n",
        "spec/p.md:3: :needs: can only be 'values' (got 'grads')",
    ),
    (
        "unknown-device",
        ":::{clause} X-1\n:level: MUST\n:devices: cpu gpu\n\nx\n:::\n",
        "spec/p.md:3: unknown device(s) gpu; known: cpu, meta, cuda, mps",
    ),
    ("no-device", ":::{clause} X-1\n:level: MUST\n:devices:\n\nx\n:::\n", "spec/p.md:3: :devices: names no device"),
    (
        "withdrawn-without-reason",
        ":::{clause} X-1\n:level: MUST\n:withdrawn:\n\nx\n:::\n",
        "spec/p.md:3: :withdrawn: needs a reason",
    ),
    (
        "lowercase-id",
        "# P\n\n:::{clause} data-1\n:level: MUST\n\nx\n:::\n",
        "spec/p.md:3: 'data-1' is not a clause ID like DATA-1",
    ),
    ("empty-statement", CLAUSE + "\n:::{clause} X-2\n:level: MUST\n\n:::\n", "spec/p.md:7: X-2 has no statement"),
    (
        "duplicated-option",
        ":::{clause} X-1\n:level: MUST\n:since: 2.1\n:since: 2.2\n\nx\n:::\n",
        "spec/p.md:4: option :since: given twice (first at line 3)",
    ),
    (
        "duplicated-id-on-a-page",
        CLAUSE + "\n:::{clause} X-1\n:level: MAY\n\ny\n:::\n",
        "spec/p.md:7: clause X-1 is defined twice (first at spec/p.md:1)",
    ),
    (
        "example-unknown-clause",
        CLAUSE + "\n:::{example}\n:clauses: X-1 X-9\n\n>>> 1\n1\n:::\n",
        "spec/p.md:8: example names unknown clause X-9",
    ),
    ("example-without-clauses", ":::{example}\n>>> 1\n1\n:::\n", "spec/p.md:1: an example needs :clauses: ID"),
    (
        "example-with-argument",
        CLAUSE + ":::{example} X-1\n:clauses: X-1\n\n>>> 1\n1\n:::\n",
        "spec/p.md:6: an example takes no argument (got 'X-1')",
    ),
    ("example-without-code", CLAUSE + ":::{example}\n:clauses: X-1\n:::\n", "spec/p.md:6: example has no code"),
]


@pytest.mark.parametrize(("page", "message"), [pytest.param(p, m, id=i) for i, p, m in REJECTED])
def test_malformed_spec_pages_are_rejected(tmp_path, page, message):
    with pytest.raises(SpecError, match="^" + re.escape(message)) as err:
        registry.load(write(tmp_path, page))
    assert "\n" not in str(err.value)


def test_duplicated_id_across_pages(tmp_path):
    write(tmp_path, CLAUSE, "a.md")
    write(tmp_path, "# B\n\n" + CLAUSE, "b.md")
    with pytest.raises(SpecError, match=re.escape("spec/b.md:3: clause X-1 is defined twice (first at spec/a.md:1)")):
        registry.load(tmp_path)


def test_observed_details_and_scope_are_read(tmp_path):
    page = ":::{clause} X-1\n:level: OBSERVED\n:detail: node-name, version-count\n:scope: every kind of K\n\nx\n:::\n"
    clause = registry.load(write(tmp_path, page)).clauses["X-1"]
    assert (clause.level, clause.details, clause.scope, clause.normative) == (
        "OBSERVED",
        ("node-name", "version-count"),
        "every kind of K",
        True,
    )
    plain = registry.load(write(tmp_path, CLAUSE)).clauses["X-1"]
    assert (plain.details, plain.scope, plain.scope_text, plain.evidence) == ((), None, registry.DEFAULT_SCOPE, None)


def test_the_evidence_of_a_level_is_read(tmp_path):
    page = ':::{clause} X-1\n:level: MUST\n:evidence: the [docs](https://example.org/#a): "it does"\n\nx\n:::\n'
    clause = registry.load(write(tmp_path, page)).clauses["X-1"]
    assert clause.evidence == 'the [docs](https://example.org/#a): "it does"'
