"""Ways to break `torch.utils.swap_tensors` and swapping module conversion (spec/swap_tensors.md)."""

import torch
import torch.__future__ as future


def swap_exchanges_data_only():
    """`swap_tensors` as a `.data` exchange: no class, `__dict__` or autograd state swap, no safety checks."""

    def swap(t1, t2):
        d1, d2 = t1.data, t2.data
        t1.data, t2.data = d2, d1

    torch.utils.swap_tensors = swap


def swap_flag_ignored():
    """Module conversion ignores the swap flag (always the default path)."""
    future.get_swap_module_params_on_conversion = lambda: False


CASES = [
    ("swap_exchanges_data_only", "test_swap_tensors.py", {"SWAP-3", "SWAP-4", "SWAP-5"}),
    ("swap_flag_ignored", "test_swap_tensors.py", {"SWAP-10", "SWAP-11"}),
]
