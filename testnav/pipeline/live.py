"""A search against the model itself: no table, each configuration evaluated when proposed."""

from __future__ import annotations

import time

import numpy as np

from ..errors import UserError
from ..fidelity import sign as rho_sign
from ..groundtruth.inferences import FULL_D
from ..groundtruth.live import LiveOracle
from .resolution import LiveOutcomes, RhoProbe
from .runs import Run, RunSpec, certified_run, search_for


def live_oracle(session, fidelity: str) -> LiveOracle:
    """The session's live oracle for ρ = `fidelity`'s column, made once per session and fidelity,
    so its memo serves every later search on the same model (each θ is evaluated once)."""
    benchmark = session.benchmark
    oracles = session.live_oracles
    if fidelity not in oracles:
        if fidelity not in benchmark.metrics:
            raise UserError(
                f"live search: benchmark {benchmark.name} computes no '{fidelity}' (valid: {', '.join(benchmark.metrics)})"
            )
        oracles[fidelity] = LiveOracle(session, fidelity, rho_sign(fidelity, benchmark.metrics))
    return oracles[fidelity]


def live(spec: RunSpec, session, fidelity: str, progress: bool = False) -> Run:
    """One search on the opened benchmark's model, ρ from the metric `fidelity` (a column the
    benchmark computes): the run's trace, ranked list and summary (no P*: there is no table), and
    the per-input outcomes of every configuration it ran. `progress`: a bar while it runs."""
    benchmark = session.benchmark
    search, budget = search_for(spec, benchmark.lattice, live=True)
    t0 = time.perf_counter()
    oracle = live_oracle(session, fidelity)
    done, spent = oracle.evaluations, oracle.seconds
    costs = np.full(benchmark.lattice.size, len(session.loaded.labels), dtype=np.int64)  # live: all of D per θ
    identity = {"benchmark": benchmark.name, "fidelity": fidelity}
    resolution = LiveOutcomes(oracle, spec.confidence, RhoProbe(session, fidelity, oracle.walker))
    run = certified_run(
        search,
        spec,
        budget,
        oracle,
        None,
        costs,
        FULL_D,
        identity,
        benchmark.families,
        progress,
        live=True,
        resolution=resolution,  # δ, ρ raw live: the resolution in the metric's own units
    )
    thetas = run.ranked[[f"t{i + 1}" for i in range(benchmark.lattice.n)]].to_numpy(np.int64)
    run.outcomes = {tuple(map(int, t)): oracle.outcomes[benchmark.lattice.index(t)] for t in thetas}
    run.summary.update(
        live=True,
        evaluations=oracle.evaluations - done,
        reused=len(run.outcomes) - (oracle.evaluations - done),  # read from what earlier verbs measured
        psi_clean=oracle.psi_clean,
        evaluation_seconds=round(oracle.seconds - spent, 2),
        wall_seconds=round(time.perf_counter() - t0, 2),
    )
    return run
