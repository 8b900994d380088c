"""Ways to break `.data` (spec/data.md)."""

import torch

_data = torch.Tensor.data


def data_returns_detach():
    """`.data` as `detach()`: shares the version counter and keeps autograd's check."""
    torch.Tensor.data = property(lambda self: self.detach(), _data.__set__)


def assign_data_copies_values():
    """`x.data = t` as an in-place copy: no storage swap, no shape change."""

    def setter(self, value):
        if not isinstance(value, torch.Tensor):
            raise TypeError("Variable data has to be a tensor, but got " + type(value).__name__)
        with torch.no_grad():
            self.detach().resize_(value.shape).copy_(value)

    torch.Tensor.data = property(_data.__get__, setter)


def assign_data_counts():
    """`x.data = t` swaps the storage and also adds 1 to `x._version` (as an in-place operation would)."""

    def setter(self, value):
        _data.__set__(self, value)
        torch.autograd.graph.increment_version(self)

    torch.Tensor.data = property(_data.__get__, setter)


def data_of_zero_size_shares_version():
    """`.data` of a zero-size tensor is its `detach()` (shares the version counter); every other kind is as before."""
    torch.Tensor.data = property(
        lambda self: self.detach() if self.numel() == 0 else _data.__get__(self), _data.__set__
    )


CASES = [
    ("assign_data_counts", "test_data.py", {"DATA-60", "DATA-8"}),
    ("data_returns_detach", "test_data.py", {"DATA-3", "DATA-4", "DATA-6"}),
    ("assign_data_copies_values", "test_data.py", {"DATA-9", "DATA-8"}),
    ("data_of_zero_size_shares_version", "test_data.py", {"DATA-3"}),
]
