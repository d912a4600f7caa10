"""Language and code benchmarks: the text counterpart of `VisionBenchmark`.

The walker carries a `TextBatch` (testnav/families/text_base.py) instead of an image tensor;
`compute_groundtruth` only needs `.to(device)` and `len(labels)`, which `TextLoaded` provides.
A benchmark implements `load()` (data, model) and `evaluate()` (per-input correctness for one
perturbed batch); ψ is the mean of the per-input outcomes, fidelity metrics see a `TextView`.

Models are read from a local directory or the Hugging Face cache (`local_files_only`); nothing
is downloaded at run time.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..errors import UserError
from ..families.text_base import TextBatch
from .base import Benchmark


@dataclass
class TextLoaded:
    inputs: TextBatch  # the clean test set D as the walker carries it
    labels: torch.Tensor  # (N,): one entry per input whose correctness ψ averages (a pair, a problem)
    model: torch.nn.Module
    model_key: str
    tokenizer: object = None
    extra: dict = field(default_factory=dict)

    @property
    def device(self):
        try:
            return next(self.model.parameters()).device
        except (StopIteration, AttributeError):
            return torch.device("cpu")


class TextView:
    """One perturbed (or the clean) batch as fidelity metrics see it."""

    def __init__(self, batch: TextBatch, device=None):
        self.batch, self.device = batch, device or torch.device("cpu")

    @property
    def texts(self) -> list[str]:
        return self.batch.texts()


class TextBenchmark(Benchmark):
    modality = "text"

    def __init__(
        self, name: str, families, levels: int, metrics: dict | None = None, perturb_seed: int = 0, batch_size: int = 32
    ):
        super().__init__(name, families, levels, metrics, None, perturb_seed, batch_size)

    def view(self, loaded: TextLoaded, perturbed: TextBatch) -> TextView:
        return TextView(perturbed, loaded.device)

    def prepare_metrics(self, loaded: TextLoaded) -> None:
        clean = self.view(loaded, loaded.inputs)
        for m in self.metrics.values():
            m.prepare(clean)

    def evaluate(self, loaded: TextLoaded, batch: TextBatch) -> np.ndarray:
        """(N,) bool: which inputs the model gets right under this perturbed batch."""
        raise NotImplementedError

    def score(self, loaded: TextLoaded, perturbed: TextBatch, theta=None) -> dict:
        """ψ, per-input correctness and every raw fidelity value for one perturbed batch."""
        return self.score_from(loaded, perturbed, self.evaluate(loaded, perturbed))

    def score_from(self, loaded: TextLoaded, perturbed: TextBatch, correct) -> dict:
        correct = np.asarray(correct, dtype=bool)
        out = {"psi": float(correct.mean()) if len(correct) else 0.0, "correct": correct}
        view = self.view(loaded, perturbed)
        for name, metric in self.metrics.items():
            out[name] = metric(view)
        return out


# ----------------------------------------------------------------------------- files on disk (models: models/pretrained.py)


def file_fingerprint(path) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:16]


def require_file(path, what: str, fmt: str) -> Path:
    if path is None or str(path) in ("", "None", "null"):
        raise UserError(f"{what} is not set: give the path of {fmt}")
    p = Path(os.path.expanduser(str(path)))
    if not p.is_file():
        raise UserError(f"{what}={path} does not exist (expected {fmt})")
    return p


def dumps(obj) -> str:
    return json.dumps(obj, sort_keys=True)
