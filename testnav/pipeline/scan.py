"""`pipeline.scan(session, spec, fidelity)`: measure what can be afforded, and say what breaks the
model (testnav/findings.py); `Tester.scan()` and `testnav report RUN_DIR` come through here.

1. The clean set and every family alone (the order-1 configurations) are measured on the model;
   their time prices one configuration.
2. If measuring the rest of the lattice fits `budget_seconds` at that price (an upper bound: the
   ground truth shares the families' common prefixes and batches siblings), the whole lattice is
   measured (the ground truth, cached), and every number in the findings is measured.
3. Otherwise the pairs are measured where they fit half the time left (the interactions need
   them), and TomoNav searches the rest under the stopping certificate (`stop_at`, p_good), with
   as many proposals as the remaining time buys. The failure modes' sub-configurations that the
   search left unmeasured are measured before the failure modes are chosen, so minimality is
   checked on measurements.

A ground truth already cached is read without any probing. The settings are one `ScanSpec`
(testnav/pipeline/specs.py; the defaults are conf/settings/scan.yaml's).
"""

from __future__ import annotations

import time

import numpy as np

from ..findings import ConfigurationOutcomes, Findings, build, fidelity_settings, minimal_mask, passes_floor
from ..groundtruth.compute import compute_groundtruth
from . import composition
from .config import cached_groundtruth
from .live import live, live_oracle
from .runs import RunSpec, certificate_for
from .specs import ScanSpec


def scan(session, spec: ScanSpec, fidelity: str) -> Findings:
    """The findings of the session's model, ρ by the metric `fidelity`; see this module's docstring."""
    benchmark = session.benchmark
    lattice = benchmark.lattice
    fid = fidelity_of(session, spec, fidelity)
    t0 = time.perf_counter()
    method: dict[str, object] = {"budget_seconds": float(spec.budget_seconds)}
    table = cached_groundtruth(benchmark, session.cache_dir, session.loaded)
    run = None
    if table is None:
        oracle = live_oracle(session, fidelity)
        session.clean  # noqa: B018  (the metrics prepared before the clock starts)
        per = timed(oracle, np.flatnonzero(lattice.orders <= 1), session.progress, "each family alone")
        per = per or (oracle.seconds / max(oracle.evaluations, 1))
        projected = per * (lattice.size - oracle.evaluations)
        method.update(projected_seconds=round(projected, 1), seconds_per_configuration=round(per, 4))
        if projected <= spec.budget_seconds:  # what the projection priced: no signal
            table = compute_groundtruth(
                benchmark, session.cache_dir, session.device, progress=session.progress, signals=False
            )
        else:
            run = search(session, spec, fidelity, oracle, per, method, t0)
            method["sub_configurations_measured"] = complete_minimality(oracle, lattice, fid, spec.failure_modes)
            measured = ConfigurationOutcomes.from_oracle(oracle)
    else:
        method["cached"] = "projected_seconds" not in method
    if table is not None:
        import pandas as pd

        method["how"] = "lattice"
        measured = ConfigurationOutcomes.from_table(pd.read_parquet(table), lattice, fidelity)
    method["seconds"] = round(time.perf_counter() - t0, 1)
    model = getattr(benchmark, "model_name", None) or benchmark.name
    findings = findings_of(session, measured, spec, fid, method, model)
    composition.annotate(findings, measured, spec.orders, spec.seed)  # each finding in its other orders
    findings.run = run
    return findings


def search(session, spec: ScanSpec, fidelity: str, oracle, per: float, method: dict, t0: float):
    """Step 3: the pairs where they fit half the time left, then TomoNav under the certificate with
    as many proposals as the rest of the budget buys (at least n·(ℓ − 1) + 20); the run."""
    lattice = session.benchmark.lattice
    method["how"] = "search"
    pairs = np.flatnonzero(lattice.orders == 2)
    left = spec.budget_seconds - (time.perf_counter() - t0)
    method["pairs"] = bool(per * len(pairs) <= left / 2)
    if method["pairs"]:
        timed(oracle, pairs, session.progress, "pairs of families")
    left = spec.budget_seconds - (time.perf_counter() - t0)
    proposals = max(int(left / max(per, 1e-6)), lattice.n * (lattice.levels - 1) + 20)
    run_spec = RunSpec(
        "tomonav",
        budget=min(proposals, 5 * lattice.size),
        seed=spec.seed,
        certificate=certificate_for(live=True, stop_at=spec.stop_at),
        confidence=spec.confidence,
    )
    run = live(run_spec, session, fidelity, progress=session.progress)
    method.update(p_good=run.summary.get("p_good"), epsilon=run.summary.get("epsilon"))
    return run


