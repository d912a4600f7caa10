"""One search run, replayed or live: the spec, the certified run, and what it returns.

`certified_run` is the one search pipeline, replay and live alike: the search proposes against
an oracle wrapped in the stopping certificate, and its proposals become the trace, the ranked
list R of Algorithm 1 and the summary (with P* and Recall@P* where a ground truth is known).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.cache import atomic_path, write_json_atomic
from ..core.early_stopping import Stopping
from ..core.intervals import check_confidence
from ..core.naming import COLUMN, family_names, with_names
from ..core.oracle import Oracle, TableOracle
from ..core.pareto import nondominated_mask
from ..core.progress import bar
from ..core.table import Objectives
from ..core.trace import make_trace, ranked_list, summarize
from ..errors import UserError
from ..groundtruth.inferences import inference_summary, table_costs
from ..paths import conf_values
from ..searches import Search, make
from ..stopping.certificate import Certificate, CertificateConfig, CertifiedOracle, run_certified, summary_fields
from ..stopping.epsilon import AUTO, Resolver, representatives, resolution_tolerance
from ..tomography.core import Settings

FORMATS = ("csv", "parquet")


@dataclass(frozen=True)
class RunSpec:
    """What one run is: the search (a conf/search name, or the node the app's Hydra composed)
    with `overrides` of its settings, the proposal budget (None: the paper's 5 × |Θ|), the seed,
    the certificate's settings, whether the default population may be fitted to a small lattice
    (`fit`: not when the user chose it), and the early-stopping rule that prices a replay's
    inferences (TestifAI's, with its input-order seed), and the confidence at which epsilon=auto
    reads the accuracies' resolution."""

    search: object = "nsga2"
    overrides: dict = field(default_factory=dict)
    budget: int | None = None
    seed: int = 0
    certificate: CertificateConfig = CertificateConfig()  # type: ignore[call-arg]  # conf_defaults: the YAML's
    fit: bool = True
    pricing: Stopping = Settings().rule  # type: ignore[call-arg]  # conf_defaults: the YAML's
    pricing_seed: int = 0
    confidence: float = 0.95

    def __post_init__(self):
        check_budget(self.budget)
        check_seed(self.seed)
        check_confidence(self.confidence)


@dataclass
class Run:
    """One search: `summary` (the summary.json fields), `trace` (trace.csv: one row per proposal),
    `ranked` (ranked.csv: every configuration seen, by Pareto rank then crowding distance, each
    named in its `configuration` column), and for a live run `outcomes`: θ (a tuple of levels) →
    which inputs of D the model got right under it, for every configuration it ran (`save` writes
    them to outcomes.parquet: t1..tn and `correct`, as the ground truth holds them). `checkpoints`:
    the stopping certificate's record at each of its checkpoints, in order (testnav/stopping/
    certificate.py: proposals, unique, the front, a reading per rule, …), what the studies read;
    kept in memory only (`save` writes the last reading into summary.json, `load` has none)."""

    summary: dict
    trace: pd.DataFrame
    ranked: pd.DataFrame
    outcomes: dict = field(default_factory=dict, repr=False)
    checkpoints: list = field(default_factory=list, repr=False)

    @property
    def front(self) -> pd.DataFrame:
        """The measured Pareto front: rank 0 of the ranked list. A run whose certificate read
        epsilon=auto adds `distinguishable`: whether a member is told apart from the others at the
        measurement's resolution (False: a more faithful member is within that resolution of its δ;
        testnav.stopping.epsilon.representatives)."""
        front = self.ranked[self.ranked["rank"] == 0].reset_index(drop=True)
        eps = resolution_tolerance(self.summary)
        if eps is not None:
            front["distinguishable"] = representatives(front[["delta", "rho"]].to_numpy(float), eps)
        return front

    @classmethod
    def load(cls, directory, fmt: str = "csv") -> Run:
        """A run as `save` wrote it (without the per-input outcomes of a live run)."""
        import json

        out = Path(directory)
        read = pd.read_parquet if fmt == "parquet" else pd.read_csv
        summary = json.loads((out / "summary.json").read_text())
        return cls(summary, read(out / f"trace.{fmt}"), read(out / f"ranked.{fmt}"))

    def save(self, directory, fmt: str = "csv") -> Path:
        """Write trace, ranked list and summary.json (last) as a run directory of run.py; returns the directory."""
        if fmt not in FORMATS:
            raise UserError(f"trace_format={fmt} (valid: {', '.join(FORMATS)})")
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        trace_path = out / f"trace.{fmt}"
        for df, path in ((self.trace, trace_path), (self.ranked, out / f"ranked.{fmt}")):
            with atomic_path(path) as tmp:
                df.to_parquet(tmp, index=False) if fmt == "parquet" else df.to_csv(tmp, index=False)
        if self.outcomes:
            levels = np.array(list(self.outcomes), dtype=np.int64)
            df = pd.DataFrame(levels, columns=[f"t{i + 1}" for i in range(levels.shape[1])])
            df["correct"] = [v.tolist() for v in self.outcomes.values()]
            with atomic_path(out / "outcomes.parquet") as tmp:
                df.to_parquet(tmp, index=False)
        write_json_atomic(out / "summary.json", self.summary)
        return out


def certificate_for(live: bool, **given) -> CertificateConfig:
    """The certificate's settings `given` as Python keywords (stop_at, stop_on, epsilon, …; None takes
    the default), with the defaults a composed config holds for a live run or a replay: those of
    conf/settings/certificate.yaml, whose epsilon is auto on stage=live and 0.01 on every other stage."""
    defaults = conf_values("settings/certificate", ["epsilon"], stage="live") if live else {}
    return CertificateConfig.from_node({**defaults, **{k: v for k, v in given.items() if v is not None}})


def check_budget(budget, space_size: int | None = None) -> int | None:
    """The proposal budget B; None means the paper's 5 × |Θ|. Checked before any work starts."""
    if budget is None:
        return None if space_size is None else 5 * space_size
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget != int(budget) or budget <= 0:
        raise UserError(f"budget={budget}: must be a positive whole number of proposals (or null for 5 × |Θ|)")
    return int(budget)


def check_seed(seed) -> int:
    """The run's seed: a whole number (it seeds the search and names the run)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise UserError(f"seed={seed}: must be a whole number, e.g. seed=0")
    return int(seed)


def search_for(spec: RunSpec, lattice, live: bool = False) -> tuple[Search, int]:
    """The spec's search, its default population fitted to the lattice where allowed, checked
    against the lattice and the budget (and, `live`, refused if it can only replay a table);
    and the budget. Cheap: call it before loading a model."""
    search = make(spec.search, **spec.overrides)
    if live and search.replay_only:
        raise UserError(f"search={search.name} replays a ground-truth table; a live search needs {search.live_fix}")
    budget = check_budget(spec.budget, lattice.size)
    assert budget is not None  # with the lattice's size, None is 5 × |Θ|
    if spec.fit:
        search.fit(lattice, budget)
    search.check(lattice, budget)
    return search, budget


def certified_run(
    search: Search,
    spec: RunSpec,
    budget: int,
    oracle: Oracle,
    pstar,
    costs,
    unit: str,
    identity: dict,
    families=None,
    progress: bool = False,
    live: bool = False,
    resolution: Resolver | None = None,
) -> Run:
    """`search` against `oracle` under the certificate, then its trace, ranked list and summary (stop_on `auto`
    read for a `live` run or a replay);
    configurations named after `families` (Family objects; None: t1..tn). `progress`: a bar of
    proposals against the budget, with the configurations evaluated, the front's size and p_complete.
    `resolution`: where the certificate reads the measurement's resolution (epsilon.Resolver)."""
    lattice = oracle.lattice
    config = spec.certificate.for_run(live)
    certified = CertifiedOracle(oracle, Certificate(lattice, config, seed=spec.seed, resolution=resolution))
    t0 = time.perf_counter()
    if progress is not False:  # a bar where a person watches, else a line every 30 s (core/progress.py)
        with bar(progress, total=budget, desc=f"{search.name} on the model", unit="proposal") as pbar:
            watched = Watched(certified, pbar)
            proposals, columns = run_certified(search, watched, budget, spec.seed, oracle.evaluate)  # type: ignore[arg-type]
            watched.show()
    else:
        proposals, columns = run_certified(search, certified, budget, spec.seed, oracle.evaluate)
    seconds = time.perf_counter() - t0
    trace = make_trace(proposals, lattice, oracle.evaluate(proposals), pstar, costs)
    for name, column in columns.items():
        trace[name] = column
    summary = summarize(trace, lattice, pstar, proposals, **identity, search=search.name, seed=spec.seed, budget=budget)
    summary.update(inference_summary(trace, lattice, pstar, costs, unit))
    summary.update(summary_fields(certified.certificate, columns))
    summary["search_seconds"] = round(seconds, 4)
    ranked = with_names(ranked_list(trace, lattice.n), families)
    summary["families"] = family_names(families, lattice.n)
    front = ranked[ranked["rank"] == 0]
    summary["front"] = [
        {"configuration": name, "delta": float(d), "rho": float(r)}
        for name, d, r in zip(front[COLUMN], front["delta"], front["rho"])
    ]
    eps = resolution_tolerance(summary)
    if eps is not None:  # which members the measurement tells apart (Run.front)
        told = representatives(front[["delta", "rho"]].to_numpy(float), eps)
        for member, t in zip(summary["front"], told):
            member["distinguishable"] = bool(t)
    return Run(summary, trace, ranked, checkpoints=list(certified.certificate.records))


class Watched(Oracle):
    """A certified oracle that shows the run's progress on a bar after each request: proposals
    made against the budget, configurations evaluated, the measured front's size, p_complete and p_good."""

    def __init__(self, certified: CertifiedOracle, pbar):
        self.inner, self.bar = certified, pbar
        self.certificate, self.lattice = certified.certificate, certified.lattice

    @property
    def stopped(self) -> bool:
        return self.inner.stopped

    def table(self, names=("delta", "rho")) -> np.ndarray:
        return self.inner.table(names)

    def evaluate(self, indices, names=("delta", "rho")) -> np.ndarray:
        out = self.inner.evaluate(indices, names)
        self.show()
        return out

    def show(self) -> None:
        c = self.certificate
        seen = np.flatnonzero(c.measured.seen)
        pts = c.measured.values[seen]
        front = int(nondominated_mask(pts[:, 0], pts[:, 1]).sum()) if len(seen) else 0
        last = c.records[-1] if c.records else None
        p = f"p_complete {last.complete.p:.2f}, p_good {last.good.p:.2f}" if last else "p_complete —"
        self.bar.set_postfix_str(f"evaluated {len(seen)}, front {front}, {p}", refresh=False)
        self.bar.update(c.measured.b - self.bar.n)


def replay(spec: RunSpec, objectives: Objectives, identity: dict, families=None, probe=None) -> Run:
    """One search against a ground-truth table (`identity`: benchmark, fidelity, table path,
    what the summary names): Recall@P* and its AUC, inferences priced by `spec.pricing`;
    `families` (the benchmark's) name the configurations. The certificate reads the measurement's
    resolution off the table's per-input outcomes (δ) and, given a `probe` (resolution.RhoProbe on the
    benchmark's opened session), off ρ's per-input values on its data (testnav/pipeline/resolution.py)."""
    search, budget = search_for(spec, objectives.lattice)
    resolution = table_resolution(spec, objectives, identity, probe)
    costs, unit = table_costs(identity["table"], objectives.lattice, spec.pricing, spec.pricing_seed)
    oracle = TableOracle(objectives)
    return certified_run(
        search, spec, budget, oracle, objectives.pstar, costs, unit, identity, families, resolution=resolution
    )


def table_resolution(spec: RunSpec, objectives: Objectives, identity: dict, probe=None) -> Resolver | None:
    """Where a replay's certificate reads the resolution: the table's per-input outcomes and ρ's `probe`
    (None: ρ's not known); None where the table holds no outcomes (epsilon=auto is then refused in one line)."""
    from .resolution import TableOutcomes, table_outcomes

    if spec.certificate.epsilon == AUTO:
        table_inputs(identity["table"])  # refused before any work where the table cannot say its N
    correct = table_outcomes(identity["table"], objectives.lattice)
    if correct is None:
        if spec.certificate.epsilon == AUTO:
            raise UserError(
                f"certificate.epsilon=auto: {identity['table']} holds no per-input outcomes (`correct`), from which "
                "the paired difference of two accuracies is read; give a number, e.g. certificate.epsilon=0.01"
            )
        return None
    raw_rho = pd.read_parquet(identity["table"], columns=[identity["fidelity"]])[identity["fidelity"]]
    rho_span = float(np.ptp(raw_rho.to_numpy(float))) or 1.0  # what the table's ρ was divided by
    return TableOutcomes(correct, spec.confidence, objectives.delta_span, rho_span, probe)


def table_inputs(path) -> int:
    """How many inputs each accuracy of the ground-truth table `path` was measured on: its metadata's
    `n_inputs`, else the length of its per-input `correct` outcomes; refused in one line otherwise."""
    from ..groundtruth.compute import read_meta

    n = read_meta(Path(path)).get("n_inputs")
    if n:
        return int(n)
    if str(path).endswith(".parquet"):
        import pyarrow.parquet as pq

        if "correct" in pq.read_schema(path).names:
            first = pd.read_parquet(path, columns=["correct"])["correct"].iloc[0]
            return int(len(first))
    raise UserError(
        f"certificate.epsilon=auto: {path} does not say how many inputs each accuracy was measured on (no "
        f"n_inputs in {Path(path).with_suffix('.json').name}, no per-input `correct` column); give a number, "
        "e.g. certificate.epsilon=0.01"
    )
