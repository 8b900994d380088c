"""Conformance tests of the in-place clauses over every in-place operation of torch's operator database.

The population OPDB_INPLACE (conformance/harness/opdb.py) is drawn from the installed torch's op_db; each test
takes its members through ``@pytest.mark.population`` (conformance/harness/opdb_plugin.py: all of them when
results are written, a fixed sample of 40 otherwise). ``op(device)`` gives a fresh copy ``x`` of the member's
float32 sample input (a leaf that does not require grad) and ``update(t)``, the in-place variant with the
sample's other arguments. The clauses are on spec/inplace.md and spec/version_counter.md.
"""

import pytest
import torch

from conformance.harness.opdb import OPDB_INPLACE

# op_db's dropout2d/dropout3d samples are unbatched: torch warns about how it reads their shape.
pytestmark = pytest.mark.filterwarnings("ignore:dropout[23]d:UserWarning")

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
OUT_ERROR = (
    "functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad"
)
RESIZE_ERROR = "cannot resize variables that require grad"

# The exceptions the clauses name (found by running the population on every release 2.0.1 .. 2.15.0).
# Not differentiable: no leaf check; accepted on a leaf that requires grad, and counted.
NOT_DIFFERENTIABLE = ("logical_not_", "logical_and_", "logical_or_", "logical_xor_")
# Their op_db sample has p=0: `F.dropout(x, p=0, inplace=True)` returns `x` without touching it.
UNTOUCHED = (
    "nn.functional.dropout_",
    "nn.functional.dropout2d_",
    "nn.functional.alpha_dropout_",
    "nn.functional.feature_alpha_dropout_.with_train",
    "nn.functional.feature_alpha_dropout_.without_train",
)
# Refuse any tensor that requires grad, also under no_grad (VERSION-41 .. VERSION-43 for their version counts).
RESIZE = ("resize_", "resize_as_")
# Named by INPLACE-80 as stated by INPLACE-82 / INPLACE-83 (its message changed in 2.11): not run over here.
LDEXP = ("ldexp_",)


def _version_increase(op, device) -> int:
    x, update = op(device)
    before = x._version
    update(x)
    return x._version - before


# > INPLACE-80: With grad mode enabled, the in-place update of a leaf `x` that requires grad by every member
# > of `OPDB_INPLACE` ... raises `RuntimeError` whose message contains "a leaf Variable that requires grad is
# > being used in an in-place operation", and `x._version` is unchanged; except ...
@pytest.mark.clause("INPLACE-80")
@pytest.mark.population(OPDB_INPLACE, without=LDEXP)
def test_opdb_inplace_on_leaf_requiring_grad(device, op):
    x, update = op(device)
    x.requires_grad_()
    before = x._version
    if op.id in NOT_DIFFERENTIABLE or op.id in UNTOUCHED:
        result = update(x)
        assert result is x and x.is_leaf and x.requires_grad and x.grad_fn is None, f"{op.id}: accepted as is"
        increase = x._version - before
        assert (increase == 0) if op.id in UNTOUCHED else (increase > 0), f"{op.id}: _version +{increase}"
        return
    with pytest.raises(RuntimeError) as info:
        update(x)
    expected = RESIZE_ERROR if op.id in RESIZE else LEAF_ERROR
    assert expected in str(info.value), f"{op.id}: {info.value}"
    assert x._version == before and x.is_leaf and x.grad_fn is None


def _ldexp_on_leaf(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        x.ldexp_(torch.tensor([1.0, 2.0], device=device))
    assert x._version == 0 and x.is_leaf and x.grad_fn is None
    return str(info.value)


# > INPLACE-82: Until torch 2.11, `x.ldexp_(other)` on a leaf `x` that requires grad, with grad mode enabled,
# > raises `RuntimeError` whose message contains "functions with out=... arguments don't support automatic
# > differentiation, but one of the arguments requires grad" (not the message of INPLACE-80) ...
@pytest.mark.clause("INPLACE-82")
def test_ldexp_on_leaf_raises_out_error(device):
    message = _ldexp_on_leaf(device)
    assert OUT_ERROR in message and LEAF_ERROR not in message, message


# > INPLACE-83: Since torch 2.11, it raises `RuntimeError` whose message contains "a leaf Variable that requires
# > grad is being used in an in-place operation", as every member of INPLACE-80.
@pytest.mark.clause("INPLACE-83")
def test_ldexp_on_leaf_raises_leaf_error(device):
    message = _ldexp_on_leaf(device)
    assert LEAF_ERROR in message, message


# > INPLACE-81: Inside `torch.no_grad()`, the update of a leaf `x` that requires grad by every member of
# > `OPDB_INPLACE` is accepted: it returns `x` itself, `x` stays a leaf that requires grad and has no `grad_fn`,
# > and `x._version` increases (VERSION-80, with its exceptions); except `resize_` and `resize_as_` ...
@pytest.mark.clause("INPLACE-81")
@pytest.mark.population(OPDB_INPLACE)
def test_opdb_inplace_under_no_grad_on_leaf(device, op):
    x, update = op(device)
    x.requires_grad_()
    before = x._version
    with torch.no_grad():
        if op.id in RESIZE:
            with pytest.raises(RuntimeError, match=RESIZE_ERROR):
                update(x)
            assert x._version == before
            return
        result = update(x)
    assert result is x, f"{op.id}: returns another tensor"
    assert x.is_leaf and x.requires_grad and x.grad_fn is None, f"{op.id}: {x.is_leaf=} {x.requires_grad=}"
    increase = x._version - before
    assert (increase == 0) if op.id in UNTOUCHED else (increase > 0), f"{op.id}: _version +{increase}"


# > INPLACE-84: On a tensor that does not require grad, with grad mode enabled, the update by every member of
# > `OPDB_INPLACE` is accepted: it returns the tensor itself, which stays a leaf that does not require grad and
# > has no `grad_fn`.
@pytest.mark.clause("INPLACE-84")
@pytest.mark.population(OPDB_INPLACE)
def test_opdb_inplace_on_tensor_not_requiring_grad(device, op):
    x, update = op(device)
    result = update(x)
    assert result is x, f"{op.id}: returns another tensor"
    assert x.is_leaf and not x.requires_grad and x.grad_fn is None


# > VERSION-80: The in-place update by every member of `OPDB_INPLACE` of a tensor that does not require grad,
# > with grad mode enabled, increases its `_version`; except ... the members of op_db's dropout family whose
# > sample has `p=0` ... leave it unchanged; `resize_` and `resize_as_` are not members of this clause
@pytest.mark.clause("VERSION-80")
@pytest.mark.population(OPDB_INPLACE, without=RESIZE)
def test_opdb_inplace_increases_version(device, op):
    increase = _version_increase(op, device)
    if op.id in UNTOUCHED:
        assert increase == 0, f"{op.id}: _version +{increase}"
    else:
        assert increase > 0, f"{op.id}: _version +{increase}, expected an increase"


# > VERSION-81: By how much one update by a member of `OPDB_INPLACE` increases `_version`. Recorded for every
# > member.
@pytest.mark.clause("VERSION-81")
@pytest.mark.population(OPDB_INPLACE, without=RESIZE)
def test_opdb_inplace_version_increase_size(device, op, observe):
    observe(op.id, _version_increase(op, device))
