"""A benchmark opened for evaluation: the one way data and model reach a device.

The ground truth, a live search, a live tomography and the pre-flight check all start the
same way: load D and the model (never empty), keep freed memory for reuse, move both to the
device, and — when configurations are to be scored — prepare the metrics on the clean inputs,
score the clean set (ψ(D)) and start the prefix walker. `open` does the first part; the rest
is done on first use (`clean`, `walker`), so a ground truth already on disk, or a tomography
that only runs the model, never pays for it.
"""

from __future__ import annotations

from functools import cached_property

import torch

from ..core.memory import keep_freed_memory
from ..errors import UserError
from .checks import check_outputs
from .inputs import Inputs, supported
from .walk import PrefixWalker, stack_size


def resolve_device(name: str) -> str:
    """`device=` as given (auto | cpu | cuda | cuda:N), checked against what this machine has."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name not in ("cpu", "cuda") and not name.startswith("cuda:"):
        raise UserError(f"device={name} (valid: auto, cpu, cuda, cuda:N)")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"device={name} but no CUDA device is available (use device=cpu or device=auto)")
    return name


class Session:
    """A benchmark's data and model on a device (`loaded`), the cache its measurements are kept in
    (`cache_dir`) and whether bars show progress (`progress`); on first use its prepared metrics
    with the clean scores (`clean`: ψ(D) and each metric's clean value; `signals_clean`: the
    signals calibrated and their clean values, for what reads a signal), the walker that perturbs
    D under each θ, sharing prefixes (`walker`, `stack` sibling sets a call), and D read input by
    input (`inputs`, where `readable`). The one handle the library below `testnav.Tester` takes."""

    def __init__(self, benchmark, loaded, device: str, cache_dir, progress: bool | None = False):
        self.benchmark, self.loaded, self.device = benchmark, loaded, device
        self.cache_dir, self.progress = str(cache_dir), progress
        self.live_oracles: dict = {}  # by fidelity: the live oracle and its memo (testnav/pipeline/live.py)

    @cached_property
    def clean(self) -> dict:
        """ψ(D), the outcomes and each fidelity metric's clean value, the metrics prepared on D.
        The signals are not calibrated here: only what reads them pays for it (`signals_clean`)."""
        benchmark = self.benchmark
        with benchmark.scoring_only(benchmark.metrics):
            benchmark.prepare_metrics(self.loaded)
            return benchmark.score(self.loaded, self.loaded.inputs)

    @cached_property
    def signals_clean(self) -> dict:
        """Each input-level signal's value on D, the signals calibrated first (on the training
        inputs: coverage ranges, KDEs), once per session; {} for a benchmark without signals."""
        benchmark = self.benchmark
        if not benchmark.signals:
            return {}
        with benchmark.scoring_only(benchmark.signals):
            benchmark.prepare_metrics(self.loaded)
            values = benchmark.score(self.loaded, self.loaded.inputs)
        return {k: values[k] for k in benchmark.signals}

    @property
    def psi_clean(self) -> float:
        return float(self.clean["psi"])

    @cached_property
    def walker(self) -> PrefixWalker:
        return PrefixWalker(self.benchmark.families, self.loaded.inputs, self.benchmark.perturb_seed)

    @cached_property
    def stack(self) -> int:
        return stack_size(self.loaded.inputs, self.device)

    @property
    def readable(self) -> bool:
        """Whether per-input predictions can be read (an image or a text classifier): `inputs`."""
        return supported(self.benchmark, self.loaded)

    @cached_property
    def inputs(self) -> Inputs:
        """D and the model read input by input (testnav/groundtruth/inputs.py), made once: its clean
        predictions are computed once per session."""
        return Inputs(self)


def open(benchmark, cache_dir, device: str, progress: bool | None = False) -> Session:  # noqa: A001 (as io.open)
    """Load `benchmark`'s D and model and put them on `device` (checked first); one batch of D
    through the model checks its outputs against the labels (testnav/groundtruth/checks.py).
    `cache_dir`: where what is measured on it is kept; `progress`: bars where the session works."""
    device = resolve_device(device)
    loaded = benchmark.load_nonempty(cache_dir)
    keep_freed_memory()
    loaded.inputs, loaded.labels = loaded.inputs.to(device), loaded.labels.to(device)
    if isinstance(loaded.model, torch.nn.Module):
        loaded.model.to(device)
    check_outputs(benchmark, loaded)  # labels the model cannot predict, non-finite logits: refused now
    return Session(benchmark, loaded, device, cache_dir, progress)
