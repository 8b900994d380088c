"""TENSOR_KINDS holds a member for every kind issue 28 names, judged by what torch says of the tensor each makes:
dropping a kind, or making it another kind by mistake, fails here."""

import torch

from conformance.harness.kinds import GRAD_LEAF_KINDS, TENSOR_KINDS, VIEW_KINDS


def made():
    return {mid: make("cpu") for mid, make in TENSOR_KINDS.available()}


def test_every_member_is_available_and_new():
    assert [mid for mid, _ in TENSOR_KINDS.available()] == TENSOR_KINDS.ids()
    for mid, make in TENSOR_KINDS.available():
        assert make("cpu") is not make("cpu"), mid


def test_dtypes_shapes_and_layouts():
    tensors = made().values()
    dtypes = {t.dtype for t in tensors}
    wanted = {"float16", "bfloat16", "float32", "float64", "complex64", "int64", "uint8", "bool"}
    assert {getattr(torch, d) for d in wanted} <= dtypes
    assert {0, 1, 2, 4} <= {t.dim() for t in tensors}
    assert any(t.numel() == 0 for t in tensors), "a zero-size tensor"
    assert any(0 in t.stride() and t.numel() > 1 for t in tensors), "an expanded tensor (stride 0)"
    assert any(not t.is_contiguous() and not t._is_view() and t.dim() == 2 for t in tensors), "a transposed leaf"
    assert any(
        t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous() for t in tensors
    )


def test_view_kinds_are_the_views():
    assert {mid for mid, t in made().items() if t._is_view()} == set(VIEW_KINDS)


def test_grad_leaf_kinds_are_the_leaves_that_require_grad_and_are_not_views():
    leaves = {mid for mid, t in made().items() if t.is_leaf and t.requires_grad and not t._is_view()}
    assert leaves == set(GRAD_LEAF_KINDS)


def test_kinds_start_at_version_zero():
    assert {mid: t._version for mid, t in made().items() if t._version} == {}


def test_autograd_standings():
    kinds = made()
    views = [t for t in kinds.values() if t._is_view()]
    assert any(t.is_leaf and not t.requires_grad and not t._is_view() for t in kinds.values()), "a leaf without grad"
    assert any(t.is_leaf and t.requires_grad and t.dtype == torch.float32 for t in kinds.values()), "a leaf with grad"
    assert any(not t.is_leaf and not t._is_view() for t in kinds.values()), "a non-leaf"
    assert any(t._base.is_leaf and t.requires_grad for t in views), "a view of a leaf"
    assert any(not t._base.is_leaf for t in views), "a view of a non-leaf"
    assert any(type(t.grad_fn).__name__ == "SplitBackward0" for t in views), "an output of split"
    assert any(t.is_leaf and t.requires_grad for t in views), "a view taken under no_grad (a leaf that requires grad)"
    assert any(isinstance(t, torch.nn.Parameter) for t in kinds.values())
    # a view of a view: its base is a leaf (views of views share the first base), but it was made from a view
    assert "view of a view" in kinds and kinds["view of a view"].shape == (1, 2)
