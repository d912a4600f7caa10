"""The inputs behind the numbers: D under one configuration, with the model's predictions.

A search reports δ and ρ per configuration; a person asks which inputs broke. `Inputs` perturbs
D under θ with the session's prefix walker (the same per-prefix generators as the ground truth
and the live search, so these are exactly the inputs that were scored) and runs the model on
them: per input its label, the clean and the perturbed prediction and whether it flipped from
right to wrong; a few of them clean beside perturbed, flips first; the accuracy per class; and
the whole perturbed set (a tensor, or the texts) for augmentation or the user's own analysis.
Image and text classifiers are supported (other tasks have no single predicted class). A session
makes its `Inputs` once (`Session.inputs`): the clean predictions are computed once per session.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd
import torch

from ..errors import UserError


def supported(benchmark, loaded) -> bool:
    """Whether per-input predictions can be read: an image classifier or a text classifier."""
    if hasattr(benchmark, "predict") and hasattr(loaded.inputs, "items"):
        return True
    return isinstance(loaded.inputs, torch.Tensor) and not hasattr(loaded, "boxes") and loaded.labels.dim() == 1


class Inputs:
    """D and the model of an opened session (testnav.pipeline.open), read input by input; made once
    per session, as `session.inputs`."""

    def __init__(self, session):
        self.session, self.benchmark, self.loaded = session, session.benchmark, session.loaded
        if not supported(self.benchmark, self.loaded):
            raise UserError(
                f"benchmark {self.benchmark.name}: per-input predictions are read for image and text classifiers only"
            )
        self.text = hasattr(self.loaded.inputs, "items")

    @property
    def labels(self) -> np.ndarray:
        return self.loaded.labels.cpu().numpy()

    @cached_property
    def clean_predictions(self) -> np.ndarray:
        return self.predictions(self.loaded.inputs)

    @cached_property
    def class_names(self) -> dict[int, str]:
        """Class index → a name where the model or the data has one (a text model's id2label,
        an image folder's class folders), else the index itself."""
        names = {}
        config = getattr(self.loaded.model, "config", None)
        id2label = getattr(config, "id2label", None) or {}
        if not all(str(v) == f"LABEL_{k}" for k, v in id2label.items()):
            names = {int(k): str(v) for k, v in id2label.items()}
        data = getattr(self.benchmark, "data", None)
        for k, v in enumerate(getattr(data, "classes", None) or []):
            names.setdefault(k, str(v))
        return names

    def class_name(self, k: int) -> str:
        return self.class_names.get(int(k), str(int(k)))

    def perturbed(self, theta):
        """D under θ, as the model sees it (a tensor on the device, or a TextBatch)."""
        with torch.inference_mode():
            return self.session.walker.images(tuple(int(t) for t in theta))

    def correct_in_order(self, theta, order) -> np.ndarray:
        """Whether the model is right on each input of D with θ's families applied in `order` (family
        indices, each of θ's non-zero levels once) instead of list order. Each step draws from a
        generator of its own, keyed by the order so far (the list order's draws are the walker's)."""
        from .walk import prefix_generator

        x, seed = self.loaded.inputs, self.session.walker.seed
        families = self.benchmark.families
        with torch.inference_mode():
            for step, i in enumerate(order):
                done = [(int(j), int(theta[j])) for j in order[: step + 1]]
                x = families[i](x, int(theta[i]), prefix_generator(seed, ("order", *sum(done, ()))))
            return self.predictions(x) == self.labels

    def predictions(self, inputs) -> np.ndarray:
        """The predicted class of every input of a set (D, or D under some θ)."""
        if self.text:
            return self.benchmark.predict(self.loaded, [tuple(item) for item in inputs.items])
        from ..benchmarks.vision import View

        view = View(inputs, self.loaded.model, self.benchmark.batch_size, amp=getattr(self.benchmark, "amp", True))
        return view.predictions.cpu().numpy()

    def perturb(self, theta):
        """The whole perturbed data set: an (N, C, H, W) tensor on the CPU, or the texts (one string
        per input, a tuple of two for pairs)."""
        x = self.perturbed(theta)
        return [self.shown(item) for item in x.items] if self.text else x.detach().cpu().clone()

    @staticmethod
    def shown(item):
        return item[0] if len(item) == 1 else tuple(item)

    def outcomes(self, theta) -> pd.DataFrame:
        """One row per input of D: label, clean and perturbed prediction, and what changed."""
        pred = self.predictions(self.perturbed(theta))
        clean, y = self.clean_predictions, self.labels
        return pd.DataFrame(
            {
                "input": np.arange(len(y)),
                "label": y,
                "clean_prediction": clean,
                "prediction": pred,
                "clean_correct": clean == y,
                "correct": pred == y,
                "flipped": (clean == y) & (pred != y),  # right → wrong
                "changed": clean != pred,
            }
        )

    def examples(self, theta, k: int, outcomes: pd.DataFrame | None = None) -> pd.DataFrame:
        """k inputs under θ, flips (right → wrong) first, then other changed predictions, then the
        rest, each in the order of D; with the clean and the perturbed input (a C×H×W tensor, or
        the text) beside the labels and predictions."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise UserError(f"k={k}: the number of examples must be a whole number ≥ 1")
        out = self.outcomes(theta) if outcomes is None else outcomes
        rank = np.where(out["flipped"], 0, np.where(out["changed"], 1, 2))
        picked = out.iloc[np.lexsort((out["input"].to_numpy(), rank))[:k]].reset_index(drop=True)
        rows = picked["input"].tolist()
        x = self.perturbed(theta)
        if self.text:
            picked["clean"] = [self.shown(self.loaded.inputs.items[i]) for i in rows]
            picked["perturbed"] = [self.shown(x.items[i]) for i in rows]
        else:
            picked["clean"] = [self.loaded.inputs[i].detach().cpu() for i in rows]
            picked["perturbed"] = [x[i].detach().cpu() for i in rows]
        return picked

    def per_class(self, outcomes: pd.DataFrame) -> pd.DataFrame:
        """Accuracy per class, clean and under the configuration, and the drop (largest first)."""
        g = outcomes.groupby("label")
        out = pd.DataFrame(
            {
                "inputs": g.size(),
                "clean_accuracy": g["clean_correct"].mean(),
                "accuracy": g["correct"].mean(),
                "flipped": g["flipped"].sum(),
            }
        ).reset_index()
        out.insert(1, "class", [self.class_name(k) for k in out["label"]])
        out["drop"] = out["clean_accuracy"] - out["accuracy"]
        return out.sort_values(["drop", "label"], ascending=[False, True], kind="stable").reset_index(drop=True)
