"""The scan shown in the README and docs/your-model.md (docs/scan.png), rebuilt from scratch.

scikit-learn's LogisticRegression trained on 1,200 of scikit-learn's own 8×8 digits, tested on the
other 597 through a prediction function with `testnav.Tester(...).scan()`: Gaussian blur, brightness,
contrast and JPEG at levels=4 (the identity and severities 1, 3, 5 of each table; 256
configurations). Prints the findings, the scan's time and the report's size; with Debian's chromium
installed (`make browser`), renders the report headless and saves its first screen as docs/scan.png.

    python scripts/scan_example.py [--out results/scan_example] [--no-screenshot]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "results" / "scan_example"))
    ap.add_argument("--no-screenshot", action="store_true")
    args = ap.parse_args()

    import torch
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    import testnav

    digits = load_digits()
    images = torch.tensor(digits.images[:, None] / 16, dtype=torch.float32)
    t0 = time.perf_counter()
    clf = LogisticRegression(max_iter=1000).fit(digits.data[:1200] / 16, digits.target[:1200])
    trained = time.perf_counter() - t0

    def predict(batch):
        return clf.predict_proba(batch.reshape(len(batch), -1))

    t = testnav.Tester(
        predict,
        (images[1200:], digits.target[1200:]),
        families=["gaussian_blur", "brightness", "contrast", "jpeg"],
        levels=4,
        name="LogisticRegression on digits",
        cache_dir=Path(args.out) / "cache",
    )
    t0 = time.perf_counter()
    findings = t.scan()
    seconds = time.perf_counter() - t0
    print(findings)
    path = findings.report(Path(args.out) / "report.html")
    findings.save(Path(args.out) / "findings")
    print(f"trained in {trained:.1f} s; scanned in {seconds:.1f} s; {path}: {path.stat().st_size:,} bytes")
    from testnav.report.browser import chromium, screenshot

    if args.no_screenshot or chromium() is None:
        print("no screenshot (chromium not installed: make browser)")
        return
    png = screenshot(path, ROOT / "docs" / "scan.png", height=1000)
    print(f"{png}: the report's first screen, 1280×1000")


if __name__ == "__main__":
    main()
