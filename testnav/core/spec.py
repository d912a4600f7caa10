"""The base of a verb's settings: one frozen spec per verb, written once.

A spec (`ScanSpec`, `CompareSpec`, `ReportSpec` in testnav/pipeline/specs.py, `QuerySpec` in
testnav/tomography/query.py; the search's `RunSpec` and `CertificateConfig` predate this base) is a
frozen dataclass whose defaults conf/settings/<node>.yaml holds (`testnav.paths.conf_defaults`), and
whose `__post_init__` checks every value once, in one line that names the key as the command line
writes it (`compare.max_drop=2: …`; the Tester says the same in its Python words). The command line
builds it from its node (`from_node(cfg.compare)`), Python from keywords (`given(max_drop=None, …)`,
where None takes the YAML's default), so both read one default for every setting.
"""

from __future__ import annotations

from dataclasses import fields

from ..errors import UserError


class Spec:
    """A verb's settings; a subclass is a frozen dataclass under `paths.conf_defaults` and names its
    YAML's node in `node` (a class attribute, not a field)."""

    node = ""

    @classmethod
    def from_node(cls, node, ignore=()):
        """From the command line's node (a DictConfig or a dict); a key that is not a setting is refused
        in one line, those of `ignore` (what the node holds beside the settings) are left out."""
        items = dict(node.items()) if node is not None else {}
        valid = [f.name for f in fields(cls)]
        for key in items:
            if key not in valid and key not in ignore:
                raise UserError(f"{cls.node}.{key}: no such setting (valid: {', '.join(valid)})")
        return cls(**{k: v for k, v in items.items() if k in valid})

    def as_float(self, *names) -> None:
        """The settings `names` kept as floats (a whole number given for a share reads 0.0, not 0)."""
        for name in names:
            if getattr(self, name) is not None:
                object.__setattr__(self, name, float(getattr(self, name)))

    @classmethod
    def given(cls, **settings):
        """From Python keywords: None takes the default conf/settings/<node>.yaml holds."""
        return cls.from_node({k: v for k, v in settings.items() if v is not None})


def whole(value, low: int = 0) -> bool:
    """A whole number ≥ `low` (not a bool)."""
    import numpy as np

    return bool(not isinstance(value, bool) and isinstance(value, (int, np.integer)) and value >= low)


def share(value) -> bool:
    """A number in [0, 1) (not a bool): a share of the inputs or of the configurations."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value < 1
