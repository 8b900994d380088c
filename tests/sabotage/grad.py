"""Ways to break `.grad` (spec/grad.md)."""

import warnings

import torch

_grad = torch.Tensor.grad
_backward = torch.Tensor.backward
_opt_zero_grad = torch.optim.Optimizer.zero_grad
_module_zero_grad = torch.nn.Module.zero_grad


def backward_overwrites_grad():
    """`backward()` that replaces `.grad` of the leaves instead of adding to it."""

    def leaves(fn, seen):
        if fn is None or fn in seen:
            return
        seen.add(fn)
        if hasattr(fn, "variable"):
            yield fn.variable
        for nxt, _ in fn.next_functions:
            yield from leaves(nxt, seen)

    def backward(self, *args, **kwargs):
        for leaf in leaves(self.grad_fn, set()):
            leaf.grad = None
        return _backward(self, *args, **kwargs)

    torch.Tensor.backward = backward


def zero_grad_keeps_tensors():
    """`zero_grad()` defaults to `set_to_none=False` (the torch < 2.0 behaviour)."""
    torch.optim.Optimizer.zero_grad = lambda self, set_to_none=False: _opt_zero_grad(self, set_to_none)
    torch.nn.Module.zero_grad = lambda self, set_to_none=False: _module_zero_grad(self, set_to_none)


def grad_setter_copies():
    """`x.grad = g` stores a copy of `g`, not `g` itself."""
    torch.Tensor.grad = property(_grad.__get__, lambda self, g: _grad.__set__(self, None if g is None else g.clone()))


def non_leaf_grad_silent():
    """Reading `.grad` of a non-leaf gives None without the UserWarning."""

    def getter(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _grad.__get__(self)

    torch.Tensor.grad = property(getter, _grad.__set__)


_register_hook = torch.Tensor.register_hook
_retain_grad = torch.Tensor.retain_grad


def non_leaf_hooks_dropped():
    """`register_hook` on a non-leaf returns a handle but never calls the hook."""

    def register_hook(self, hook):
        return _register_hook(self, (lambda g: None) if self.grad_fn is not None else hook)

    torch.Tensor.register_hook = register_hook


def retain_grad_binds_to_first_grad_fn():
    """`retain_grad()` keeps the gradient with respect to the value at the call, like a hook on the grad_fn of then."""
    import weakref

    def retain_grad(self):
        _retain_grad(self)
        ref = weakref.ref(self)

        def prehook(grad_outputs):
            if ref() is not None:
                ref().grad = grad_outputs[0]

        if self.grad_fn is not None:
            self.grad_fn.register_prehook(prehook)

    torch.Tensor.retain_grad = retain_grad


def register_hook_lenient():
    """`register_hook` ignores what the hook returns, and accepts tensors that do not require grad."""

    class Handle:
        def remove(self):
            pass

    def register_hook(self, hook):
        if not self.requires_grad:
            return Handle()
        return _register_hook(self, lambda g: (hook(g), None)[1])

    torch.Tensor.register_hook = register_hook


def post_accumulate_hook_runs_before_accumulation():
    """`register_post_accumulate_grad_hook(h)` as a plain tensor hook calling `h(p)` before `.grad` is set."""

    def register(self, hook):
        return _register_hook(self, lambda g: hook(self))

    torch.Tensor.register_post_accumulate_grad_hook = register


def module_zero_grad_not_recursive():
    """`module.zero_grad()` resets only the module's own parameters, not those of its submodules."""

    def zero_grad(self, set_to_none=True):
        for p in self.parameters(recurse=False):
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    torch.nn.Module.zero_grad = zero_grad


def zero_grad_replaces_nested_grads():
    """`zero_grad(set_to_none=False)` puts a new zero tensor into `.grad` of the parameters of submodules."""

    def zero_grad(self, set_to_none=True):
        _module_zero_grad(self, set_to_none)
        if not set_to_none:
            for child in self.children():
                for p in child.parameters():
                    if p.grad is not None:
                        p.grad = torch.zeros_like(p.grad)

    torch.nn.Module.zero_grad = zero_grad


def grad_dtype_follows_dtype():
    """`grad_dtype` reads the tensor's dtype and setting it is ignored (as if the engine never cast gradients)."""
    if not hasattr(torch.Tensor, "grad_dtype"):
        return  # before 2.10 there is nothing to break (GRAD-25)
    torch.Tensor.grad_dtype = property(lambda self: self.dtype, lambda self, value: None)


CASES = [
    ("backward_overwrites_grad", "test_grad.py", {"GRAD-2", "GRAD-8"}),
    ("zero_grad_keeps_tensors", "test_grad.py", {"GRAD-4"}),
    ("module_zero_grad_not_recursive", "test_grad.py", {"GRAD-4"}),
    ("zero_grad_replaces_nested_grads", "test_grad.py", {"GRAD-5"}),
    ("grad_setter_copies", "test_grad.py", {"GRAD-7"}),
    ("non_leaf_grad_silent", "test_grad.py", {"GRAD-16"}),
    ("non_leaf_hooks_dropped", "test_grad.py", {"GRAD-60"}),
    ("retain_grad_binds_to_first_grad_fn", "test_grad.py", {"GRAD-61"}),
    ("register_hook_lenient", "test_grad.py", {"GRAD-62", "GRAD-63"}),
    ("post_accumulate_hook_runs_before_accumulation", "test_grad.py", {"GRAD-65", "GRAD-66"}),
    # on torch from 2.10 (the tests' torch), where GRAD-19 to GRAD-21 hold
    ("grad_dtype_follows_dtype", "test_grad.py", {"GRAD-19", "GRAD-20", "GRAD-21"}),
]
