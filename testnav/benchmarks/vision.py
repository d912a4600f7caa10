"""Image-classification benchmarks: ψ = accuracy, fidelity metrics on image tensors."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from ..errors import UserError
from ..models.monitor import Monitored
from .base import Benchmark


@dataclass
class Loaded:
    inputs: torch.Tensor  # (N, C, H, W) in [0, 1]: the clean test set D
    labels: torch.Tensor  # (N,)
    model: torch.nn.Module  # a Monitored model, or one exposing hidden(x) -> [activations] and classifier(features)
    model_key: str  # hash identifying the trained weights
    train_inputs: torch.Tensor | None = None  # what input-level signals calibrate on (coverage ranges, KDEs)
    train_labels: torch.Tensor | None = None


class View:
    """One image set as the metrics see it: the images, and the model's hidden activations
    computed once and shared by the prediction and every activation-based metric."""

    def __init__(self, images: torch.Tensor, model: torch.nn.Module, batch_size: int, labels=None, amp: bool = True):
        self.images, self.model, self.batch_size, self.labels, self.amp = images, model, batch_size, labels, amp

    @cached_property
    def outputs(self) -> tuple[list[torch.Tensor], torch.Tensor | None]:
        """Batched inference; on CUDA with channels-last inputs and bf16 autocast (activations
        are returned in float32 so every metric sees the same precision). A `Monitored` model
        gives its logits from the same pass; testnav's own nets give them from `classifier`
        (None here, computed from the features when asked)."""
        cuda = self.images.is_cuda
        monitored = isinstance(self.model, Monitored)
        chunks, logits = [], []
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda and self.amp):
            for i in range(0, len(self.images), self.batch_size):
                batch = self.images[i : i + self.batch_size]
                if cuda and batch.shape[1] > 1:
                    batch = batch.contiguous(memory_format=torch.channels_last)
                if monitored:
                    layers, z = self.model.monitor(batch)
                    logits.append(z.float())
                else:
                    layers = self.model.hidden(batch)
                chunks.append([h.float() for h in layers])
        return [torch.cat(parts) for parts in zip(*chunks)], torch.cat(logits) if monitored else None

    @property
    def layers(self) -> list[torch.Tensor]:
        return self.outputs[0]

    @property
    def features(self) -> torch.Tensor:
        return self.layers[-1]

    @cached_property
    def probabilities(self) -> torch.Tensor:
        with torch.inference_mode():
            logits = self.outputs[1]
            if logits is None:
                logits = self.model.classifier(self.features)
            return torch.softmax(logits.double(), dim=1)

    @property
    def predictions(self) -> torch.Tensor:
        return self.probabilities.argmax(1)


class VisionBenchmark(Benchmark):
    modality = "vision"

    def __init__(
        self,
        name: str,
        families,
        levels: int,
        metrics: dict,
        signals: dict | None = None,
        perturb_seed: int = 0,
        batch_size: int = 1024,
        amp: bool = True,
    ):
        super().__init__(name, families, levels, metrics, signals, perturb_seed, batch_size)
        self.amp = bool(amp)  # bf16 autocast on CUDA

    def prepare_metrics(self, loaded: Loaded) -> None:
        """Calibrate every metric once: fidelity on the clean set D, signals on the training set."""
        clean = View(loaded.inputs, loaded.model, self.batch_size, loaded.labels, self.amp)
        for m in self.metrics.values():
            m.prepare(clean)
        if self.signals:
            if loaded.train_inputs is None:
                raise UserError(
                    f"benchmark {self.name}: input-level signals need training inputs, which it does not load"
                )
            train = View(
                loaded.train_inputs.to(loaded.inputs.device),
                loaded.model,
                self.batch_size,
                loaded.train_labels.to(loaded.inputs.device),
                self.amp,
            )
            for m in self.signals.values():
                m.prepare(train)

    def score(self, loaded: Loaded, perturbed: torch.Tensor, theta=None) -> dict:
        """ψ, per-input correctness and every raw fidelity value for one perturbed set.
        θ (the configuration that produced it; None for the clean set) is unused here;
        benchmarks whose labels move with the input (detection boxes) need it."""
        view = View(perturbed, loaded.model, self.batch_size, amp=self.amp)
        correct = (view.predictions == loaded.labels).cpu().numpy()
        out = {"psi": float(correct.mean()), "correct": correct.astype(bool)}
        for name, metric in {**self.metrics, **self.signals}.items():
            out[name] = metric(view)
        return out


def stratified_split(labels: np.ndarray, n_test_per_class: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Fixed stratified split: per class, a seeded permutation; the last n go to the test set."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        test.append(idx[-n_test_per_class:])
        train.append(idx[:-n_test_per_class])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))
