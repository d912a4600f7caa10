"""The paper's image-classification benchmarks on local files: tiny_imagenet (CaiT-S36),
cifar10 (WRN-28-10), gtsrb (CNN-SE), and any classifier on an image folder.

Everything comes from config: a data reader (testnav.data.*) for the test set D, optionally
one for training inputs (only the input-level signals need them), and a ModelSpec (timm name
or class path + local checkpoint; or a prediction function, testnav/models/function.py). ψ = accuracy, as for every VisionBenchmark.
"""

from __future__ import annotations

from ..core.cache import stable_hash
from .vision import Loaded, VisionBenchmark


class ImageClassification(VisionBenchmark):
    def __init__(
        self,
        name,
        families,
        levels,
        data,
        model,
        metrics=None,
        signals=None,
        train_data=None,
        perturb_seed=0,
        batch_size=256,
        amp=True,
    ):
        super().__init__(name, families, levels, metrics, signals, perturb_seed, batch_size, amp)
        self.data, self.model_spec, self.train_data = data, model, train_data
        if not getattr(model, "features", True):  # a prediction function: KID on pixels, no coverage signals
            from ..models.function import without_features

            self.metrics, self.signals = without_features(name, self.metrics, self.signals)

    def data_description(self) -> dict:
        return {"test": self.data.describe(), "train": self.train_data.describe() if self.train_data else None}

    def code_parts(self, signals: bool = True) -> list:
        return [*super().code_parts(signals), self.data, self.train_data, *self.model_spec.code_parts()]

    def load(self, cache_dir) -> Loaded:
        x, y = self.data.load()
        model = self.model_spec.build()
        keyed = getattr(self.model_spec, "key_of", None)  # a prediction function: keyed by its outputs on D too
        model_key = keyed(x, model) if keyed else self.model_spec.key()
        train_x = train_y = None
        if self.train_data is not None and self.signals:
            train_x, train_y = self.train_data.load()
        return Loaded(inputs=x, labels=y, model=model, model_key=model_key, train_inputs=train_x, train_labels=train_y)

    def __repr__(self):
        return f"ImageClassification({self.name}, {stable_hash(self.data_description(), 8)})"
