"""How much harsher ImageNet-C's 224-px tables are than Tiny-ImageNet-C's 64-px ones, on a small fixture.

    python scripts/severity_tables.py [--epochs 3]

TestNav's Tiny-ImageNet families (speckle noise, glass blur, brightness, pixelate) take the
224-px tables by default (conf/families/tiny_imagenet_224.yaml) and the 64-px ones as an option
(tiny_imagenet_64.yaml; docs/readings.md). No CaiT-S36 or Tiny-ImageNet is shipped, so the
fixture is what is: mnist5k's digits upsampled to 64 × 64 RGB (bilinear), and a small CNN trained
on its 4,000 training digits (seeded, CPU). For each table it prints the clean accuracy on the
1,000 test digits, the accuracy with each family alone at level 5 and with all four at level 5
(composed in the benchmark's order), and the mean SSIM against the clean images (model-free).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]

from hydra.utils import instantiate  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from testnav.fidelity.ssim import ssim_per_image  # noqa: E402
from testnav.paths import CONF  # noqa: E402
from testnav.pipeline import compose_benchmark  # noqa: E402

TABLES = {"224 px (ImageNet-C, default)": "tiny_imagenet_224", "64 px (Tiny-ImageNet-C, option)": "tiny_imagenet_64"}


def fixture():
    b = compose_benchmark([])
    x_train, y_train, x_test, y_test = b._arrays()
    up = lambda x: (
        nn.functional.interpolate(x, size=64, mode="bilinear", align_corners=False).clamp(0, 1).repeat(1, 3, 1, 1)
    )  # noqa: E731
    return up(x_train), y_train, up(x_test), y_test


def train(x, y, epochs: int) -> nn.Module:
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 10),
    )  # fmt: skip
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(0)
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), 64):
            idx = perm[i : i + 64]
            opt.zero_grad()
            nn.functional.cross_entropy(net(x[idx]), y[idx]).backward()
            opt.step()
    return net.eval()


@torch.no_grad()
def accuracy(net, x, y) -> float:
    return float(torch.cat([net(x[i : i + 500]).argmax(1) for i in range(0, len(x), 500)]).eq(y).float().mean())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=3)
    args = ap.parse_args(argv)
    x_train, y_train, x, y = fixture()
    net = train(x_train, y_train, args.epochs)
    clean = accuracy(net, x, y)
    print(
        f"fixture: mnist5k digits at 64 × 64 RGB, small CNN ({args.epochs} epochs): clean accuracy {100 * clean:.1f} %\n"
    )
    print("| tables | family at level 5 | accuracy | drop (points) | mean SSIM |")
    print("|---|---|---:|---:|---:|")
    for label, name in TABLES.items():
        families = instantiate(OmegaConf.load(CONF / "families" / f"{name}.yaml").families, _convert_="all")
        rows = [(f.name, [f]) for f in families] + [("all four", families)]
        for what, chain in rows:
            out = x
            for k, f in enumerate(chain):
                out = f(out, 5, torch.Generator().manual_seed(k))
            acc = accuracy(net, out, y)
            ssim = float(ssim_per_image(out, x).mean())
            print(f"| {label} | {what} | {100 * acc:.1f} % | {100 * (clean - acc):.1f} | {ssim:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
