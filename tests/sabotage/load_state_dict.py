"""Ways to break `Module.load_state_dict` (spec/load_state_dict.md)."""

from torch import nn

_load = nn.Module.load_state_dict


def load_always_assigns():
    """The default load replaces the parameter objects (as `assign=True`) instead of copying in place."""

    def load(self, state_dict, strict=True, assign=False):
        return _load(self, state_dict, strict=strict, assign=True)

    nn.Module.load_state_dict = load


def load_never_strict():
    """Key mismatches are ignored even with `strict=True`."""

    def load(self, state_dict, strict=True, assign=False):
        return _load(self, state_dict, strict=False, assign=assign)

    nn.Module.load_state_dict = load


def assign_always_requires_grad():
    """With `assign=True`, every loaded parameter requires grad (as on 2.1, whatever the module's had)."""

    def load(self, state_dict, strict=True, assign=False):
        result = _load(self, state_dict, strict=strict, assign=assign)
        if assign:
            for param in self.parameters():
                param.requires_grad_(True)
        return result

    nn.Module.load_state_dict = load


CASES = [
    ("load_always_assigns", "test_load_state_dict.py", {"LOADSD-1", "LOADSD-2", "LOADSD-3", "LOADSD-4"}),
    ("load_never_strict", "test_load_state_dict.py", {"LOADSD-6"}),
    ("assign_always_requires_grad", "test_load_state_dict.py", {"LOADSD-10"}),
]
