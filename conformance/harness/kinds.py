"""TENSOR_KINDS: the kinds of tensor a clause about "a tensor" or "`x`" ranges over.

A clause whose text speaks of any tensor runs its tests over every member of this population
(``TENSOR_KINDS.params()``), as a clause that quantifies over operations runs every member
of its population (Note [Populations] in populations.py); a clause about fewer kinds names
them. The members vary one axis at a time from one common kind, a float32 leaf of shape
(2, 3) that requires grad, so that a failure names the axis that broke it:

- dtype: float16, bfloat16, float64, complex64 (leaves that require grad), int64, uint8, bool
  (leaves that cannot);
- shape: 0-dim, zero-size, 1-D, 4-D;
- layout: transposed (not contiguous), expanded (stride 0), channels-last;
- autograd standing: a leaf that does not require grad, a non-leaf, a view of a leaf, of a
  non-leaf and of a view, an output of a function that returns several views, a view taken
  under ``torch.no_grad()``, an ``nn.Parameter``.

A member is ``(id, make)``: ``make(device)`` returns a new tensor of that kind, holding the
values 1, 2, 3, ... (True for bool) in its elements' logical order. Ids name the kind, not a
spelling (``populations._METHOD`` finds no method in them).
"""

from __future__ import annotations

from .populations import ALL, Population, torch


def _values(shape, dtype, device):
    n = 1
    for size in shape:
        n *= size
    if dtype == "bool":
        return torch.ones(shape, dtype=torch.bool, device=device)
    # clone(): a tensor of its own, not a view of the arange
    return torch.arange(1, n + 1, device=device).to(getattr(torch, dtype)).reshape(shape).clone()


def _leaf(shape=(2, 3), dtype="float32", requires_grad=True):
    def make(device):
        return _values(shape, dtype, device).requires_grad_(requires_grad)

    return make


def _derived(of, derive):
    """A tensor made by ``derive`` from a new leaf ``of(device)``, with grad mode enabled."""

    def make(device):
        with torch.enable_grad():
            return derive(of(device))

    return make


def _under_no_grad(device):
    x = _leaf()(device)
    with torch.no_grad():
        return x[:, 1:]


def _parameter(device):
    return torch.nn.Parameter(_values((2, 3), "float32", device))


def _transposed(device):
    """A leaf (not a view, at version 0) whose memory is in transposed order: clone() keeps the strides of `t()`."""
    return _values((3, 2), "float32", device).t().clone().requires_grad_()


def _channels_last(device):
    return _values((1, 2, 2, 2), "float32", device).contiguous(memory_format=torch.channels_last).requires_grad_()


TENSOR_KINDS = Population(
    "TENSOR_KINDS",
    "Kinds of tensor, made by `f(device)`: a float32 (2, 3) leaf that requires grad, and that kind with one axis "
    "changed: its dtype, its shape, its layout, or its autograd standing (see conformance/harness/kinds.py).",
    (
        ("float32 (2, 3) leaf", _leaf()),
        # dtype
        ("float16 leaf", _leaf(dtype="float16")),
        ("bfloat16 leaf", _leaf(dtype="bfloat16")),
        ("float64 leaf", _leaf(dtype="float64")),
        ("complex64 leaf", _leaf(dtype="complex64")),
        ("int64 tensor", _leaf(dtype="int64", requires_grad=False)),
        ("uint8 tensor", _leaf(dtype="uint8", requires_grad=False)),
        ("bool tensor", _leaf(dtype="bool", requires_grad=False)),
        # shape
        ("0-dim leaf", _leaf(shape=())),
        ("zero-size leaf (0, 3)", _leaf(shape=(0, 3))),
        ("1-D leaf (5,)", _leaf(shape=(5,))),
        ("4-D leaf (1, 2, 2, 2)", _leaf(shape=(1, 2, 2, 2))),
        # layout
        ("transposed leaf (2, 3), strides (1, 2)", _transposed),
        ("expanded tensor (2, 3) of (1, 3)", lambda d: _leaf(shape=(1, 3), requires_grad=False)(d).expand(2, 3)),
        ("channels-last leaf (1, 2, 2, 2)", _channels_last),
        # autograd standing
        ("leaf without grad", _leaf(requires_grad=False)),
        ("non-leaf", _derived(_leaf(), lambda x: x * 1)),
        ("view of a leaf", _derived(_leaf(), lambda x: x[:, 1:])),
        ("view of a non-leaf", _derived(_leaf(), lambda x: (x * 1)[:, 1:])),
        ("view of a view", _derived(_leaf(), lambda x: x[:, 1:][1:])),
        ("output of split", _derived(_leaf(), lambda x: x.split(1)[0])),
        ("view taken under no_grad", _under_no_grad),
        ("nn.Parameter", _parameter),
    ),
)

# The members that are views (`x._is_view()`; tests/test_kinds.py checks the list against torch): a clause about views,
# or about tensors that are not views, runs `[p for p in TENSOR_KINDS.params() if p.id (not) in VIEW_KINDS]`.
VIEW_KINDS = (
    "expanded tensor (2, 3) of (1, 3)",
    "view of a leaf",
    "view of a non-leaf",
    "view of a view",
    "output of split",
    "view taken under no_grad",
)
# The members that are leaves that require grad and are not views (the view taken under no_grad is a leaf that
# requires grad too, and behaves otherwise: a clause about leaves names it or leaves it out).
GRAD_LEAF_KINDS = (
    "float32 (2, 3) leaf",
    "float16 leaf",
    "bfloat16 leaf",
    "float64 leaf",
    "complex64 leaf",
    "0-dim leaf",
    "zero-size leaf (0, 3)",
    "1-D leaf (5,)",
    "4-D leaf (1, 2, 2, 2)",
    "transposed leaf (2, 3), strides (1, 2)",
    "channels-last leaf (1, 2, 2, 2)",
    "nn.Parameter",
)

# Registered here rather than in populations.py: a statement there that runs on import is part of the fingerprint
# of every clause whose tests use a population (harness/fingerprints.py). Readers of ALL import this module.
ALL[TENSOR_KINDS.name] = TENSOR_KINDS
