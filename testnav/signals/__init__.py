"""Input-level signals (TestNav §4.4): neuron coverage and test prioritisation scores.

Each is one module, instantiated from the benchmark YAML (`signals:`), calibrated once on
the model's activations over the *training* inputs (`prepare(train_view)`) and evaluated on
each perturbed test set T_θ during the ground-truth pass (`per_set(view)`: one value per
stacked set, testnav/core/sets.py; `__call__(view) -> float` for a single set), so
that a search using one as its sole objective replays by table lookup. All are "higher
means more interesting" and are maximised. Monitored neurons: the model's hidden layers
as returned by `model.hidden(x)` (for LeNet-5 the two fully connected layers, 120 + 84
post-ReLU neurons); LSA and DSA use the last of them. See docs/signals.md.

The coverage signals (NAC, SNAC, KMNC, TKNC) compare activations with edges: a threshold, a
training maximum, 1,000 section edges per neuron, the k-th largest of a layer. By default they
read the monitored layers recomputed in float64 from the images (`Coverage.precision`), so that
a CPU's choice of float32 kernel cannot move a value across an edge and the table is the same on
every host; `precision: model` reads the model's own forward pass instead (what a GPU run of a
large model affords). DeepGini, LSA and DSA average float values and read the model's pass.
"""

from __future__ import annotations

import weakref

import numpy as np
import torch

from ..core.sets import PerSet


class Signal(PerSet):
    name = "signal"
    needs_features = True  # reads the model's activations; DeepGini only its output probabilities

    def prepare(self, train) -> None:
        """Calibrate on the training inputs' view (most signals need nothing)."""

    def describe(self) -> dict:
        return {"signal": type(self).__name__, **{k: v for k, v in vars(self).items() if not k.startswith("_")}}


PRECISIONS = ("float64", "model")
FLOAT64_BATCH = 256  # the float64 forward ran fastest in batches of 128–256 images on LeNet-5 (CPU)
FLOAT64 = weakref.WeakKeyDictionary()  # a view → its monitored layers in float64, while the view lives


class Coverage(Signal):
    """A signal that bins or thresholds activations, in the precision `precision` names."""

    def __init__(self, precision: str):
        if precision not in PRECISIONS:
            from ..errors import UserError

            raise UserError(
                f"{type(self).__name__.lower()} precision={precision} (valid: {', '.join(PRECISIONS)}: the "
                "monitored layers recomputed in float64, or the model's own forward pass)"
            )
        self.precision = precision

    def layers(self, view) -> list[torch.Tensor]:
        """The view's monitored layers in this signal's precision; the float64 ones are computed
        once per view and shared by every coverage signal. A view without images and a model
        (activations given as data) has nothing to recompute: its layers are read as float64."""
        if self.precision == "model":
            return view.layers
        cached = FLOAT64.get(view)
        if cached is None:
            model, parts = getattr(view, "model", None), getattr(view, "parts", None)
            if model is None or parts is None:
                cached = [layer.double() for layer in view.layers]
            else:
                from ..models.monitor import float64_layers

                cached = float64_layers(model, parts, min(int(view.batch_size), FLOAT64_BATCH))
            FLOAT64[view] = cached
        return cached


def cpu_layers(layers) -> list[np.ndarray] | None:
    """The layers as numpy arrays (sharing their memory where contiguous) where the compiled
    CPU kernels of NAC, KMNC and TKNC can score them, else None (the torch code, which CUDA runs). A kernel does in one pass
    per row what the torch code does in a dozen passes over the whole stack, with the same IEEE
    operations in the same order, so both give the same values to the bit (tests). The kernels
    run on one thread: split over two, they gained less beside torch's own threads, which
    keep spinning for a while after each of torch's parallel steps."""
    if any(layer.device.type != "cpu" or layer.dtype not in (torch.float32, torch.float64) for layer in layers):
        return None
    return [layer.detach().contiguous().numpy() for layer in layers]


def _registry():
    from ..registry import Registry

    return Registry("signals", Signal, "signal")


def names() -> list[str]:
    """Every input-level signal of conf/signals."""
    return _registry().names()


def make(name, **overrides) -> Signal:
    """The signal `name` (conf/signals/<name>.yaml) with `overrides` of its settings."""
    return _registry().make(name, **overrides)


def signals_for(settings) -> dict[str, Signal]:
    """A benchmark's signals by column: `settings` maps each name to overrides of its YAML (or
    to a Signal object, taken as it is); a list of names takes their defaults."""
    if isinstance(settings, (list, tuple)):
        settings = {name: {} for name in settings}
    return {n: s if isinstance(s, Signal) else make(n, **dict(s or {})) for n, s in dict(settings or {}).items()}
