"""Write or check the golden digests of the mnist5k ground truth (results/golden/).

    python scripts/golden.py check              # recompute (or read the cached) tables, compare, exit 1 on a difference
    python scripts/golden.py write              # after an intended change: rewrite the goldens from the tables
    python scripts/golden.py check --scale mnist5k-reduced --cache-dir /tmp/c

What is compared and within which tolerance: testnav/pipeline/golden.py and docs/reproducibility.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

from testnav.pipeline import golden  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["check", "write"])
    ap.add_argument("--scale", choices=sorted(golden.SCALES), action="append", help="which golden (default: all)")
    ap.add_argument("--cache-dir", default=str(ROOT / "results" / "cache"))
    ap.add_argument("--golden-dir", default=str(golden.GOLDEN_DIR))
    args = ap.parse_args(argv)
    failed = 0
    for scale in args.scale or sorted(golden.SCALES):
        table = golden.groundtruth(scale, args.cache_dir, progress=True)
        stem = Path(args.golden_dir) / scale
        if args.action == "write":
            about = {
                "scale": scale,
                "overrides": list(golden.SCALES[scale]),
                "made_by": f"python scripts/golden.py write --scale {scale}",
            }
            csv, meta = golden.write(table, stem, about)
            print(f"golden {scale}: wrote {csv.relative_to(ROOT)} and {meta.name}")
            continue
        problems = golden.compare(table, stem)
        fronts = golden.fronts(table)
        summary = "; ".join(f"{m} |P*| = {f['pstar_size']} {tuple(f['pstar_orders'])}" for m, f in fronts.items())
        print(f"golden {scale}: {'IDENTICAL' if not problems else 'DIFFERENT'} ({len(table)} rows; {summary})")
        for p in problems:
            print(f"  {p}")
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
