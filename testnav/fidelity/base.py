"""The contract of a fidelity metric φ(T_θ, D): what every metric declares and checks.

Like torchmetrics' metric classes, a metric states whether higher is better and refuses bad
settings when it is built, so a wrong YAML fails before a ground-truth table is started rather
than hours into one. ρ = sign × φ (`sign` below) is then "higher is more faithful" for every metric.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..errors import UserError

SPREADS = (None, "per-input", "bootstrap")


class Metric(ABC):
    """Prepared once on the clean inputs (`prepare`), then called on each perturbed set, returning one
    raw float per configuration; `describe` is what the ground-truth key hashes of its settings.
    Subclasses set `higher_is_better` and `column` (the default name: the table column it writes)."""

    higher_is_better: bool
    column: str
    needs_features = False  # reads the tested model's features (KID on feature=model): a prediction function has none
    # How ρ's own sampling error on D is read (certificate.epsilon=auto needs it): "per-input" (φ is the mean
    # of `per_input`'s values), "bootstrap" (`half_width` overridden), None (not known: epsilon=auto refuses)
    spread: str | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not isinstance(cls.__dict__.get("higher_is_better", getattr(cls, "higher_is_better", None)), bool):
            raise TypeError(f"fidelity metric {cls.__name__} must declare higher_is_better = True or False")
        if cls.spread not in SPREADS:
            raise TypeError(f"fidelity metric {cls.__name__}: spread={cls.spread!r} (one of {SPREADS})")

    def __init__(self, name: str):
        if not name or not isinstance(name, str):
            raise UserError(f"metric name={name!r}: must be a non-empty string (the table column it writes)")
        self.name = name

    @property
    def sign(self) -> float:
        """ρ = sign × φ: +1 for a similarity, −1 for a distance (KID)."""
        return 1.0 if self.higher_is_better else -1.0

    def require(self, key: str, value, ok: bool, valid: str) -> None:
        """One argument check, one line naming the bad value and what is valid."""
        if not ok:
            raise UserError(f"metric {self.name}: {key}={value} ({valid})")

    @abstractmethod
    def prepare(self, clean) -> None: ...

    @abstractmethod
    def __call__(self, view) -> float: ...

    @abstractmethod
    def describe(self) -> dict: ...

    def per_input(self, view) -> np.ndarray:
        """(N,) φ on each input of `view` (a perturbed set as `__call__` takes it), φ being their mean;
        a metric whose `spread` is "per-input" gives it."""
        raise NotImplementedError(f"fidelity metric {self.name}: spread={self.spread!r} gives no per-input values")

    def half_width(self, view, confidence: float) -> float:
        """φ's half-width on `view` at `confidence`, from its sampling error over D's inputs: by default
        z · SE of the mean of `per_input` (statsmodels, testnav/stopping/epsilon.py)."""
        from ..stopping.epsilon import mean_half_widths

        return float(mean_half_widths(np.asarray(self.per_input(view), dtype=np.float64), confidence)[0])
