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


CASES = [
    ("version_always_zero", "test_version_counter.py", {"VERSION-2", "VERSION-4", "VERSION-5"}),
    ("saved_tensors_are_copies", "test_version_counter.py", {"VERSION-6", "VERSION-8", "VERSION-9", "VERSION-18"}),
    ("backward_always_retains_graph", "test_version_counter.py", {"VERSION-11", "VERSION-12"}),
]
