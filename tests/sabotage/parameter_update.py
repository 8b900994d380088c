"""Ways to break parameter updates (spec/parameter_update.md)."""

import torch

_sgd_step = torch.optim.SGD.step
_setattr = torch.nn.Module.__setattr__


def sgd_step_swaps_data():
    """`SGD.step()` as `p.data = p - lr * p.grad`: right values, but no version bump (the check is lost)."""

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.data = p - group["lr"] * p.grad

    torch.optim.SGD.step = step


def sgd_step_clears_grad():
    """`SGD.step()` that zeroes `.grad` in place after updating."""

    def step(self, closure=None):
        result = _sgd_step(self, closure)
        with torch.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.zero_()
        return result

    torch.optim.SGD.step = step


def module_accepts_tensor_for_parameter():
    """`model.weight = tensor` silently wraps the tensor into a new Parameter instead of raising."""

    def setattr_(self, name, value):
        params = self.__dict__.get("_parameters")
        if params is not None and name in params and isinstance(value, torch.Tensor):
            if not isinstance(value, torch.nn.Parameter):
                value = torch.nn.Parameter(value.detach())
        _setattr(self, name, value)

    torch.nn.Module.__setattr__ = setattr_


def sgd_step_skips_3d_parameters():
    """`SGD.step()` that leaves parameters of more than two dimensions (a convolution's weight) as they were."""

    def step(self, closure=None):
        saved = [(g, g["params"]) for g in self.param_groups]
        for g, params in saved:
            g["params"] = [p for p in params if p.dim() <= 2]
        try:
            return _sgd_step(self, closure)
        finally:
            for g, params in saved:
                g["params"] = params

    torch.optim.SGD.step = step


CASES = [
    ("sgd_step_swaps_data", "test_parameter_update.py", {"PUPD-5", "PUPD-11"}),
    ("sgd_step_clears_grad", "test_parameter_update.py", {"PUPD-5", "PUPD-6"}),
    ("sgd_step_skips_3d_parameters", "test_parameter_update.py", {"PUPD-5"}),
    ("module_accepts_tensor_for_parameter", "test_parameter_update.py", {"PUPD-9"}),
]
