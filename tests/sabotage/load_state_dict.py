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


_state_dict = nn.Module.state_dict


def state_dict_keeps_vars():
    """`state_dict()` returns the parameter and buffer objects themselves, as with `keep_vars=True`."""
    nn.Module.state_dict = lambda self, *args, keep_vars=False, **kwargs: _state_dict(
        self, *args, keep_vars=True, **kwargs
    )


def state_dict_ignores_keep_vars():
    """`state_dict(keep_vars=True)` detaches all the same."""
    nn.Module.state_dict = lambda self, *args, keep_vars=False, **kwargs: _state_dict(
        self, *args, keep_vars=False, **kwargs
    )


def state_dict_clones():
    """`state_dict()` returns copies of the parameters and buffers (a snapshot, not references)."""

    def state_dict(self, *args, **kwargs):
        result = _state_dict(self, *args, **kwargs)
        for key, value in result.items():
            result[key] = value.clone()
        return result

    nn.Module.state_dict = state_dict


def meta_load_silent():
    """Loading into a module on `meta` emits no warning."""
    import warnings

    def load(self, state_dict, strict=True, assign=False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _load(self, state_dict, strict=strict, assign=assign)

    nn.Module.load_state_dict = load


def assign_ignored():
    """`assign=True` is accepted and ignored: the load copies in place."""

    def load(self, state_dict, strict=True, assign=False):
        return _load(self, state_dict, strict=strict)

    nn.Module.load_state_dict = load


CASES = [
    ("load_always_assigns", "test_load_state_dict.py", {"LOADSD-1", "LOADSD-2", "LOADSD-3", "LOADSD-4", "LOADSD-64"}),
    ("state_dict_keeps_vars", "test_load_state_dict.py", {"LOADSD-60"}),
    ("state_dict_ignores_keep_vars", "test_load_state_dict.py", {"LOADSD-63"}),
    ("state_dict_clones", "test_load_state_dict.py", {"LOADSD-60", "LOADSD-61", "LOADSD-62"}),
    ("meta_load_silent", "test_load_state_dict.py", {"LOADSD-65"}),
    ("assign_ignored", "test_load_state_dict.py", {"LOADSD-8", "LOADSD-67"}),
    ("load_never_strict", "test_load_state_dict.py", {"LOADSD-6"}),
    ("assign_always_requires_grad", "test_load_state_dict.py", {"LOADSD-10"}),
]
