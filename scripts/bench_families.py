"""Throughput of the batched image families vs the reference library (imagecorruptions-imaug).

For each family and image size (32 px with the CIFAR-10-C table, 64 px with the
Tiny-ImageNet-C table, both from conf/families/), level 3: our family on one (B, 3, S, S)
batch, and the reference per image (its own function with the same table swapped in,
`testnav.families.reference`, then np.uint8 as `imagecorruptions.corrupt` does) on the first
`--ref-images` images of the same batch. Throughput is images/s (best of `--repeat` runs);
ratio = ours / reference. torch runs on one thread by default (`--threads`), so the ratio is
per core. Prints a Markdown table and the geometric mean of the ratios over
speckle, glass, brightness and pixelate.

    python scripts/bench_families.py                 # batch 1,000, < ~2 min on 2 cores
    python scripts/bench_families.py --batch 200 --ref-images 50
"""

from __future__ import annotations

import argparse
import math
import pathlib
import time

import numpy as np
import torch
import torch.nn.functional as F
from hydra.utils import instantiate
from omegaconf import OmegaConf

from testnav.families.reference import reference_function

ROOT = pathlib.Path(__file__).resolve().parents[1]
TABLES = {32: "imagenet_c_32", 64: "imagenet_c_64"}
REFERENCE_NAME = {"SpeckleNoise": "speckle_noise", "ShotNoise": "shot_noise", "GaussianBlur": "gaussian_blur",
                  "GlassBlur": "glass_blur", "MotionBlur": "motion_blur", "ZoomBlur": "zoom_blur",
                  "Brightness": "brightness", "Contrast": "contrast", "Pixelate": "pixelate", "JPEG": "jpeg_compression"}
GEOMEAN = ("speckle_noise", "glass_blur", "brightness", "pixelate")


def images(n: int, size: int, seed: int = 0) -> torch.Tensor:
    """Smooth random colour fields with sharp-edged discs, on the uint8 grid."""
    g = torch.Generator().manual_seed(seed)
    x = F.interpolate(torch.rand(n, 3, 5, 5, generator=g), size=size, mode="bicubic", align_corners=False)
    yy, xx = torch.meshgrid(torch.arange(size) / size, torch.arange(size) / size, indexing="ij")
    for _ in range(3):
        cy, cx, r = torch.rand(3, n, 1, 1, generator=g)
        disc = (((yy - cy) ** 2 + (xx - cx) ** 2) < (0.1 + 0.25 * r) ** 2).float()[:, None]
        x = x * (1 - disc) + torch.rand(n, 3, 1, 1, generator=g) * disc
    return (x.clamp(0, 1) * 255).round() / 255


def best_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=1000, help="images per batch for our families")
    ap.add_argument("--ref-images", type=int, default=200, help="images timed for the per-image reference")
    ap.add_argument("--sizes", type=int, nargs="+", default=[32, 64], choices=sorted(TABLES))
    ap.add_argument("--level", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads (default 1: per-core comparison with the single-threaded reference)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    from PIL import Image

    rows, ratios = [], {}
    for size in args.sizes:
        families = instantiate(OmegaConf.load(ROOT / "conf" / "families" / f"{TABLES[size]}.yaml").families,
                               _convert_="all")
        x = images(args.batch, size)
        u8 = (x[: args.ref_images] * 255).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()
        pil = [Image.fromarray(img) for img in u8]
        for family in families:
            name = REFERENCE_NAME[type(family).__name__]
            ref = reference_function(name, family.params)
            kwargs = {"seed": 0} if name == "glass_blur" else {}
            family(x[:8], args.level, torch.Generator().manual_seed(0))  # warm caches
            np.uint8(ref(pil[0], args.level, **kwargs))  # warm (numba compiles glass_blur once)
            t_ours = best_time(lambda: family(x, args.level, torch.Generator().manual_seed(0)), args.repeat)
            t_ref = best_time(lambda: [np.uint8(ref(p, args.level, **kwargs)) for p in pil], args.repeat)
            ours, theirs = args.batch / t_ours, len(pil) / t_ref
            ratios[name, size] = ours / theirs
            rows.append((name, size, family.params[args.level - 1], ours, theirs, ours / theirs))
            print(f"  {name} {size}px: ours {ours:,.0f} img/s, reference {theirs:,.0f} img/s", flush=True)

    print()
    print(f"Batch {args.batch} (reference: {args.ref_images} images, one at a time), level {args.level}, "
          f"torch {torch.__version__} CPU, {torch.get_num_threads()} thread(s); reference single-threaded.")
    print()
    print("| family | size | parameter | ours (img/s) | reference (img/s) | ratio |")
    print("|---|---|---|---:|---:|---:|")
    for name, size, param, ours, theirs, ratio in rows:
        print(f"| {name} | {size} | {param} | {ours:,.0f} | {theirs:,.0f} | {ratio:.2f}× |")
    print()
    for size in args.sizes:
        g = [ratios[n, size] for n in GEOMEAN if (n, size) in ratios]
        print(f"geometric mean ratio over {', '.join(GEOMEAN)} at {size} px: "
              f"{math.exp(sum(map(math.log, g)) / len(g)):.2f}×")
    g = [ratios[n, s] for n in GEOMEAN for s in args.sizes if (n, s) in ratios]
    print(f"geometric mean ratio over {', '.join(GEOMEAN)}, all sizes: {math.exp(sum(map(math.log, g)) / len(g)):.2f}×")


if __name__ == "__main__":
    main()
