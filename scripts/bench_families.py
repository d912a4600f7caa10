"""Throughput of the batched image families vs the reference library (imagecorruptions-imaug).

For each family and image size (32 px with the CIFAR-10-C table, 64 px with the
Tiny-ImageNet-C table, both from conf/families/), level 3: our family on one (B, 3, S, S)
batch, and the reference per image (its own function with the same table swapped in,
`tests/helpers/family_reference.py`, then np.uint8 as `imagecorruptions.corrupt` does) on the first
`--ref-images` images of the same batch. Throughput is images/s (best of `--repeat` runs, ours
and the reference timed alternately); ratio = ours / reference. torch runs on one thread by
default (`--threads`), so the ratio is per core. Prints a Markdown table and the geometric mean
of the ratios over speckle, glass, brightness and pixelate (progress lines go to stderr).

Our side is timed twice: in this process (PyTorch's default CPU allocation) and in a child
process with THP_MEM_ALLOC_ENABLE=1 (PyTorch backs allocations ≥ 2 MiB with transparent huge
pages). A fresh 1,000-image output at 64 px is 49 MB; with 4 KiB pages each call page-faults it
in, which alone costs about as long as the whole per-image reference on one pixelate batch.
The child only times our families (`--ours-only`); `--no-thp` skips it.

    python scripts/bench_families.py                 # batch 1,000, < ~2 min on 2 cores
    python scripts/bench_families.py --batch 200 --ref-images 50
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import statistics
import subprocess
import sys

import numpy as np
import torch

from testnav.core.timing import interleaved
from testnav.data.scenes import scenes
from testnav.families import make as family_make
from testnav.families import table_nodes

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository's tests package (the reference families), not testnav
from tests.helpers.family_reference import reference_function  # noqa: E402  (the test-support package, beside scripts/)

TABLES = {32: "imagenet_c_32", 64: "imagenet_c_64"}
GEOMEAN = ("speckle_noise", "glass_blur", "brightness", "pixelate")


def images(n: int, size: int, seed: int = 0) -> torch.Tensor:
    """The test suite's synthetic scenes (testnav/data/scenes.py), on the uint8 grid."""
    x = scenes(n, size, torch.Generator().manual_seed(seed))
    return (x.clamp(0, 1) * 255).round() / 255


def best_time(fn, repeat: int) -> float:
    return min(interleaved({"fn": fn}, repeat)["fn"])


def interleaved_best(a, b, repeat: int) -> tuple[float, float]:
    """Best time of each of a and b, timed alternately (testnav/core/timing.py)."""
    times = interleaved({"a": a, "b": b}, repeat)
    return min(times["a"]), min(times["b"])


