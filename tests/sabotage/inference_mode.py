"""Ways to break `torch.inference_mode` (spec/inference_mode.md)."""

import functools

import torch


def inference_mode_is_no_grad():
    """`torch.inference_mode()` as `torch.no_grad()` (and `inference_mode(False)` as `enable_grad()`)."""

    class inference_mode:
        def __init__(self, mode=True):
            self.mode = mode
            self.cm = None

        def __enter__(self):
            self.cm = torch.no_grad() if self.mode else torch.enable_grad()
            return self.cm.__enter__()

        def __exit__(self, *exc):
            return self.cm.__exit__(*exc)

        def __call__(self, func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                with inference_mode(self.mode):
                    return func(*args, **kwargs)

            return wrapper

    torch.inference_mode = inference_mode


def clone_keeps_inference():
    """`t.clone()` of an inference tensor returns an inference tensor (made inside the mode)."""
    clone = torch.Tensor.clone

    def patched(self, *args, **kwargs):
        if self.is_inference():
            with torch.inference_mode():
                return clone(self, *args, **kwargs)
        return clone(self, *args, **kwargs)

    torch.Tensor.clone = patched


def inplace_inside_skips_version_bump():
    """In-place methods of normal tensors inside inference mode run on a `.data` alias (no version bump)."""
    for name in ("add_", "mul_", "zero_", "copy_", "__iadd__", "__setitem__"):
        original = getattr(torch.Tensor, name)

        def patched(self, *args, _original=original, **kwargs):
            if torch.is_inference_mode_enabled() and not self.is_inference():
                _original(self.data, *args, **kwargs)
                return None if _original is torch.Tensor.__setitem__ else self
            return _original(self, *args, **kwargs)

        setattr(torch.Tensor, name, patched)


_VIEW_METHODS = ("__getitem__", "view", "t", "transpose", "unsqueeze", "reshape", "split", "unbind", "narrow")


def views_inside_are_inference_copies():
    """Inside inference mode, view methods of a normal tensor return an inference copy instead of a view."""
    for name in _VIEW_METHODS:
        original = getattr(torch.Tensor, name)

        def patched(self, *args, _original=original, **kwargs):
            out = _original(self, *args, **kwargs)
            if not torch.is_inference_mode_enabled() or self.is_inference():
                return out
            return tuple(o.clone() for o in out) if isinstance(out, tuple) else out.clone()

        setattr(torch.Tensor, name, functools.wraps(original)(patched))


def no_grad_results_are_inference_tensors():
    """Under `torch.no_grad()`, `clone`, `sin`, `exp` and `*` run as if in inference mode."""
    for name in ("clone", "sin", "exp", "__mul__"):
        original = getattr(torch.Tensor, name)

        def patched(self, *args, _original=original, **kwargs):
            if torch.is_grad_enabled() or torch.is_inference_mode_enabled():
                return _original(self, *args, **kwargs)
            with torch.inference_mode():
                return _original(self, *args, **kwargs)

        setattr(torch.Tensor, name, functools.wraps(original)(patched))


def detach_of_inference_tensor_made_inside():
    """`t.detach()` of an inference tensor is made inside inference mode (no version counter)."""
    detach = torch.Tensor.detach

    def patched(self):
        if self.is_inference():
            with torch.inference_mode():
                return detach(self)
        return detach(self)

    torch.Tensor.detach = patched


def contiguous_always_copies():
    """`t.contiguous()` of an inference tensor outside the mode returns a normal copy, as `t.clone()` does."""
    contiguous = torch.Tensor.contiguous

    def patched(self, *args, **kwargs):
        if self.is_inference() and not torch.is_inference_mode_enabled():
            return self.clone()
        return contiguous(self, *args, **kwargs)

    torch.Tensor.contiguous = patched


_GRAD_FN = torch._C.TensorBase.grad_fn


def grad_fn_never_regenerated():
    """`y.grad_fn` returns the node first read from `y`: a view updated in place keeps its node (the claim INFER-13 and
    NOGRAD-8 made of every non-leaf), and a modified output of split/chunk/unbind reads it without raising."""

    def grad_fn(self):
        if "_first_grad_fn" not in self.__dict__:
            self.__dict__["_first_grad_fn"] = _GRAD_FN.__get__(self)
        return self.__dict__["_first_grad_fn"]

    torch.Tensor.grad_fn = property(grad_fn)


_SETITEM = torch.Tensor.__setitem__


def index_assignment_into_detached_inference_tensor_accepted():
    """`d[i] = v` into an inference tensor that has a version counter (`t.detach()`) runs as if inside inference
    mode: accepted, like the other updates of INFER-41."""

    def setitem(self, index, value):
        if self.is_inference() and not torch.is_inference_mode_enabled():
            try:
                self._version  # noqa: B018 - raises for an inference tensor without a version counter
            except RuntimeError:
                return _SETITEM(self, index, value)
            with torch.inference_mode():
                return _SETITEM(self, index, value)
        return _SETITEM(self, index, value)

    torch.Tensor.__setitem__ = setitem


def full_slice_assignment_through_a_view():
    """`x[:] = v` writes through the view `x[:]` (as before torch 2.9): into `t.detach()` of an inference tensor, it
    is refused."""

    def setitem(self, index, value):
        if isinstance(index, slice) and index == slice(None):
            self[index].copy_(value)
            return None
        return _SETITEM(self, index, value)

    torch.Tensor.__setitem__ = setitem


CASES = [
    ("views_inside_are_inference_copies", "test_inference_mode.py", {"INFER-3", "INFER-40"}),
    ("no_grad_results_are_inference_tensors", "test_inference_mode.py", {"INFER-4"}),
    ("detach_of_inference_tensor_made_inside", "test_inference_mode.py", {"INFER-41"}),
    (
        "inference_mode_is_no_grad",
        "test_inference_mode.py",
        {"INFER-1", "INFER-2", "INFER-5", "INFER-6", "INFER-9", "INFER-11", "INFER-19", "INFER-20"},
    ),
    ("clone_keeps_inference", "test_inference_mode.py", {"INFER-12"}),
    ("contiguous_always_copies", "test_inference_mode.py", {"INFER-42"}),
    ("inplace_inside_skips_version_bump", "test_inference_mode.py", {"INFER-13", "INFER-14"}),
    ("grad_fn_never_regenerated", "test_inference_mode.py", {"INFER-21", "INFER-22"}),
    ("index_assignment_into_detached_inference_tensor_accepted", "test_inference_mode.py", {"INFER-23"}),
    # on torch from 2.9 (the tests' torch); before, INFER-24 holds already and no test fails
    ("full_slice_assignment_through_a_view", "test_inference_mode.py", {"INFER-25"}),
]
