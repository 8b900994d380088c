"""Ways to break the version counter and saved tensors (spec/version_counter.md)."""

import torch


def version_always_zero():
    """`x._version` as a read-only property that is always 0."""
    torch.Tensor._version = property(lambda self: 0)


def saved_tensors_are_copies():
    """Every saved tensor is packed as a clone (a default saved-tensor hook that is never removed)."""
    torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t).__enter__()


def backward_always_retains_graph():
    """`backward()` keeps the graph's saved tensors, as if `retain_graph=True` were always passed."""
    backward = torch.Tensor.backward

    def patched(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        return backward(self, gradient, True, create_graph, inputs)

    torch.Tensor.backward = patched


def numpy_returns_copy():
    """`x.numpy()` exports a copy of the detached tensor: no refusal for tensors that require grad, no shared memory."""
    numpy = torch.Tensor.numpy

    def patched(self, *, force=False):
        return numpy(self.detach().clone())

    torch.Tensor.numpy = patched


def dlpack_import_shares_counter():
    """`torch.from_dlpack(t)` of a torch tensor returns `t.detach()` (sharing its version counter)."""
    from_dlpack = torch.from_dlpack
    torch.from_dlpack = lambda ext: ext.detach() if isinstance(ext, torch.Tensor) else from_dlpack(ext)


def dlpack_exports_tensors_requiring_grad():
    """`Tensor.__dlpack__` detaches a tensor that requires grad instead of refusing it."""
    dlpack = torch.Tensor.__dlpack__
    torch.Tensor.__dlpack__ = lambda self, *args, **kwargs: dlpack(self.detach(), *args, **kwargs)


def untyped_storage_is_a_copy():
    """`x.untyped_storage()` returns the storage of a copy of `x`: writes into it never reach `x`."""
    untyped_storage = torch.Tensor.untyped_storage
    torch.Tensor.untyped_storage = lambda self: untyped_storage(self.detach().clone())


def allow_mutation_does_nothing():
    """`allow_mutation_on_saved_tensors()` as a context manager that clones nothing."""
    import contextlib

    torch.autograd.graph.allow_mutation_on_saved_tensors = contextlib.nullcontext


def clone_starts_at_version_1():
    """`clone()` as `empty_like` then `copy_`: the new tensor starts at version 1."""
    clone = torch.Tensor.clone

    def patched(self, *args, **kwargs):
        out = clone(self, *args, **kwargs)
        with torch.no_grad():
            out.copy_(out)
        return out

    torch.Tensor.clone = patched


def resize_never_bumps():
    """`resize_`/`resize_as_` put the version back where it was (the torch < 2.1 behaviour)."""
    for name in ("resize_", "resize_as_"):
        original = getattr(torch.Tensor, name)

        def patched(self, *args, _original=original, **kwargs):
            before = self._version
            out = _original(self, *args, **kwargs)
            torch._C._autograd._unsafe_set_version_counter([self], [before])
            return out

        setattr(torch.Tensor, name, patched)


def apply_bumps_version():
    """`apply_`/`map_` count their write, like the other in-place operations."""
    for name in ("apply_", "map_"):
        original = getattr(torch.Tensor, name)

        def patched(self, *args, _original=original, **kwargs):
            out = _original(self, *args, **kwargs)
            torch.autograd.graph.increment_version(self)
            return out

        setattr(torch.Tensor, name, patched)


def hooks_keep_version_check():
    """Saved-tensor hooks keep the version check: `unpack` raises when the saved tensor was updated in place."""
    original = torch.autograd.graph.saved_tensors_hooks

    class saved_tensors_hooks(original):
        def __init__(self, pack, unpack):
            def checked_pack(t):
                return pack(t), t, t._version

            def checked_unpack(packed):
                obj, t, version = packed
                if t._version != version:
                    raise RuntimeError(
                        "one of the variables needed for gradient computation has been modified by an inplace operation"
                    )
                return unpack(obj)

            super().__init__(checked_pack, checked_unpack)

    torch.autograd.graph.saved_tensors_hooks = saved_tensors_hooks


def legacy_to_dlpack_refuses_tensors_requiring_grad():
    """`torch.utils.dlpack.to_dlpack(x)` refuses a tensor that requires grad, as `x.__dlpack__()` does."""
    to_dlpack = torch.utils.dlpack.to_dlpack

    def patched(tensor):
        if tensor.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return to_dlpack(tensor)

    torch.utils.dlpack.to_dlpack = patched


CASES = [
    ("version_always_zero", "test_version_counter.py", {"VERSION-2", "VERSION-4", "VERSION-5", "VERSION-42"}),
    ("clone_starts_at_version_1", "test_version_counter.py", {"VERSION-1"}),
    ("resize_never_bumps", "test_version_counter.py", {"VERSION-42"}),
    ("apply_bumps_version", "test_version_counter.py", {"VERSION-44"}),
    (
        "saved_tensors_are_copies",
        "test_version_counter.py",
        {"VERSION-6", "VERSION-8", "VERSION-9", "VERSION-18", "VERSION-60", "VERSION-61"},
    ),
    ("backward_always_retains_graph", "test_version_counter.py", {"VERSION-11", "VERSION-12"}),
    ("numpy_returns_copy", "test_version_counter.py", {"VERSION-63", "VERSION-64"}),
    ("dlpack_import_shares_counter", "test_version_counter.py", {"VERSION-65"}),
    ("dlpack_exports_tensors_requiring_grad", "test_version_counter.py", {"VERSION-67"}),
    ("legacy_to_dlpack_refuses_tensors_requiring_grad", "test_version_counter.py", {"VERSION-70"}),
    ("untyped_storage_is_a_copy", "test_version_counter.py", {"VERSION-68"}),
    ("allow_mutation_does_nothing", "test_version_counter.py", {"VERSION-69"}),
    ("hooks_keep_version_check", "test_version_counter.py", {"VERSION-16", "VERSION-17", "VERSION-46"}),
]


def opdb_inplace_skips_version_counter():
    """Every in-place method of `torch.Tensor` that autograd does not record writes through `.data`: no bump."""
    from tests.sabotage.inplace import patch_every_inplace_method, version_bump_skipped

    patch_every_inplace_method(version_bump_skipped)


CASES += [("opdb_inplace_skips_version_counter", "test_inplace_ops.py", {"VERSION-80"})]
