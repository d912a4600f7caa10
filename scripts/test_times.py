"""Time the test tiers as CI meets them: a fresh clone of HEAD, `make install`, then `make test`
(and, with --all, `make test-all`), each timed; writes results/test_times.json, which
`make bench` renders as results/bench.md's "Test tiers" section (the README's timing column).

    python scripts/test_times.py          # make install + make test on a fresh clone (~3–6 min)
    python scripts/test_times.py --all    # also make test-all (~10–15 min)
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def host() -> dict:
    """The machine the times belong to: CPU model, its vector extensions, cores."""
    import os

    info = {"cores": os.cpu_count()}
    try:
        text = Path("/proc/cpuinfo").read_text()
        info["cpu"] = re.search(r"^model name\s*:\s*(.+)$", text, re.M).group(1).strip()
        flags = set(re.search(r"^flags\s*:\s*(.+)$", text, re.M).group(1).split())
        info["vector"] = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    except (OSError, AttributeError):
        info["cpu"] = "unknown"
    return info


def timed(cmd: list[str], cwd: Path) -> dict:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    tail = (done.stdout + done.stderr)[-4000:]
    summary = re.findall(r"((?:\d+ \w+, )*\d+ passed[^\n]*)", tail)  # "1 failed, 799 passed, …" whole
    return {
        "command": " ".join(cmd),
        "seconds": round(seconds, 1),
        "exit": done.returncode,
        "pytest": summary[-1].strip("= ") if summary else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true", help="also time make test-all")
    args = ap.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    out = {"commit": commit, "date": time.strftime("%Y-%m-%d"), "host": host(), "tiers": {}}
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        for tier in ["install", "test"] + (["test-all"] if args.all else []):
            print(f"test_times: make {tier} …", flush=True)
            out["tiers"][tier] = r = timed(["make", tier], clone)
            print(f"test_times: make {tier}: {r['seconds']:.0f} s, exit {r['exit']}, {r['pytest']}", flush=True)
            if r["exit"]:
                break
    path = ROOT / "results" / "test_times.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"test_times: {path}")
    return max(r["exit"] for r in out["tiers"].values())


if __name__ == "__main__":
    raise SystemExit(main())
