"""Ways to break what spec/copy.md states (`x.copy_(src)` is checked, recorded, and keeps x's metadata)."""

import warnings

import torch

_copy = torch.Tensor.copy_


def copy_ignores_leaf_check():
    """`copy_` into a leaf that requires grad done silently, as if under no_grad."""

    def copy_(self, src, non_blocking=False):
        if self.is_leaf and self.requires_grad and torch.is_grad_enabled():
            with torch.no_grad():
                return _copy(self, src, non_blocking)
        return _copy(self, src, non_blocking)

    torch.Tensor.copy_ = copy_


def copy_adopts_source_metadata():
    """`copy_` that gives `x` the shape and dtype of `src` (what the Korean source claims)."""

    def copy_(self, src, non_blocking=False):
        self.data = src.detach().clone().to(self.device)
        return self

    torch.Tensor.copy_ = copy_


def copy_not_recorded():
    """`copy_` into a tensor in a graph that autograd does not record."""

    def copy_(self, src, non_blocking=False):
        with torch.no_grad():
            return _copy(self, src, non_blocking)

    torch.Tensor.copy_ = copy_


def copy_into_view_not_recorded():
    """`copy_` into a view runs under no_grad: the view keeps its view node, its base no CopySlices."""

    def copy_(self, src, non_blocking=False):
        if self._is_view():
            with torch.no_grad():
                return _copy(self, src, non_blocking)
        return _copy(self, src, non_blocking)

    torch.Tensor.copy_ = copy_


def complex_into_bool_takes_real_part():
    """`copy_` of a complex `src` into bool keeps the truth of the real part only (torch before 2.4, COPY-20)."""

    def copy_(self, src, non_blocking=False):
        if self.dtype == torch.bool and src.is_complex():
            src = src.real
        return _copy(self, src, non_blocking)

    torch.Tensor.copy_ = copy_


def complex_to_real_warns_every_time():
    """`copy_` of a complex `src` into a real dtype warns at every copy, not once per process."""

    def copy_(self, src, non_blocking=False):
        if src.is_complex() and not self.is_complex() and self.dtype != torch.bool:
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
        return _copy(self, src, non_blocking)

    torch.Tensor.copy_ = copy_


CASES = [
    ("copy_ignores_leaf_check", "test_copy.py", {"COPY-1", "COPY-2"}),
    ("copy_adopts_source_metadata", "test_copy.py", {"COPY-8", "COPY-11"}),
    ("copy_not_recorded", "test_copy.py", {"COPY-1", "COPY-5", "COPY-6", "COPY-7"}),
    ("copy_into_view_not_recorded", "test_copy.py", {"COPY-18"}),
    # on torch from 2.4 (the tests' torch), where COPY-19 holds
    ("complex_into_bool_takes_real_part", "test_copy.py", {"COPY-19"}),
    ("complex_to_real_warns_every_time", "test_copy.py", {"COPY-13"}),
]