def timed(oracle, indices, progress=None, what: str = "configurations") -> float:
    """Measure `indices` on the live oracle, in lattice order and in steps a progress bar (or, where
    nobody watches, a line every 30 s) can follow; the seconds per configuration not measured before."""
    from ..core.progress import bar

    new = sorted(int(i) for i in indices if int(i) not in oracle.memo)
    if not new:
        return 0.0
    t0 = time.perf_counter()
    step = max(oracle.lattice.levels, 16)
    with bar(progress, total=len(new), desc=f"scan: {what}", unit="cfg") as pbar:
        for k in range(0, len(new), step):
            oracle.evaluate(np.array(new[k : k + step], np.int64))
            pbar.update(len(new[k : k + step]))
    return (time.perf_counter() - t0) / len(new)


def sub_configurations(lattice, theta) -> list[int]:
    from itertools import product

    theta = tuple(int(t) for t in theta)
    return [int(lattice.index(np.array(s, np.int64))) for s in product(*(range(t + 1) for t in theta)) if s != theta]


def complete_minimality(oracle, lattice, fidelity: dict, k: int, limit: int = 64) -> int:
    """Measure the unmeasured sub-configurations of the most damaging measured candidates (above the
    floor), until `k` of them are minimal on measured values; returns how many were measured."""
    extra = 0
    for _ in range(4 * k):
        m = ConfigurationOutcomes.from_oracle(oracle)
        damage = m.accuracy[0] - m.accuracy
        full = np.full(lattice.size, np.nan)
        full[m.index] = damage
        ok = (m.index > 0) & minimal_mask(lattice, full)[m.index] & (damage > 0)
        ok &= passes_floor(m.fidelity, fidelity["floor"], fidelity["higher_is_better"])
        top = m.index[ok][np.argsort(-damage[ok], kind="stable")][:k]
        todo = sorted(
            {s for i in top for s in sub_configurations(lattice, lattice.theta(int(i))) if s not in oracle.memo}
        )
        if not todo or extra + len(todo) > limit * k:
            return extra
        oracle.evaluate(np.array(todo, np.int64))
        extra += len(todo)
    return extra


def provenance(session) -> dict:
    """Digests of the model and of the data (what a later comparison checks), and the data's size."""
    from ..core.cache import stable_hash

    b, loaded = session.benchmark, session.loaded
    return {
        "digests": {
            "model": str(loaded.model_key),
            "data": stable_hash(b.data_description()),
            "benchmark": b.key(loaded),
        },
        "data": {"inputs": int(len(loaded.labels)), "perturb_seed": b.perturb_seed},
    }


def fidelity_of(session, spec: ScanSpec, fidelity: str) -> dict:
    """The metric `fidelity` of the session's benchmark as the findings state it, with the spec's floor."""
    metric = session.benchmark.metrics[fidelity]
    return fidelity_settings(fidelity, spec.fidelity_floor, getattr(metric, "higher_is_better", True))


def findings_of(session, measured, spec: ScanSpec, fid: dict, method: dict, model: str, keep: int | None = None):
    """The findings of `measured` on the session's model, with `keep` inputs (None: `spec.examples`)
    of each failure mode read off the model where it is an image or a text classifier."""
    lattice = session.benchmark.lattice
    findings = build(measured, session.benchmark.families, model, fid, method, spec, provenance(session))
    findings.session = session
    if session.readable and (keep or spec.examples):
        cols = [f"t{i + 1}" for i in range(lattice.n)]
        for _, row in findings.failure_modes.iterrows():
            theta = lattice.theta(int(lattice.index(row[cols].to_numpy(np.int64))))
            findings.examples[row["configuration"]] = session.inputs.examples(theta, keep or spec.examples)
    return findings
