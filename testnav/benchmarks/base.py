"""What every benchmark shares: n families × ℓ levels, metrics, and the ground-truth cache key.

Subclasses (`VisionBenchmark`, `TextBenchmark`) add how D and the model are loaded and how one
perturbed set is scored; the key hashes everything a ground-truth table depends on — data,
model weights, families and their parameters, levels, metric settings, the perturbation
seed, task settings, and the code that computes them (`code_digest`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager

from ..core.cache import modules_digest, object_modules, stable_hash
from ..core.lattice import Lattice
from ..errors import UserError
from ..fidelity import metrics_for
from ..signals import signals_for

# always part of the table's code: the walk that evaluates every θ, and the sandbox's child process
# (run as a script, so no import reaches it)
CODE = ("testnav.groundtruth.compute", "testnav.code._sandbox_child")


class Benchmark(ABC):
    """The contract every benchmark fulfils: `load` D and the model, `prepare_metrics` on the clean
    inputs, `score` one perturbed set (ψ, the fidelity columns, the signals), and `data_description`
    for the ground-truth key. groundtruth.py, live.py and check.py call only these."""

    modality = "any"

    def __init__(
        self,
        name: str,
        families,
        levels: int,
        metrics: dict | None = None,
        signals: dict | None = None,
        perturb_seed: int = 0,
        batch_size: int = 256,
    ):
        self.name = name
        self.families = list(families)
        self.levels = int(levels)
        self.metrics = metrics_for(self.modality, metrics)  # fidelity φ: one raw column each
        self.signals = signals_for(signals)  # input-level signals (§4.4): one column each
        self.perturb_seed = int(perturb_seed)
        self.batch_size = int(batch_size)
        for fam in self.families:
            if not 2 <= self.levels <= fam.max_level + 1:
                raise UserError(
                    f"benchmark.levels={self.levels} is outside family {fam.name}'s table "
                    f"(valid: 2..{fam.max_level + 1}, level 0 being the identity)"
                )

    @property
    def lattice(self) -> Lattice:
        return Lattice(len(self.families), self.levels)

    @abstractmethod
    def load(self, cache_dir):
        """D and the model, ready to score (a `Loaded`/`TextLoaded` with inputs, labels, model, model_key)."""

    @abstractmethod
    def prepare_metrics(self, loaded) -> None:
        """Fit every fidelity metric and signal on the clean inputs (and the model), once per table."""

    @abstractmethod
    def view(self, loaded, perturbed):
        """A perturbed set (or the clean inputs) as the fidelity metrics see it (`Metric.__call__`)."""

    @abstractmethod
    def score(self, loaded, perturbed, theta=None) -> dict:
        """One perturbed set: {"psi": ψ, "correct": per-input outcomes, <metric>: raw value, <signal>: value}."""

    def score_sets(self, loaded, sets: list, thetas: list) -> list[dict]:
        """`score` of several perturbed sets (the ground truth hands over a prefix's siblings
        together); benchmarks that can share work across them override this."""
        return [self.score(loaded, x, theta=t) for x, t in zip(sets, thetas)]

    @contextmanager
    def scoring_only(self, names):
        """Within the block, `score`/`score_sets` compute only the metrics and signals in `names`
        (ψ and the outcomes always): a live search needs its ρ and what its search reads, not every
        column of a ground-truth table (the coverage signals' float64 pass above all)."""
        kept = self.metrics, self.signals
        self.metrics = {k: v for k, v in self.metrics.items() if k in names}
        self.signals = {k: v for k, v in self.signals.items() if k in names}
        try:
            yield
        finally:
            self.metrics, self.signals = kept

    def load_nonempty(self, cache_dir):
        """load(), refusing an empty D: ψ, δ and every fidelity score would be 0/0 downstream."""
        loaded = self.load(cache_dir)
        if len(loaded.labels) == 0:
            raise UserError(
                f"benchmark {self.name}: the test set D is empty (check the data file and the size "
                "settings, e.g. benchmark.data.n or benchmark.test_per_class)"
            )
        return loaded

    @abstractmethod
    def data_description(self) -> dict:
        """What identifies the data subset D (hashed into the ground-truth key)."""

    def task_description(self) -> dict:
        """Settings of ψ beyond the model itself (decoding, execution), hashed into the key."""
        return {}

    def key(self, loaded) -> str:
        """The whole table's key: every setting below, the signals' and the code of both parts."""
        return stable_hash({**self._settings(loaded), "signals": self._signal_settings(), "code": self.code_digest()})

    def part_key(self, loaded, part: str) -> str:
        """The key of one part of the table (testnav/groundtruth/compute.py): the objectives part
        (ψ, δ, fidelity, outcomes) hashes everything but the signals and their code, so that a
        change to a signal's settings or code keeps it; the signals part hashes the objectives'
        key (the same walk and model), the signals' settings and the code of both."""
        objectives = stable_hash({**self._settings(loaded), "code": self.code_digest(signals=False)})
        if part == "objectives":
            return objectives
        return stable_hash({"objectives": objectives, "signals": self._signal_settings(), "code": self.code_digest()})

    def _settings(self, loaded) -> dict:
        return {
            "benchmark": self.name,
            "data": self.data_description(),
            "model": loaded.model_key,
            "task": self.task_description(),
            "levels": self.levels,
            "families": [f.describe() for f in self.families],
            "metrics": {k: m.describe() for k, m in self.metrics.items()},
            "perturb_seed": self.perturb_seed,
        }

    def _signal_settings(self) -> dict:
        return {k: m.describe() for k, m in self.signals.items()}

    def code_parts(self, signals: bool = True) -> list:
        """The objects (or module names) whose code computes the table: the benchmark, its
        families and metrics (and signals, unless `signals` is False); benchmarks add the data
        readers and models they build."""
        return [self, *self.families, *self.metrics.values(), *(self.signals.values() if signals else ())]

    def code_digest(self, signals: bool = True) -> str:
        """Only the code that computes this table (its objectives part alone when `signals` is
        False): the modules of the objects above and every testnav module they import, docstrings
        and comments excluded; an edit anywhere else, or to prose, keeps the cached tables valid."""
        parts = self.code_parts(signals)
        named = {p for p in parts if isinstance(p, str)}
        return modules_digest(object_modules(*(p for p in parts if not isinstance(p, str))) | named | set(CODE))[0]
