"""Ways to break in-place operations under autograd (spec/inplace.md)."""

import functools
import re

import torch

_METHODS = ["add_", "sub_", "mul_", "div_", "zero_", "fill_", "clamp_", "copy_", "__iadd__", "__imul__"]


def _patch_methods(make):
    for name in _METHODS:
        setattr(torch.Tensor, name, make(getattr(torch.Tensor, name)))


def leaf_check_skipped(original):
    """`original`, run as if under no_grad on a leaf that requires grad (so it never raises the leaf error)."""

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        if self.is_leaf and self.requires_grad and torch.is_grad_enabled():
            with torch.no_grad():
                return original(self, *args, **kwargs)
        return original(self, *args, **kwargs)

    return method


def version_bump_skipped(original):
    """`original`, writing through `.data` when autograd would not record it (so `_version` stays)."""

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        if torch.is_grad_enabled() and self.requires_grad:
            return original(self, *args, **kwargs)
        original(self.data, *args, **kwargs)
        return self

    return method


def inplace_on_leaf_allowed():
    """In-place ops on a leaf that requires grad run as if under no_grad, instead of raising."""
    _patch_methods(leaf_check_skipped)


def float16_leaf_check_skipped(original):
    """`original`, run as if under no_grad on a float16 leaf that requires grad; every other kind is checked."""
    checked = leaf_check_skipped(original)

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        return (checked if self.dtype == torch.float16 else original)(self, *args, **kwargs)

    return method


def inplace_on_float16_leaf_allowed():
    """In-place ops on a float16 leaf that requires grad are accepted; every other kind of leaf still raises."""
    _patch_methods(float16_leaf_check_skipped)


def inplace_skips_version_counter():
    """In-place ops that autograd does not record write through `.data`: no version bump."""
    _patch_methods(version_bump_skipped)


def backward_error_has_old_hint():
    """The modified-saved-tensor error carries the hint text of torch before 2.11."""
    original = torch.Tensor.backward

    @functools.wraps(original)
    def backward(self, *args, **kwargs):
        try:
            return original(self, *args, **kwargs)
        except RuntimeError as exc:
            text = str(exc).replace("set_detect_anomaly(True, check_nan=False).", "set_detect_anomaly(True).")
            raise RuntimeError(text) from None

    torch.Tensor.backward = backward


def _rewrite_node_name(rewrite):
    """`backward()` whose modified-saved-tensor error names the node as `rewrite(name)` says."""
    original = torch.Tensor.backward

    @functools.wraps(original)
    def backward(self, *args, **kwargs):
        try:
            return original(self, *args, **kwargs)
        except RuntimeError as exc:
            text = re.sub(r"(, which is output \d+ of )([^,]+),", lambda m: m[1] + rewrite(m[2]) + ",", str(exc))
            raise RuntimeError(text) from None

    torch.Tensor.backward = backward


def error_names_nodes_unshortened():
    """The error names nodes as torch before 2.13 did (`AddBackward0`, `FillBackward2`), not `Add`, `Fill2`."""

    def long(name):
        if "::" in name or "Backward" in name:
            return name
        m = re.fullmatch(r"(.*?)(\d*)", name)
        return f"{m[1]}Backward{m[2] or 0}"

    _rewrite_node_name(long)


def error_names_copy_nodes_unqualified():
    """The error names `CopyBackwards` and `CopySlices` without their `torch::autograd::` namespace."""
    _rewrite_node_name(lambda name: name.removeprefix("torch::autograd::"))


def view_update_not_recorded(original):
    """`original`, run under no_grad when called on a view (so the base's graph does not record it)."""

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        if self._is_view() and torch.is_grad_enabled():
            with torch.no_grad():
                return original(self, *args, **kwargs)
        return original(self, *args, **kwargs)

    return method


def inplace_on_view_not_recorded():
    """In-place ops on a view run as if under no_grad: the base keeps its `grad_fn`, no gradient through the op."""
    _patch_methods(view_update_not_recorded)


def operand_grad_dropped(original):
    """`original`, with its tensor operands detached (so an operand that requires grad is not recorded)."""

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        args = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
        return original(self, *args, **kwargs)

    return method


def inplace_ignores_operand_requiring_grad():
    """In-place ops detach their tensor operands: updating a tensor that does not require grad by an operand that
    does leaves it a leaf that does not require grad."""
    for name in [*_METHODS, "addcmul_", "lerp_", "pow_", "masked_fill_", "index_fill_", "__setitem__"]:
        setattr(torch.Tensor, name, operand_grad_dropped(getattr(torch.Tensor, name)))


def promoted_dtype_truncated(original):
    """`original`, casting a Python float operand to the tensor's integer dtype instead of refusing the update."""

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        if not self.is_floating_point() and args and isinstance(args[0], float):
            args = (int(args[0]), *args[1:])
        return original(self, *args, **kwargs)

    return method


def inplace_truncates_promoted_dtype():
    """`t.add_(0.5)` and `t.mul_(1.5)` on an integer or bool tensor update it with the truncated number."""
    _patch_methods(promoted_dtype_truncated)


CASES = [
    ("inplace_truncates_promoted_dtype", "test_inplace.py", {"INPLACE-24"}),
    ("inplace_on_leaf_allowed", "test_inplace.py", {"INPLACE-1", "INPLACE-2", "INPLACE-3"}),
    ("inplace_on_float16_leaf_allowed", "test_inplace.py", {"INPLACE-1", "INPLACE-2", "INPLACE-3"}),
    ("inplace_on_view_not_recorded", "test_inplace.py", {"INPLACE-21", "INPLACE-22"}),
    ("inplace_ignores_operand_requiring_grad", "test_inplace.py", {"INPLACE-23"}),
    ("error_names_nodes_unshortened", "test_inplace.py", {"INPLACE-19", "INPLACE-41"}),
    ("error_names_copy_nodes_unqualified", "test_inplace.py", {"INPLACE-19", "INPLACE-20"}),
    ("inplace_skips_version_counter", "test_inplace.py", {"INPLACE-5", "INPLACE-7", "INPLACE-10", "INPLACE-11"}),
    ("backward_error_has_old_hint", "test_inplace.py", {"INPLACE-14"}),
]


# -- every in-place operation of torch's op_db (test_inplace_ops.py; op_db, imported after this patch, takes the
# patched methods as its in-place variants) --


def patch_every_inplace_method(make):
    """Wrap every public in-place method of `torch.Tensor` (a name with one trailing underscore)."""
    for name in dir(torch.Tensor):
        if re.fullmatch(r"[a-z][a-z0-9_]*[a-z0-9]_", name) and name != "requires_grad_":
            original = getattr(torch.Tensor, name)
            if callable(original):
                setattr(torch.Tensor, name, make(original))


def opdb_inplace_on_leaf_allowed():
    """Every in-place method runs on a leaf that requires grad as if under no_grad, instead of raising."""
    patch_every_inplace_method(leaf_check_skipped)


def opdb_inplace_returns_copy():
    """Every in-place method returns a copy of the updated tensor instead of the tensor itself."""

    def make(original):
        @functools.wraps(original)
        def method(self, *args, **kwargs):
            result = original(self, *args, **kwargs)
            return result.detach().clone() if result is self else result

        return method

    patch_every_inplace_method(make)


CASES += [
    ("opdb_inplace_on_leaf_allowed", "test_inplace_ops.py", {"INPLACE-80"}),
    ("opdb_inplace_returns_copy", "test_inplace_ops.py", {"INPLACE-81", "INPLACE-84"}),
]
