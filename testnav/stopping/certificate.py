"""When may I stop testing? A stopping certificate for every search (docs/tomonav.md).

After each batch of new configurations (a checkpoint), p_complete estimates the probability
that the front P* is already complete: that no unmeasured θ is non-dominated by the measured
front. (P* is complete exactly when every unmeasured θ is dominated by a measured one: a chain
of dominating configurations ends on P*, so an unmeasured θ escapes the measured front only if
some member of P* is still unmeasured.) Two readings of the number of members still missing:

* `fresh`, the members of the measured front first measured since the previous checkpoint.
  A search that just found some will likely find as many again (a Good–Turing reading of
  its own discovery rate), so while fresh > 0, p_complete = exp(−fresh) ≤ 0.37.
* Once a window found none, `missing`: a conformally calibrated forest (Surrogate, kind
  `forest`, with its out-of-bag scores) is fitted to the measured points, each unmeasured
  θ's predictive draws μ + σ·e give its chance p_θ of escaping the front, and Σ p_θ is the
  surrogate's expected number of members still unmeasured. That sum is only as good as the
  surrogate: on smooth tables it overstates a hundredfold (wide bands over thousands of θ),
  on noisy ones it cannot see the noise spikes that make up the last members. So it is
  rescaled by the surrogate's own record in this run: after each fit, the configurations the
  search measures next are scored by that fit (their p_θ summed: the members it expected
  there) and the members really found among them are counted; missing = Σ p_θ × (found + 1)
  / (expected + 1) over all such windows so far (observed over expected, add-one smoothed:
  1 until there is a record). p_complete = exp(−missing / (share · |measured front|)): the
  calibrated shortfall as a share of the front. A front that has settled (the run has measured
  `quiet` × as many configurations as when the front's newest member was measured) is allowed
  `quiet_relax` × that share: a search whose discoveries have stopped for that long has found
  its last member in most runs (docs/tomonav.md).

Above `reuse_above` configurations (the lattices where TomoNav ranks a pool; those of both
papers keep the rule above), checkpoints come `dense_growth` rather than `growth` apart, and cost
almost nothing between fits:
* `fresh` counts the front members first measured among the last max(every, (1 − 1/growth)·u)
  of the u configurations measured: the window of the sparser schedule, so a stop needs the
  same quiet spell, but is noticed sooner;
* the surrogate is fitted once per quiet spell. While no window finds a member the measured
  front is unchanged, so that fit's p_θ still hold for the θ still unmeasured and `missing` is
  their sum; what the quiet windows measured enters through the record instead of a refit.
  Refits were most of the certificate's cost there (docs/tomonav.md).

It depends only on the proposals and their values, so the same numbers come out whether a
search feeds it batch by batch (CertifiedOracle, replay and live) or it is computed from a
finished run's proposals (the vectorised engine, which never calls the oracle per batch).
`stop_at` ends the run at the first checkpoint where the chosen reading ≥ stop_at. p_good is a stopping
score, not a probability, and stops a run only where ε is at least the measurement's resolution (read
at each checkpoint, epsilon.Resolver: below it the run searches on to its budget and says why in one
line) and every unit-step neighbour of the measured front is measured (`unexplored` = 0: without it p_good
stopped TomoNav falsely on 4 of 6 runs of the 625-configuration models at auto; docs/tomonav.md). The
surrogate is fitted only where fresh = 0, so the certificate costs little while the search is still finding.

The parts: Certificate keeps the Schedule (`split`, `feed`) and what was measured (Measurements,
testnav/stopping/measured.py); each rule is an estimator (testnav/stopping/estimators.py:
CompleteEstimator, GoodEstimator) that owns its fit, reuse and record, is handed the MeasuredSet at
each checkpoint and returns its Reading (a Checkpoint holds one per rule); how the surrogate is
fitted is one frozen Fitting, the tuned constants one frozen Tuning (testnav/stopping/tuning.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from ..core.lattice import Lattice
from ..core.oracle import Oracle
from ..errors import UserError, note
from ..paths import conf_defaults
from .epsilon import AUTO, Resolution, Resolver, certifiable, tolerance
from .estimators import CheckpointFit, CompleteEstimator, CompleteReading, Fitting, GoodEstimator, GoodReading
from .measured import MeasuredSet, Measurements
from .pool import neighbours
from .tuning import TUNED, Tuning

OBJECTIVES = ("delta", "rho")
STOP_ON = ("auto", "complete", "good")


@dataclass(frozen=True)
@conf_defaults("settings/certificate")
class CertificateConfig:
    """The certificate's settings; their defaults are conf/settings/certificate.yaml's, read at import
    (epsilon: 0.01, its value on every stage but live)."""

    stop_at: float | None  # end the run once the chosen certificate reaches this; None: never
    stop_on: str  # complete (p_complete) | good (p_good) | auto: good live, complete replaying a table
    # p_good's tolerance: a share of each objective's measured range, or "auto": the measurement's
    # resolution (the paired difference of two accuracies on the data set's N inputs, ρ's own sampling
    # error; epsilon.Resolution). p_good does not stop a run at an ε below that resolution (certifiable)
    epsilon: float | str
    every: int | None  # new configurations between checkpoints; None: by the lattice's size
    # p_complete's tolerance: the calibrated shortfall as a share of the front (the YAML's 0.5 was chosen
    # with the add-one calibration, Tuning's docstring): stop at 0.95 ⇔ calibrated missing ≤ 0.026 × |front|
    share: float

    def __post_init__(self):
        if self.stop_at is not None and (isinstance(self.stop_at, bool) or not 0 < self.stop_at <= 1):
            raise UserError(f"certificate.stop_at={self.stop_at}: a probability in (0, 1], or null to never stop early")
        if self.stop_on not in STOP_ON:
            raise UserError(f"certificate.stop_on={self.stop_on} (valid: {', '.join(STOP_ON)})")
        if self.epsilon != AUTO and (
            isinstance(self.epsilon, (bool, str))
            or not isinstance(self.epsilon, (int, float))
            or not 0 <= self.epsilon < 1
        ):
            raise UserError(
                f"certificate.epsilon={self.epsilon}: a share of each objective's range in [0, 1), or auto "
                "(the measurement's resolution on the data set's N inputs)"
            )
        if self.every is not None and (isinstance(self.every, bool) or int(self.every) != self.every or self.every < 1):
            raise UserError(f"certificate.every={self.every}: a whole number of configurations ≥ 1, or null (by size)")
        if isinstance(self.share, bool) or not self.share > 0:
            raise UserError(f"certificate.share={self.share}: must be > 0")

    def rule(self, live: bool) -> str:
        """The certificate that stops the run: `stop_on`, where `auto` is `good` on a live run
        (a practitioner's model, where every configuration costs) and `complete` replaying a
        table (the exact front, as the papers compare searches)."""
        return ("good" if live else "complete") if self.stop_on == "auto" else self.stop_on

    def for_run(self, live: bool) -> CertificateConfig:
        """These settings with `stop_on` resolved for a live run or a replay."""
        return replace(self, stop_on=self.rule(live))

    @classmethod
    def from_node(cls, node) -> CertificateConfig:
        """From a `certificate:` node (a DictConfig or a dict); an unknown key is refused."""
        items = dict(node.items()) if node is not None else {}
        valid = [f.name for f in fields(cls)]
        for key in items:
            if key not in valid:
                raise UserError(f"certificate.{key}: no such setting (valid: {', '.join(valid)})")
        return cls(**items)


@dataclass(frozen=True)
class Checkpoint:
    """What the certificate read at one checkpoint (one is recorded per checkpoint): one Reading per rule,
    the tolerance p_good used, the measurement's resolution there and whether ε is at least that."""

    proposals: int  # proposals made so far (b)
    unique: int  # configurations measured so far (u)
    remaining: int  # configurations not measured (θ = 0 aside): at most this many can be missing
    front: int  # |measured front| (0 where too few points are measured, or Θ is exhausted)
    complete: CompleteReading  # p_complete and what it was read from
    good: GoodReading  # p_good and what it was read from
    eps: tuple = (np.nan, np.nan)  # (ε_δ, ε_ρ) p_good read with, in the units of the values fed
    resolution: Resolution | None = None  # the measurement's resolution here (None: not known, or no front)
    certifiable: bool | None = None  # ε ≥ the resolution on each objective it is known for (None: not known)
    unexplored: int = 0  # unmeasured unit-step neighbours of the measured front (p_good stops only at 0)

    def p(self, rule: str) -> float:
        """The certificate `rule` (complete | good) names."""
        return (self.good if rule == "good" else self.complete).p

    def row(self) -> dict:
        """Flat, as the studies store a checkpoint (scripts/stopping_study.py): p_complete, p_good,
        fresh, fresh_good, missing, missing_good, settled, improved beside the counts."""
        c, g = self.complete, self.good
        out: dict[str, object] = dict(
            proposals=self.proposals, unique=self.unique, remaining=self.remaining, p_complete=c.p, p_good=g.p
        )
        out.update(fresh=c.fresh, fresh_good=g.fresh, front=self.front, missing=c.missing, missing_good=g.missing)
        out.update(settled=c.settled, improved=g.improved, eps_delta=self.eps[0], eps_rho=self.eps[1])
        res = self.resolution.tolerance() if self.resolution is not None else (np.nan, np.nan)
        out.update(
            resolution_delta=res[0], resolution_rho=res[1], certifiable=self.certifiable, unexplored=self.unexplored
        )
        return out


def default_every(size: int, rule: str = "complete", tuning: Tuning = TUNED) -> int:
    """Checkpoint spacing when `every` is not set: 5 % of Θ (65 on 6⁴), between 10 and every_cap
    (good_every_cap stopping on p_good: an ε-front settles well before 40,000 configurations).
    The window in which the last front member is found never counts as quiet, so a stop comes at
    least one window after full recall; 2.5 % was tried too (closer stops on the training tables,
    later ones on held-out tables: docs/notes/2026-12-05-tomonav-history.md)."""
    cap = tuning.good_every_cap if rule == "good" else tuning.every_cap
    return max(10, min(-(-size // tuning.every_share), cap))


class Schedule:
    """Where the checkpoints fall: after `every` new configurations, or `growth` × further (`after`);
    `next`, u at the next one. `window_growth` is the sparser schedule's growth (Tuning.growth),
    whose window a dense schedule counts fresh members over (`window_start`)."""

    def __init__(self, every: int, growth: float, window_growth: float):
        self.every, self.growth, self.window_growth = every, growth, window_growth
        self.next = every

    def after(self, mark: int) -> int:
        """The checkpoint after `mark`: `every` new configurations on, or `growth` × mark if
        further, so a run of u configurations has O(log u) checkpoints, each stop comes within
        a factor `growth` of where the statistic first allowed it."""
        return max(mark + self.every, int(np.ceil(mark * self.growth)))

    def marks(self, u: int) -> list[int]:
        """The checkpoints due up to `u` configurations measured."""
        marks: list[int] = []
        t = self.next
        while t <= u:
            marks.append(t)
            t = self.after(t)
        return marks

    def passed(self, u: int) -> None:
        """A checkpoint was read at `u`: the next one is the first due beyond it."""
        while self.next <= u:
            self.next = self.after(self.next)

    def window_start(self, u: int) -> float:
        """Dense: the trailing window's start, max(every, (1 − 1/window_growth)·u) configurations back
        (the window of the sparser schedule, so a stop needs the same quiet spell, but is noticed sooner)."""
        return u - max(self.every, (1 - 1 / self.window_growth) * u)


class Certificate:
    """The certificate of one run: feed it the run's chunks (`split`, `feed`) or its finished
    proposals (`finish`); `records` holds one Checkpoint per checkpoint, `stopped` the proposal
    count at which it ended the run (None: it did not). It keeps the `schedule` and what was
    `measured`; `complete` and `good` (estimators.py) read p_complete and p_good at each checkpoint,
    from the MeasuredSet it hands them."""

    def __init__(
        self,
        lattice: Lattice,
        config: CertificateConfig | None = None,
        seed: int = 0,
        *,
        growth: float | None = None,
        dense: bool | None = None,
        n_estimators: int | None = None,
        samples: int = 200,
        min_points: int = 10,
        resolution: Resolver | None = None,
        tuning: Tuning = TUNED,
    ):
        """`dense`: the schedule and fit reuse of lattices above tuning.reuse_above (None: by size);
        `growth` (None: by the schedule) spaces the checkpoints beyond `config.every`;
        `n_estimators`: the forest's trees (None: tuning.trees); `resolution`: where the measurement's
        resolution is read at each checkpoint (`epsilon=auto` needs it, with ρ's; a number is checked
        against it: below it p_good does not stop the run; None: not known, nothing checked);
        `tuning`: the constants (a study's variant of TUNED)."""
        self.config = config if config is not None else CertificateConfig()  # type: ignore[call-arg]  # conf_defaults: the YAML's
        if self.config.epsilon == AUTO and (resolution is None or resolution.rho_method is None):
            what = (
                "the per-input outcomes behind each accuracy are not known here"
                if resolution is None
                else "ρ's sampling error is not known here (a table replayed alone, or a fidelity metric with no spread)"
            )
            raise UserError(f"certificate.epsilon=auto: {what}; give a number (e.g. certificate.epsilon=0.01)")
        self.resolution = resolution
        dense = lattice.size > tuning.reuse_above if dense is None else bool(dense)
        every = int(self.config.every) if self.config.every else default_every(lattice.size, self.stop_on, tuning)
        growth = float(growth) if growth else tuning.dense_growth if dense else tuning.growth
        self.schedule = Schedule(every, growth, tuning.growth)
        trees = int(n_estimators if n_estimators is not None else tuning.trees)
        self.fitting = Fitting(lattice, int(seed), trees, int(samples), int(min_points), dense, tuning)
        self._start()

    @property
    def stop_on(self) -> str:
        """The rule that stops the run (`auto` unresolved, no run path given: complete)."""
        return self.config.rule(live=False)

    def _start(self) -> None:
        """The state of a run not yet begun: nothing measured, no checkpoint."""
        self.measured = Measurements(self.fitting.lattice.size)
        self.schedule.next = self.schedule.every
        self.records: list[Checkpoint] = []
        self.complete = CompleteEstimator(self.fitting, self.config.share)
        self.good = GoodEstimator(self.fitting)
        self.stopped: int | None = None
        self.refused: Checkpoint | None = None  # the first checkpoint where p_good reached stop_at below the resolution
        self.seconds = 0.0  # spent estimating (the cost of the certificate)

    def read(self, new: np.ndarray) -> MeasuredSet:
        """The measured set now, as the rules read it (`new`: first measured since the last checkpoint)."""
        return self.measured.read(new, self.schedule.window_start(self.measured.u))

    def estimate(self) -> Checkpoint:
        """The checkpoint now: p_complete and p_good with what they were read from, the tolerance, and the
        measurement's resolution (read wherever two configurations are measured)."""
        m = self.read(self.measured.take_new())
        k = m.remaining
        reading = self.resolution.read(m) if self.resolution is not None and len(m.measured) >= 2 else None
        auto = self.config.epsilon == AUTO
        # auto before any reading, or an objective not read: 0 (strict)
        eps = np.zeros(2) if auto and reading is None else tolerance(self.config.epsilon, m.values[m.seen], reading)
        eps = np.nan_to_num(eps)
        ok = True if auto or k == 0 else certifiable(eps, reading)  # Θ exhausted: the front is exact
        near = neighbours(self.fitting.lattice, m.members) if len(m.members) else np.zeros(0, np.int64)
        at: dict[str, Any] = dict(
            proposals=self.measured.b, unique=m.u, remaining=k, eps=tuple(eps), resolution=reading
        )
        at.update(certifiable=ok, unexplored=int((~m.seen[near] & (near != 0)).sum()))
        if k == 0 or len(m.measured) < self.fitting.min_points:  # Θ exhausted: certain; too few points: no reading
            p, fresh, missing = (1.0, 0, 0.0) if k == 0 else (0.0, len(m.new), np.inf)
            return Checkpoint(
                **at, front=0, complete=self.complete.plain(p, fresh, missing), good=self.good.plain(p, fresh, missing)
            )
        shared = CheckpointFit(self.fitting, m)  # this checkpoint's fit and draws: not kept past it
        complete = self.complete.update(m, shared, eps)
        return Checkpoint(**at, front=m.front, complete=complete, good=self.good.update(m, shared, eps))

    def reading(self) -> Checkpoint | None:
        """The last checkpoint that read the measurement's resolution (None: none did)."""
        return next((r for r in reversed(self.records) if r.resolution is not None), None)

    def tolerance(self) -> np.ndarray:
        """(ε_δ, ε_ρ) at the last reading, in the units of the values fed: `epsilon` of each objective's
        measured range, or with `auto` the resolution read there (epsilon.Resolution)."""
        last = self.reading()
        return tolerance(
            self.config.epsilon, self.measured.values[self.measured.seen], last.resolution if last is not None else None
        )

    def missing(self) -> float:
        """p_complete's expected number of front members still unmeasured, Σ p_θ over the unmeasured
        θ before calibration (CompleteEstimator.missing), at the measured set as it is now."""
        m = self.read(np.zeros(0, np.int64))
        return self.complete.missing(m, CheckpointFit(self.fitting, m))

    def split(self, indices: np.ndarray) -> list[np.ndarray]:
        """`indices` cut after each proposal at which a checkpoint falls (so a live run never
        evaluates past the point where it stops)."""
        idx = np.asarray(indices, dtype=np.int64).ravel()
        _, first = np.unique(idx, return_index=True)
        new = np.zeros(len(idx), bool)
        new[first] = True
        new &= ~self.measured.seen[idx]
        u = self.measured.u + np.cumsum(new)
        size = self.fitting.lattice.size
        marks = self.schedule.marks(u[-1]) if len(u) else []
        if len(u) and u[-1] == size:
            marks.append(size)  # Θ exhausted: certain, whatever the schedule
        cuts = sorted({int(np.searchsorted(u, t)) + 1 for t in marks})
        return [c for c in np.split(idx, cuts) if len(c)]

    def feed(self, chunk: np.ndarray, values: np.ndarray) -> bool:
        """Record a chunk (from split) and its (δ, ρ); True if the run should stop here."""
        m = self.measured
        m.add(chunk, values)
        exhausted = m.u == self.fitting.lattice.size and (not self.records or self.records[-1].complete.p < 1)
        if m.u >= self.schedule.next or exhausted:
            t0 = time.perf_counter()
            record = self.estimate()
            self.seconds += time.perf_counter() - t0
            self.records.append(record)
            self.schedule.passed(m.u)
            if self.config.stop_at is not None and record.p(self.stop_on) >= self.config.stop_at:
                if self.stop_on == "good" and record.certifiable is False:  # below the resolution: search on
                    if self.refused is None:
                        self.refused = record
                        note(cannot_certify(self.config.epsilon, record))
                    return False
                if self.stop_on == "good" and record.unexplored:  # the front's neighbourhood not all measured
                    return False
                self.stopped = m.b
                return True
        return False

    def column(self, rule: str = "complete") -> np.ndarray:
        """The certificate `rule` (complete | good) after each proposal fed (0 before the first checkpoint)."""
        out = np.zeros(self.measured.b)
        for r in self.records:
            out[r.proposals - 1 :] = r.p(rule)
        return out

    def finish(self, proposals: np.ndarray, evaluate) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The run's proposals (cut at the stop, if any) and the certificate after each of them
        ({"p_complete": …, "p_good": …}). Proposals the certificate has not seen (a search that read the table
        up front) are fed now, through the same checkpoints; `evaluate(indices)` gives their (δ, ρ)."""
        p = np.asarray(proposals, dtype=np.int64)
        fed = np.concatenate(self.measured.proposals) if self.measured.proposals else np.zeros(0, np.int64)
        if len(fed) > len(p) or not np.array_equal(fed, p[: len(fed)]):  # evaluated out of order: start over
            self._start()
            fed = fed[:0]
        if self.stopped is None:
            for chunk in self.split(p[len(fed) :]):
                if self.feed(chunk, evaluate(chunk)):
                    break
        return p[: self.measured.b], {f"p_{rule}": self.column(rule) for rule in ("complete", "good")}


class CertifiedOracle(Oracle):
    """Wraps an oracle: every evaluation passes through the certificate, batch by batch. Once
    p_complete ≥ stop_at the oracle is `stopped`: nothing more is evaluated (the values of a
    request's remaining configurations are NaN) and the search returns. Searches cannot tell it
    from the oracle otherwise."""

    def __init__(self, oracle, certificate: Certificate):
        self.inner, self.certificate, self.lattice = oracle, certificate, oracle.lattice

    @property
    def stopped(self) -> bool:
        return self.certificate.stopped is not None

    def table(self, names=OBJECTIVES) -> np.ndarray:
        return self.inner.table(names)

    def evaluate(self, indices, names=OBJECTIVES) -> np.ndarray:
        names = tuple(names)
        idx = np.asarray(indices, dtype=np.int64).ravel()
        out = np.full((len(idx), len(names)), np.nan)
        at = 0
        for chunk in self.certificate.split(idx):
            if self.stopped:
                break
            values = self.inner.evaluate(chunk, OBJECTIVES)
            out[at : at + len(chunk)] = values if names == OBJECTIVES else self.inner.evaluate(chunk, names)
            at += len(chunk)
            self.certificate.feed(chunk, values)
        return out


def run_certified(search, oracle: CertifiedOracle, budget: int, seed: int, evaluate) -> tuple[np.ndarray, dict]:
    """search.run through a CertifiedOracle: (proposals, {"p_complete": after each proposal}), cut at the stop."""
    proposals = search.run(oracle, budget, seed)
    return oracle.certificate.finish(proposals, evaluate)


# p_good at its stops on lattices held out from its constants (scripts/resolution_study.py conformance →
# results/tables/conformance_stops.md): ε-complete at the first of these many stops, of the second; a
# test reads them again off results/tables/resolution_study.csv
HELD_OUT_STOPS = (45, 45)
P_GOOD_READS = "a stopping score, not a probability"


def stop_record(confidence: float = 0.95) -> dict:
    """p_good's measured record: at how many of its stops on held-out lattices the front was ε-complete,
    with the Clopper–Pearson interval on that rate (statsmodels, method="beta")."""
    from statsmodels.stats.proportion import proportion_confint

    good, stops = HELD_OUT_STOPS
    low, high = proportion_confint(good, stops, alpha=1 - confidence, method="beta") if stops else (0.0, 1.0)
    return {
        "eps_complete": good,
        "stops": stops,
        "low": float(np.nan_to_num(low)),
        "high": float(np.nan_to_num(high, nan=1.0)),
        "confidence": confidence,
        "interval": "Clopper-Pearson",
        "table": "results/tables/conformance_stops.md",
    }


def raw_tolerance(eps, resolution: Resolution) -> tuple[float, float]:
    """(ε_δ, ε_ρ) of the certificate's units in the values' raw units (accuracy, the metric's own)."""
    return float(eps[0]) * resolution.delta_span, float(eps[1]) * resolution.rho_span


def cannot_certify(epsilon, record: Checkpoint) -> str:
    """The one line of a run whose p_good reached stop_at at an ε below the measurement's resolution."""
    res = record.resolution
    assert res is not None  # a refusal is made where the resolution was read
    d, r = raw_tolerance(record.eps, res)
    rho = f"; ρ ± {res.rho:.3g} ({res.rho_method})" if np.isfinite(res.rho) else ""
    return (
        f"certificate: cannot certify epsilon={epsilon} (δ {d:.3g}, ρ {r:.3g}): it is below what {res.inputs:,} "
        f"inputs resolve (δ ± {res.delta:.3g}, the paired difference of two accuracies{rho}); searching on to the budget"
    )


def summary_fields(certificate: Certificate, columns: dict) -> dict:
    """The certificate's summary.json fields. Where the measurement's resolution was read:
    `certifiable` (ε at least that resolution on each objective it is known for, at the last reading;
    False: p_good did not stop the run, `certificate_note` says why in one line), `resolution_delta`
    (the paired difference's half-width in accuracy), `resolution_rho` (ρ's, in its raw units; None: not
    known) with `resolution_rho_method`, `resolution_inputs`, `resolution_confidence`. With epsilon=auto,
    `epsilon` is the number the run used for δ (the paired half-width, in accuracy; None where too few
    configurations were measured to read it), and
    `epsilon_setting`, `epsilon_inputs`, `epsilon_confidence` say where it came from; `epsilon_delta`,
    `epsilon_rho` are the tolerances in the units of the trace's `delta` and `rho` (a numeric ε adds none
    of these). `p_good_reads` says what p_good is, `p_good_record` its measured record (stop_record);
    `front_unexplored`: the measured front's unmeasured unit-step neighbours at the last checkpoint (p_good
    stops a run only at 0)."""
    last = {name: float(column[-1]) if len(column) else 0.0 for name, column in columns.items()}
    out = {
        "p_complete": last["p_complete"],
        "p_good": last["p_good"],
        "p_good_reads": P_GOOD_READS,
        "p_good_record": stop_record(),
        "stop_at": certificate.config.stop_at,
        "stop_on": certificate.stop_on,
        "epsilon": certificate.config.epsilon,
        "stopped_at": certificate.stopped,
        "front_unexplored": certificate.records[-1].unexplored if certificate.records else None,
        "certificate_every": certificate.schedule.every,
        "certificate_seconds": round(certificate.seconds, 4),
    }
    reading = certificate.reading()
    res = reading.resolution if reading is not None else None
    if reading is not None and res is not None:
        out.update(
            certifiable=reading.certifiable,
            resolution_delta=float(res.delta),
            resolution_rho=float(res.rho) if np.isfinite(res.rho) else None,
            resolution_rho_method=res.rho_method,
            resolution_inputs=res.inputs,
            resolution_confidence=res.confidence,
        )
    if certificate.refused is not None and certificate.stopped is None:
        out["certificate_note"] = cannot_certify(certificate.config.epsilon, certificate.refused)
    if certificate.config.epsilon == AUTO and reading is None:  # too few configurations measured to read it
        out.update(epsilon=None, epsilon_setting=AUTO)
    if certificate.config.epsilon == AUTO and reading is not None and res is not None:
        eps_delta, eps_rho = reading.eps
        out.update(
            epsilon=float(res.delta),
            epsilon_setting=AUTO,
            epsilon_inputs=res.inputs,
            epsilon_confidence=res.confidence,
            epsilon_delta=float(eps_delta),
            epsilon_rho=float(eps_rho),
        )
    return out


def tolerance_words(summary: dict) -> str:
    """p_good's tolerance in words, from a summary: "1% of an objective's range", or at epsilon=auto
    "0.031 of accuracy (the 95% half-width of a paired difference at N = 400) or 0.012 of ρ (per-input)"."""
    eps = float(summary.get("epsilon") or 0.01)
    if summary.get("epsilon_setting") == AUTO and summary.get("epsilon") is None:
        return "the measurement's resolution (too few configurations measured yet to read it)"
    if summary.get("epsilon_setting") == AUTO:
        conf = float(summary.get("epsilon_confidence") or 0.95)
        rho = summary.get("resolution_rho")
        rho = f"{rho:.3g} of ρ ({summary.get('resolution_rho_method')})" if rho is not None else "ρ's resolution"
        return (
            f"{eps:.3f} of accuracy (the {conf:.0%} half-width of a paired difference at "
            f"N = {int(summary['epsilon_inputs']):,}) or {rho}"
        )
    return f"{eps:.0%} of an objective's range" if eps >= 0.01 else f"{eps:g} of an objective's range"


def record_words(summary: dict) -> str:
    """p_good's measured record in words (stop_record), or "" where the summary has none."""
    rec = summary.get("p_good_record")
    if not rec or not rec.get("stops"):
        return ""
    return (
        f"; at p_good's stops on held-out lattices the front was ε-complete in {rec['eps_complete']} of "
        f"{rec['stops']} ({rec['confidence']:.0%} Clopper–Pearson {rec['low']:.2f}–{rec['high']:.2f})"
    )


def verdict(summary: dict) -> str:
    """The certificate's verdict on a run, in one sentence (from its summary.json fields)."""
    u, size = summary["unique"], summary.get("space_size")
    of = f" of {size:,}" if size else ""
    good, complete = summary["p_good"], summary["p_complete"]
    if size and u >= size:
        return f"Certificate: every configuration was measured ({u:,}), so the front is exact."
    readings = (
        f"stopping score p_good = {good:.2f} (not a probability) against unmeasured configurations improving the "
        f"front by more than {tolerance_words(summary)}, p_complete = {complete:.2f} that it is exact"
        f"{record_words(summary)}"
    )
    if summary["stopped_at"] is not None:
        what = "within ε of complete" if summary["stop_on"] == "good" else "complete"
        return f"Certificate: stopped after {u:,}{of} configurations, the front {what} ({readings})."
    if summary.get("certificate_note"):
        why = summary["certificate_note"].removeprefix("certificate: ")
        return f"Certificate: not stopped after {u:,}{of} configurations; it {why} ({readings})."
    if summary["stop_at"] is not None and summary["stop_on"] == "good" and good >= summary["stop_at"]:
        n = summary.get("front_unexplored") or 0
        return (
            f"Certificate: not stopped after {u:,}{of} configurations: {n:,} unit-step neighbour{'s' * (n != 1)} of "
            f"the front not measured yet ({readings})."
        )
    if summary["stop_at"] is not None:
        return f"Certificate: not stopped after {u:,}{of} configurations, {summary['stop_on']} below {summary['stop_at']} ({readings})."
    return f"Certificate after {u:,}{of} configurations: {readings}."
