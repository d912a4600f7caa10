"""Image-classification benchmarks: ψ = accuracy, fidelity metrics on image tensors."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from ..core.sets import PerSet
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


class Activations:
    """What the activation-based metrics and signals read off a view, derived from `layers` and
    `probabilities` (which a subclass provides) once and shared by all of them. A view holds
    `sets` equal-size image sets stacked along the batch (testnav/core/sets.py); the per-set helpers
    reduce per-input values to one per set."""

    sets = 1
    layers: list[torch.Tensor]
    probabilities: torch.Tensor

    @property
    def features(self) -> torch.Tensor:
        return self.layers[-1]

    @cached_property
    def predictions(self) -> torch.Tensor:
        return self.probabilities.argmax(1)

    @property
    def neurons(self) -> torch.Tensor:
        """(N, total neurons) float64 activations of all monitored layers side by side, made on
        each call: only KMNC reads it per configuration, and a cached copy would stay alive with
        the view (sets × |D| × neurons float64)."""
        return torch.cat([layer.double() for layer in self.layers], dim=1)

    @cached_property
    def by_class(self) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
        """Per predicted class, its row indices (ascending) and their features in float64 (LSA
        and DSA compare each input with the training inputs of its predicted class; one sort
        and one gather serve both, over every stacked set)."""
        pred = self.predictions
        order = torch.argsort(pred, stable=True)
        classes, counts = torch.unique_consecutive(pred[order], return_counts=True)
        features = self.features[order].double()
        return dict(
            zip(classes.tolist(), zip(torch.split(order, counts.tolist()), torch.split(features, counts.tolist())))
        )

    def set_means(self, per_input: torch.Tensor) -> torch.Tensor:
        """(sets,) float64 means of a per-input value over each set."""
        return per_input.double().reshape(self.sets, -1).mean(1)

    def set_any(self, per_input: torch.Tensor) -> torch.Tensor:
        """(sets, …) whether any input of each set has a per-input (N, …) flag."""
        return per_input.reshape(self.sets, -1, *per_input.shape[1:]).any(1)


class View(Activations):
    """One image set, or several of equal size (`images` a list: the stacked sets), as the
    metrics see it: the images, and the model's hidden activations computed once and shared by
    the prediction and every activation-based metric."""

    def __init__(self, images, model: torch.nn.Module, batch_size: int, labels=None, amp: bool = True):
        self.parts = list(images) if isinstance(images, (list, tuple)) else [images]
        if len({len(p) for p in self.parts}) != 1:
            raise ValueError(f"stacked sets of unequal sizes: {[len(p) for p in self.parts]}")
        self.model, self.batch_size, self.labels, self.amp = model, batch_size, labels, amp
        self.sets = len(self.parts)

    @cached_property
    def images(self) -> torch.Tensor:
        """All sets' images along one batch (metrics that work set by set read `parts` instead)."""
        return self.parts[0] if self.sets == 1 else torch.cat(self.parts)

    @cached_property
    def outputs(self) -> tuple[list[torch.Tensor], torch.Tensor | None]:
        """Batched inference, set by set; on CUDA with channels-last inputs and bf16 autocast
        (activations are returned in float32 so every metric sees the same precision). A
        `Monitored` model gives its logits from the same pass; testnav's own nets give them from
        `classifier` (None here, computed from the features when asked). An image's activations
        do not depend on the batch it is in (stacked and alone agree to the bit: tests)."""
        monitored = isinstance(self.model, Monitored)
        chunks, logits = [], []
        with torch.inference_mode():
            for images in self.parts:
                cuda = images.is_cuda
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda and self.amp):
                    for i in range(0, len(images), self.batch_size):
                        batch = images[i : i + self.batch_size]
                        if cuda and batch.shape[1] > 1:
                            batch = batch.contiguous(memory_format=torch.channels_last)
                        if monitored:
                            layers, z = self.model.monitor(batch)
                            logits.append(z.float())
                        else:
                            layers = self.model.hidden(batch)
                        chunks.append([h.float() for h in layers])
        if len(chunks) == 1:
            return chunks[0], logits[0] if monitored else None
        return [torch.cat(parts) for parts in zip(*chunks)], torch.cat(logits) if monitored else None

    @property
    def layers(self) -> list[torch.Tensor]:
        return self.outputs[0]

    @cached_property
    def probabilities(self) -> torch.Tensor:
        with torch.inference_mode():
            logits = self.outputs[1]
            if logits is None:
                logits = self.model.classifier(self.features)
            return torch.softmax(logits.double(), dim=1)


class VisionBenchmark(Benchmark):
    modality = "image"

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

    def view(self, loaded: Loaded, perturbed) -> View:
        """One perturbed set, or several stacked (a list)."""
        return View(perturbed, loaded.model, self.batch_size, amp=self.amp)

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
        return self.score_sets(loaded, [perturbed], [theta])[0]

    def score_sets(self, loaded: Loaded, sets: list, thetas: list) -> list[dict]:
        """`score` of each set; stacked into one view (testnav/core/sets.py) where every metric and
        signal can score stacked sets, else one set at a time."""
        metrics = {**self.metrics, **self.signals}
        if len(sets) > 1 and not all(isinstance(m, PerSet) for m in metrics.values()):
            return [self.score_sets(loaded, [x], [t])[0] for x, t in zip(sets, thetas)]
        view = self.view(loaded, sets)
        correct = (view.predictions.view(len(sets), -1) == loaded.labels).cpu().numpy()
        values = {name: m.per_set(view).tolist() if isinstance(m, PerSet) else [m(view)] for name, m in metrics.items()}
        return [
            {"psi": float(ok.mean()), "correct": ok, **{name: v[s] for name, v in values.items()}}
            for s, ok in enumerate(correct)
        ]


def stratified_split(labels: np.ndarray, n_test_per_class: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Fixed stratified split: per class, a seeded permutation; the last n go to the test set."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        test.append(idx[-n_test_per_class:])
        train.append(idx[:-n_test_per_class])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))
