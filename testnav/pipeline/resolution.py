"""Where the stopping certificate reads the measurement's resolution (testnav/stopping/epsilon.py:
`PerInput`, read at each checkpoint over the measured front).

* δ: the per-input outcomes of the front's members and of the clean set, from a ground-truth table's
  `correct` column (`TableOutcomes`) or a live oracle's (`LiveOutcomes`): δ(θ) = ψ(D) − ψ(T_θ) is the
  paired difference of two accuracies measured on the same inputs.
* ρ: its own sampling error on the data set (`RhoProbe`): D perturbed under θ and the metric's
  per-input values, z · SE (SSIM per image, chrF per sentence, BERT-F1 per pair), or for KID, a
  set-level statistic, the standard error of a bootstrap over the inputs (scipy.stats.bootstrap).
  It needs the data, so a replay of a table alone knows δ's resolution and not ρ's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..stopping.epsilon import PerInput


class TableOutcomes(PerInput):
    """δ's resolution from a ground-truth table's per-input outcomes `correct` ((|Θ|, N) bool, by
    lattice index); ρ's from `probe` where one is given (the data set opened), else not known."""

    def __init__(self, correct: np.ndarray, confidence: float, delta_span=1.0, rho_span=1.0, probe=None):
        super().__init__(correct.shape[1], confidence, delta_span, rho_span, probe.method if probe else None)
        self.correct, self.probe = correct, probe

    def outcomes(self, indices):
        return self.correct[np.asarray(indices, dtype=np.int64)]

    def clean(self):
        return self.correct[0]

    def rho_half_widths(self, indices):
        return self.probe.half_widths(indices, self.confidence)


class LiveOutcomes(PerInput):
    """δ's resolution from a live oracle's outcomes (each configuration it ran), ρ's from `probe`."""

    def __init__(self, oracle, confidence: float, probe=None):
        super().__init__(len(oracle.loaded.labels), confidence, rho_method=probe.method if probe else None)
        self.oracle, self.probe = oracle, probe

    def outcomes(self, indices):
        return np.stack([self.oracle.outcomes[int(i)] for i in indices])

    def clean(self):
        return np.asarray(self.oracle.session.clean["correct"], dtype=bool)

    def rho_half_widths(self, indices):
        return self.probe.half_widths(indices, self.confidence)


def table_outcomes(path, lattice) -> np.ndarray | None:
    """(|Θ|, N) bool by lattice index: the per-input outcomes of a ground-truth table (Parquet with a
    `correct` column); None where it holds none."""
    if not str(path).endswith(".parquet"):
        return None
    import pyarrow.dataset as ds

    names = ds.dataset(path).schema.names
    if "correct" not in names:
        return None
    levels = [f"t{i + 1}" for i in range(lattice.n)]
    df = pd.read_parquet(path, columns=[*levels, "correct"])
    out = np.zeros((lattice.size, len(df["correct"].iloc[0])), bool)
    out[lattice.index(df[levels].to_numpy(np.int64))] = np.stack(list(df["correct"]))
    return out


class RhoProbe:
    """ρ's half-width at each θ asked, read on the opened data set (a Session): D perturbed under θ
    by `walker` (a live oracle's, which caches prefixes; else the session's), seen as the benchmark
    shows it to its metrics, and the fidelity metric's own sampling error (`Metric.half_width`).
    `method`: the metric's `spread` ("per-input", "bootstrap", or None: ρ's resolution not known)."""

    def __init__(self, session, fidelity: str, walker=None):
        self.session, self.walker = session, walker
        self.metric = session.benchmark.metrics[fidelity]
        self.method: str | None = self.metric.spread

    def half_widths(self, indices, confidence: float) -> np.ndarray:
        s = self.session
        _ = s.clean  # the metrics prepared on D
        walker, lattice = self.walker or s.walker, s.benchmark.lattice
        return np.array(
            [
                self.metric.half_width(s.benchmark.view(s.loaded, walker.images(lattice.theta(int(i)))), confidence)
                for i in indices
            ]
        )
