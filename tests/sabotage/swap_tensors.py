"""Ways to break `torch.utils.swap_tensors` and swapping module conversion (spec/swap_tensors.md)."""

import torch
import torch.__future__ as future


def swap_exchanges_data_only():
    """`swap_tensors` as a `.data` exchange: no class, `__dict__` or autograd state swap, no safety checks."""

    def swap(t1, t2):
        d1, d2 = t1.data, t2.data
        t1.data, t2.data = d2, d1

    torch.utils.swap_tensors = swap


def swap_does_nothing():
    """`swap_tensors` returns at once: no error, nothing exchanged."""
    torch.utils.swap_tensors = lambda t1, t2: None


def swap_flag_ignored():
    """Module conversion ignores the swap flag (always the default path)."""
    future.get_swap_module_params_on_conversion = lambda: False


_double = torch.nn.Module.double
_to = torch.nn.Module.to


def double_skips_submodules():
    """`module.double()` converts only the module's own parameters, not those of its submodules."""

    def double(self):
        for name, p in list(self._parameters.items()):
            if p is not None and p.is_floating_point():
                if future.get_overwrite_module_params_on_conversion():
                    self._parameters[name] = torch.nn.Parameter(p.detach().double(), p.requires_grad)
                else:
                    p.data = p.data.double()
                    if p.grad is not None:
                        p.grad.data = p.grad.data.double()
        return self

    torch.nn.Module.double = double


def to_device_keeps_parameter_objects():
    """`module.to(device)` moves each parameter by assigning `.data` (the old object stays, on the new device)."""

    def to(self, *args, **kwargs):
        device = args[0] if args and isinstance(args[0], (str, torch.device)) else None
        if device is None:
            return _to(self, *args, **kwargs)
        for p in self.parameters():
            p.data = p.data.to(device)
        return self

    torch.nn.Module.to = to


CASES = [
    ("swap_exchanges_data_only", "test_swap_tensors.py", {"SWAP-3", "SWAP-4", "SWAP-5"}),
    ("swap_does_nothing", "test_swap_tensors.py", {"SWAP-1", "SWAP-13"}),
    ("swap_flag_ignored", "test_swap_tensors.py", {"SWAP-10", "SWAP-11"}),
    ("double_skips_submodules", "test_swap_tensors.py", {"SWAP-8", "SWAP-12"}),
    ("to_device_keeps_parameter_objects", "test_swap_tensors.py", {"SWAP-9"}),
]