def geomean(v) -> float:
    return math.exp(sum(map(math.log, v)) / len(v))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=1000, help="images per batch for our families")
    ap.add_argument("--ref-images", type=int, default=200, help="images timed for the per-image reference")
    ap.add_argument("--sizes", type=int, nargs="+", default=[32, 64], choices=sorted(TABLES))
    ap.add_argument(
        "--families", nargs="+", metavar="NAME", help="only these families (reference names, e.g. pixelate)"
    )
    ap.add_argument("--level", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many timed runs per side (a noisy shared host)")
    ap.add_argument(
        "--rounds", type=int, default=1, help="time every case this many times, one sweep after another; report medians"
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (default 1: per-core comparison with the single-threaded reference)",
    )
    ap.add_argument("--no-thp", action="store_true", help="skip the THP_MEM_ALLOC_ENABLE=1 timing of our side")
    ap.add_argument("--json", type=pathlib.Path, help="also write the rows as JSON here")
    ap.add_argument("--ours-only", action="store_true", help=argparse.SUPPRESS)  # the THP child: JSON of ours
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    from PIL import Image

    cases = []  # (name, size, family, ours_fn, ref_fn, reference images)
    for size in args.sizes:
        families = [family_make(n, table=TABLES[size]) for n in table_nodes(TABLES[size])]
        x = images(args.batch, size)
        u8 = (x[: args.ref_images] * 255).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()
        pil = [Image.fromarray(img) for img in u8]
        for family in families:
            name = type(family).reference
            if args.families and name not in args.families:
                continue
            family(x[:8], args.level, torch.Generator().manual_seed(0))  # warm caches
            ours_fn = lambda f=family, x=x: f(x, args.level, torch.Generator().manual_seed(0))  # noqa: E731
            ref_fn = None
            if not args.ours_only:
                ref = reference_function(name, family.params)
                kwargs = {"seed": 0} if name == "glass_blur" else {}
                np.uint8(ref(pil[0], args.level, **kwargs))  # warm (numba compiles glass_blur once)
                ref_fn = lambda ref=ref, kw=kwargs, pil=pil: [np.uint8(ref(p, args.level, **kw)) for p in pil]  # noqa: E731
            cases.append((name, size, family, ours_fn, ref_fn, len(pil)))

    # every round times every case once, so the rounds sample the host's slow and fast spells
    runs = {(name, size): [] for name, size, *_ in cases}
    for r in range(args.rounds):
        for name, size, _family, ours_fn, ref_fn, n_ref in cases:
            if args.ours_only:
                runs[name, size].append((args.batch / best_time(ours_fn, args.repeat), None))
                continue
            t_ours, t_ref = interleaved_best(ours_fn, ref_fn, args.repeat)
            runs[name, size].append((args.batch / t_ours, n_ref / t_ref))
            print(
                f"  round {r + 1}: {name} {size}px: ours {args.batch / t_ours:,.0f} img/s, "
                f"reference {n_ref / t_ref:,.0f} img/s",
                file=sys.stderr,
                flush=True,
            )
    ours_only = {f"{n} {sz}": statistics.median(o for o, _ in v) for (n, sz), v in runs.items()}
    rows, ratios, round_ratios = [], {}, {}
    for name, size, family, *_ in [] if args.ours_only else cases:
        v = runs[name, size]
        ratios[name, size] = statistics.median(o / t for o, t in v)
        round_ratios[name, size] = [o / t for o, t in v]
        rows.append(
            (
                name,
                size,
                family.params[args.level - 1],
                statistics.median(o for o, _ in v),
                statistics.median(t for _, t in v),
            )
        )
    if args.ours_only:
        print(json.dumps(ours_only))
        return

    thp = {}
    if not args.no_thp:
        child = [a for a in (argv if argv is not None else sys.argv[1:])] + ["--ours-only"]
        if "--json" in child:  # the child prints its JSON
            i = child.index("--json")
            del child[i : i + 2]
        r = subprocess.run(
            [sys.executable, __file__, *child],
            capture_output=True,
            text=True,
            env={**os.environ, "THP_MEM_ALLOC_ENABLE": "1"},
        )
        if r.returncode == 0:
            thp = json.loads(r.stdout.strip().splitlines()[-1])
        else:
            print(f"THP child failed:\n{r.stderr[-2000:]}", file=sys.stderr)

    print(
        f"Batch {args.batch} (reference: {args.ref_images} images, one at a time; best of {args.repeat}, "
        f"the two sides timed alternately; median of {args.rounds} round(s), each timing every row once), "
        f"level {args.level}, "
        f"torch {torch.__version__} CPU, {torch.get_num_threads()} thread(s); reference single-threaded. "
        "THP: our side again in a process with THP_MEM_ALLOC_ENABLE=1 (huge-page allocations, "
        "no per-call page faults on batch-sized outputs)."
    )
    print()
    print("| family | size | parameter | ours (img/s) | ours, THP (img/s) | reference (img/s) | ratio | ratio, THP |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    ratios_thp = {}
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "family": n,
                        "size": sz,
                        "param": str(pm),
                        "ours": o,
                        "reference": t,
                        "ours_thp": thp.get(f"{n} {sz}"),
                    }
                    for n, sz, pm, o, t in rows
                ]
            )
        )
    for name, size, param, ours, theirs in rows:
        o_thp = thp.get(f"{name} {size}")
        if o_thp:
            ratios_thp[name, size] = o_thp / theirs
        cells = (f"{o_thp:,.0f}", f"{o_thp / theirs:.2f}×") if o_thp else ("–", "–")
        print(
            f"| {name} | {size} | {param} | {ours:,.0f} | {cells[0]} | {theirs:,.0f} | {ratios[name, size]:.2f}× | {cells[1]} |"
        )
    print()
    if args.rounds > 1:  # the spread behind the medians
        for size in args.sizes:
            names = [n for n in GEOMEAN if (n, size) in round_ratios]
            if names:
                per_round = [geomean([round_ratios[n, size][r] for n in names]) for r in range(args.rounds)]
                print(
                    f"geometric mean ratio over {', '.join(GEOMEAN)} at {size} px, round by round: "
                    f"{', '.join(f'{g:.2f}×' for g in per_round)}  "
                )
    for label, rs in (("", ratios), (", THP", ratios_thp)):
        if not rs:
            continue
        for size in args.sizes:
            g = [rs[n, size] for n in GEOMEAN if (n, size) in rs]
            print(f"geometric mean ratio{label} over {', '.join(GEOMEAN)} at {size} px: {geomean(g):.2f}×  ")
        g = [rs[n, s] for n in GEOMEAN for s in args.sizes if (n, s) in rs]
        print(f"geometric mean ratio{label} over {', '.join(GEOMEAN)}, all sizes: {geomean(g):.2f}×  ")


if __name__ == "__main__":
    main()
