"""One partial tomography: measure the low-order tests, fit the surrogate, estimate all of Θ."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.early_stopping import Stopping
from ..core.lattice import Lattice
from ..paths import conf_defaults
from .executor import ObservedTests, low_order, replay_tests
from .independence import chi2_pairs, independent_estimates, product_estimates
from .surrogate import AdditiveLogitSurrogate, RobustnessSurrogate, ScoreSurrogate

SURROGATES = {"forest": RobustnessSurrogate, "additive": AdditiveLogitSurrogate}


def check_surrogate(name: str) -> str:
    if name not in SURROGATES:
        from ..errors import UserError

        raise UserError(f"tomography.surrogate={name} (valid: {', '.join(SURROGATES)})")
    return name


@dataclass
@conf_defaults("settings/tomography")
class Settings:
    """TestifAI's settings, `tomography.*`; their defaults are conf/settings/tomography.yaml's, read at import."""

    max_order: int
    batch: int  # the early-stopping rule (core/early_stopping.py): batches of b inputs, …
    window: int
    delta: float
    early_stopping: bool
    alpha: float
    relative_to_clean: bool
    seed: int
    surrogate: str  # forest (the paper's) | additive (logit-additive over orders ≤ 2)

    @property
    def rule(self) -> Stopping:
        return Stopping(self.batch, self.window, self.delta, self.early_stopping)

    @classmethod
    def from_config(cls, cfg) -> Settings:
        """The only reader of `tomography.*`: TestifAI's stages and TestNav's inference costs (which
        price every configuration under the same early-stopping rule) both come through here."""
        t = cfg.tomography
        return cls(
            int(t.max_order),
            int(t.batch),
            int(t.window),
            float(t.delta),
            bool(t.early_stopping),
            float(t.alpha),
            bool(t.relative_to_clean),
            int(t.seed),
            check_surrogate(str(t.get("surrogate", cls.surrogate))),  # a config saved before the setting
        )


@dataclass
class Tomography:
    lattice: Lattice
    names: list
    measured: ObservedTests
    table: (
        pd.DataFrame
    )  # one row per σ: levels, order, measured, n, r_measured, r_pred, r_est, r_indep, r_product, (q_*), (r_true)
    pairs: pd.DataFrame  # χ² per family pair
    n_inputs: int = 0  # N, the inputs a test reads when early stopping does not end it
    seed: int = 0
    # measure(indices) -> {index: outcomes}: more tests under the same early-stopping rule (replayed
    # from the ground truth, or live on the model); None where nothing more can be measured
    measure: Callable | None = None
    sampled: dict = field(default_factory=dict)  # tests measured for queries after the build: index -> outcomes
    reused: int = 0  # configurations read from what an earlier verb measured (0: measured here)
    measured_now: int = 0  # tests measured on the model for this tomography (0 with a ground truth)
    severities: list | None = None  # per family, the table entries its levels 1.. apply (None: the levels)
    parameters: list | None = None  # per family, its table's entries by parameter (core/severity.py; None: unknown)

    def sample_order(self, seed: int) -> np.ndarray:
        """A random order of the lattice from `seed` (a gate's run draws its own): the first tests of a
        query's unmeasured ones in it are a simple random sample of them, in a uniformly random order."""
        return np.random.default_rng([seed, 63]).permutation(self.lattice.size)

    def measure_tests(self, indices) -> None:
        """Measure the tests of `indices` not measured yet (kept in `sampled` for later queries)."""
        todo = [int(i) for i in indices if int(i) not in self.sampled and not self.table.measured.iat[int(i)]]
        if todo:
            if self.measure is None:
                raise RuntimeError("this tomography cannot measure more tests")
            self.sampled.update(self.measure(todo))


def build(
    lattice: Lattice,
    names,
    measured: ObservedTests,
    settings: Settings,
    quality_measured=None,
    truth: np.ndarray | None = None,
    quality_truth: np.ndarray | None = None,
    n_inputs: int = 0,
    measure=None,
) -> Tomography:
    """quality_measured: lattice index -> q_σ for the measured tests (or None)."""
    r = {i: float(np.mean(v)) for i, v in measured.tests.items()}
    n = {i: len(v) for i, v in measured.tests.items()}
    r_pred = SURROGATES[settings.surrogate](seed=settings.seed).fit(lattice, measured.tests).predict()
    is_measured = np.zeros(lattice.size, bool)
    is_measured[list(measured.tests)] = True
    r_meas = np.full(lattice.size, np.nan)
    r_meas[list(r)] = list(r.values())
    table = pd.DataFrame(lattice.tuples, columns=[f"t{i + 1}" for i in range(lattice.n)])
    table["order"] = lattice.orders
    table["measured"] = is_measured
    table["n"] = [n.get(i, 0) for i in range(lattice.size)]
    table["r_measured"] = r_meas
    table["r_pred"] = r_pred
    table["r_est"] = np.where(is_measured, r_meas, r_pred)  # what TestifAI knows: measured, else predicted
    pairs = (
        chi2_pairs(lattice, measured.tests, settings.alpha, settings.relative_to_clean)
        if lattice.n >= 2
        else pd.DataFrame()
    )
    table["r_indep"] = independent_estimates(lattice, r, pairs, settings.relative_to_clean) if len(pairs) else np.nan
    table["r_product"] = product_estimates(lattice, r, settings.relative_to_clean) if lattice.n >= 2 else np.nan
    if quality_measured:
        idx = np.array(sorted(quality_measured))
        q_pred = ScoreSurrogate(seed=settings.seed).fit(lattice, idx, [quality_measured[i] for i in idx]).predict()
        q_meas = np.full(lattice.size, np.nan)
        q_meas[idx] = [quality_measured[i] for i in idx]
        table["q_measured"], table["q_pred"] = q_meas, q_pred
        table["q_est"] = np.where(np.isnan(q_meas), q_pred, q_meas)
    if truth is not None:
        table["r_true"] = truth
    if quality_truth is not None:
        table["q_true"] = quality_truth
    pairs = (
        pairs.assign(family_i=[names[i] for i in pairs.family_i], family_j=[names[j] for j in pairs.family_j])
        if len(pairs)
        else pairs
    )
    n_inputs = n_inputs or max((len(v) for v in measured.tests.values()), default=0)
    return Tomography(lattice, list(names), measured, table, pairs, n_inputs, settings.seed, measure)


def sub_lattice(outcomes: np.ndarray, lattice: Lattice, keep: list[int]):
    """Restrict a ground truth to the families in `keep` (the others at level 0): the paper's
    3D tomography is the first three families of a 4-family benchmark."""
    rows = np.flatnonzero((np.delete(lattice.tuples, keep, axis=1) == 0).all(axis=1))
    sub = Lattice(len(keep), lattice.levels)
    order = np.argsort(sub.index(lattice.tuples[rows][:, keep]))
    return sub, rows[order]


def from_groundtruth(outcomes: np.ndarray, lattice: Lattice, names, settings: Settings, quality=None) -> Tomography:
    """Replay: low-order tests read from the per-input outcomes (|Θ|, N) of a ground truth."""
    measured = replay_tests(outcomes, lattice, low_order(lattice, settings.max_order), settings.rule, settings.seed)
    qm = {i: float(quality[i]) for i in measured.tests} if quality is not None else None

    def measure(indices) -> dict:
        return replay_tests(outcomes, lattice, indices, settings.rule, settings.seed).tests

    return build(
        lattice,
        names,
        measured,
        settings,
        qm,
        truth=outcomes.mean(axis=1),
        quality_truth=quality,
        n_inputs=outcomes.shape[1],
        measure=measure,
    )
