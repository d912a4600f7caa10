"""Input-level signals (TestNav §4.4): neuron coverage and test prioritisation scores.

Each is one module, instantiated from the benchmark YAML (`signals:`), calibrated once on
the model's activations over the *training* inputs (`prepare(train_view)`) and evaluated on
each perturbed test set T_θ during the ground-truth pass (`per_set(view)`: one value per
stacked set, testnav/sets.py; `__call__(view) -> float` for a single set), so
that a search using one as its sole objective replays by table lookup. All are "higher
means more interesting" and are maximised. Monitored neurons: the model's hidden layers
as returned by `model.hidden(x)` (for LeNet-5 the two fully connected layers, 120 + 84
post-ReLU neurons); LSA and DSA use the last of them. See docs/signals.md.
"""

from __future__ import annotations

from ..sets import PerSet


class Signal(PerSet):
    name = "signal"

    def prepare(self, train) -> None:
        """Calibrate on the training inputs' view (most signals need nothing)."""

    def describe(self) -> dict:
        return {"signal": type(self).__name__, **{k: v for k, v in vars(self).items() if not k.startswith("_")}}
