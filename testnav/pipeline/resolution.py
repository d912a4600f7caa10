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

from typing import Any

import numpy as np
import pandas as pd

from ..stopping.epsilon import PerInput, mean_half_widths

BOOTSTRAP_RESAMPLES = 100  # KID's bootstrap over the inputs
BOOTSTRAP_INPUTS = 1_000  # at most this many inputs resampled (its SE scaled by √(m / N) beyond: O(N²) kernels)


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
    by `walker` (a live oracle's, which caches prefixes; else the session's) and the fidelity metric's
    per-input values, or its bootstrap. `method`: "per-input", "bootstrap", or None where the metric
    has no reader here (then ρ's resolution is not known)."""

    def __init__(self, session, fidelity: str, walker=None):
        self.session, self.walker = session, walker
        self.metric = session.benchmark.metrics[fidelity]
        found = next(((m, f) for cls, (m, f) in readers().items() if isinstance(self.metric, cls)), (None, None))
        self.method: str | None = found[0]
        self._read: Any = found[1]
        self._real: Any = None  # KID: the clean set's features, once

    def half_widths(self, indices, confidence: float) -> np.ndarray:
        _ = self.session.clean  # the metrics prepared on D
        walker = self.walker or self.session.walker
        lattice = self.session.benchmark.lattice
        return np.array([self._read(self, walker.images(lattice.theta(int(i))), confidence) for i in indices])


def ssim_values(probe: RhoProbe, perturbed, confidence: float) -> float:
    from ..fidelity.ssim import ssim_per_image

    m, clean = probe.metric, probe.session.loaded.inputs
    values = [
        ssim_per_image(perturbed[i : i + m.batch_size], clean[i : i + m.batch_size], m.data_range, m.sigma)
        for i in range(0, len(clean), m.batch_size)
    ]
    return float(mean_half_widths(np.concatenate([v.double().cpu().numpy() for v in values]), confidence)[0])


def chrf_values(probe: RhoProbe, perturbed, confidence: float) -> float:
    from sacrebleu.metrics import CHRF

    m = probe.metric
    chrf = CHRF(char_order=m.char_order, word_order=m.word_order, beta=m.beta, whitespace=m.whitespace)
    scores = [chrf.sentence_score(h, [r]).score for h, r in zip(perturbed.texts(), m.refs)]
    return float(mean_half_widths(np.array(scores), confidence)[0])


def bert_values(probe: RhoProbe, perturbed, confidence: float) -> float:
    return float(mean_half_widths(np.array(probe.metric.pair_f1(perturbed.texts())), confidence)[0])


def kid_bootstrap(probe: RhoProbe, perturbed, confidence: float) -> float:
    """z · the standard error of KID over the inputs: (clean, perturbed) pairs resampled with replacement
    (scipy.stats.bootstrap, seeded), the unbiased MMD² of the metric's polynomial kernel on each resample;
    on a seeded subset of BOOTSTRAP_INPUTS inputs beyond that many, its SE scaled by √(m / N)."""
    import torch
    from scipy.stats import bootstrap, norm

    from ..benchmarks.vision import View

    m, s, b = probe.metric, probe.session, probe.session.benchmark
    if probe._real is None:
        probe._real = m.features(View(s.loaded.inputs, s.loaded.model, b.batch_size, amp=b.amp)).double()
    with torch.no_grad():
        fake = m.features(View(perturbed, s.loaded.model, b.batch_size, amp=b.amp)).double()
    n = len(fake)
    keep = np.sort(np.random.default_rng(0).choice(n, min(n, BOOTSTRAP_INPUTS), replace=False))
    real, fake = probe._real[keep], fake[keep]
    gamma = 1.0 / real.shape[1]
    kernel = [
        ((x @ y.T) * gamma + m.coef).pow(m.degree).cpu().numpy() for x, y in ((real, real), (fake, fake), (real, fake))
    ]

    def kid(i):
        i = i.astype(np.int64)
        rr, ff, rf = (k[np.ix_(i, i)] for k in kernel)
        k = len(i)
        return (rr.sum() - np.trace(rr) + ff.sum() - np.trace(ff)) / (k * (k - 1)) - 2 * rf.sum() / k**2

    res = bootstrap(
        (np.arange(len(keep)),), kid, n_resamples=BOOTSTRAP_RESAMPLES, vectorized=False, method="percentile", rng=0
    )
    return float(norm.ppf(0.5 + confidence / 2) * res.standard_error * np.sqrt(len(keep) / n))


def readers() -> dict:
    """Metric class → (method, reader): ρ's sampling error where it is known here."""
    from ..fidelity.bertscore import BERTScoreF1
    from ..fidelity.chrf import ChrF
    from ..fidelity.kid import KID
    from ..fidelity.ssim import SSIM

    return {
        SSIM: ("per-input", ssim_values),
        ChrF: ("per-input", chrf_values),
        BERTScoreF1: ("per-input", bert_values),
        KID: ("bootstrap", kid_bootstrap),
    }
