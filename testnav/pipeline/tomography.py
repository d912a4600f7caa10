"""TestifAI through the pipeline: build a tomography of a benchmark and answer queries on it.

`tomography_for` measures the low-order tests (replayed from the ground truth's per-input outcomes,
or live on the model through `pipeline.open`) and fits the surrogate; `make_tomography` does it for
a composed config (`stage=tomography | query`, the notebooks); `answer` and `gate` give R(Q) with its
interval and the CI gate's decision, for a query and its settings as one `QuerySpec`.
`testnav.Tester` and the app's stages (testnav/app/tomography.py, which read the config, print and
write files) both come through here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import benchmarks
from ..core.progress import resolve as resolve_progress
from ..core.severity import parameters, severities_of
from ..errors import UserError
from ..groundtruth.compute import measurements, outcomes, whole_table
from ..groundtruth.session import open as open_session
from ..groundtruth.session import resolve_device
from ..tomography.core import Settings, Tomography, build, from_groundtruth
from ..tomography.executor import LiveExecutor, ObservedTests, low_order, replay_tests
from ..tomography.gate import Undecided, answer, gate
from ..tomography.query import Query, QuerySpec
from .config import cached_groundtruth

__all__ = [
    "Query",
    "QuerySpec",
    "Settings",
    "Tomography",
    "Undecided",
    "answer",
    "gate",
    "make_tomography",
    "query_of",
    "tomography_for",
]

SOURCES = ("replay", "live")


def make_tomography(cfg, benchmark=None):
    """(Tomography, benchmark) for a composed config: its `tomography:` settings on its benchmark."""
    if cfg.tomography.source not in SOURCES:
        raise UserError(f"tomography.source={cfg.tomography.source} (valid: {', '.join(SOURCES)})")
    benchmark = benchmark or benchmarks.make(cfg.benchmark)
    tomo = tomography_for(
        benchmark,
        Settings.from_config(cfg),
        cfg.tomography.source,
        cfg.tomography.quality,
        cfg.cache_dir,
        resolve_device(cfg.device),
        resolve_progress(cfg.progress),
    )
    return tomo, benchmark


def names_of(benchmark) -> list[str]:
    return [f.name for f in benchmark.families]


def query_of(benchmark, expr: str) -> Query:
    """`expr` parsed over the benchmark's families and the severities its lattice tested."""
    fams = benchmark.families
    return Query(expr, names_of(benchmark), severities_of(fams, benchmark.levels), [parameters(f) for f in fams])


def tomography_for(benchmark, settings: Settings, source: str, quality_col, cache_dir, device: str, progress: bool):
    """The tomography of a built benchmark (the CLI's and testnav.Tester's): low-order tests replayed
    from its ground truth's per-input outcomes, or measured live on the model; live, a ground truth an
    earlier verb left complete in the cache (a scan, `groundtruth`) is read instead (`reused`). Its
    queries name the families' severities."""
    tomo = measured_tomography(benchmark, settings, source, quality_col, cache_dir, device, progress)
    tomo.severities = severities_of(benchmark.families, benchmark.levels)
    tomo.parameters = [parameters(f) for f in benchmark.families]
    return tomo


def measured_tomography(benchmark, settings: Settings, source: str, quality_col, cache_dir, device: str, progress):
    if source not in SOURCES:
        raise UserError(f"tomography.source={source} (valid: {', '.join(SOURCES)})")
    if source == "replay":
        path = whole_table(benchmark, cache_dir, device, progress=progress, signals=False)  # outcomes only
        df = pd.read_parquet(path)
        if quality_col is not None and quality_col not in df.columns:
            raise UserError(
                f"tomography.quality={quality_col}: the ground truth has no such column "
                f"(valid: {', '.join(benchmark.metrics)} or null)"
            )
        q = df[quality_col].to_numpy(float) if quality_col else None
        return from_groundtruth(outcomes(df), benchmark.lattice, names_of(benchmark), settings, q)
    loaded = open_session(benchmark, cache_dir, device).loaded
    cached = cached_groundtruth(benchmark, cache_dir, loaded)
    if cached is not None:  # an earlier verb measured every configuration: read, never measure again
        tomo = from_groundtruth(outcomes(pd.read_parquet(cached)), benchmark.lattice, names_of(benchmark), settings)
        tomo.reused = benchmark.lattice.size
        return tomo
    tests = StoredTests(benchmark, loaded, cache_dir, settings, progress)
    measured = tests.run(low_order(benchmark.lattice, settings.max_order))

    def measure(indices) -> dict:  # more tests for a query's bound or a gate
        found = tests.run(indices, desc="query tests (bound)").tests
        tomo.reused, tomo.measured_now = tests.read, tests.measured
        return found

    tomo = build(
        benchmark.lattice, names_of(benchmark), measured, settings, n_inputs=len(loaded.labels), measure=measure
    )
    tomo.reused, tomo.measured_now = tests.read, tests.measured
    return tomo


class StoredTests:
    """A live tomography's tests: those another verb measured on all of D (testnav/groundtruth/store.py)
    replayed under the early-stopping rule, as a ground truth's are, the rest measured on the model
    (stopped early; not stored, since they hold part of D). `read`, `measured`: the tests read and
    measured so far."""

    def __init__(self, benchmark, loaded, cache_dir, settings: Settings, progress: bool):
        self.lattice, self.settings, self.progress = benchmark.lattice, settings, progress
        self.known = {i: correct for i, (correct, _) in measurements(benchmark, loaded, cache_dir).items()}
        self.executor = LiveExecutor(benchmark, loaded, settings.rule, settings.seed)
        self.read = self.measured = 0

    def run(self, tests, desc: str = "low-order tests (tomography)") -> ObservedTests:
        tests = np.asarray(tests, dtype=np.int64)
        have = np.array([int(t) in self.known for t in tests], dtype=bool)
        out = self.executor.run(tests[~have], progress=self.progress, desc=desc)
        out.tests |= replay_tests(self.known, self.lattice, tests[have], self.settings.rule, self.settings.seed).tests
        self.read += int(have.sum())
        self.measured += int((~have).sum())
        return out
