"""`make gpu-check`: every CUDA path of the harness, measured in one command.

Written for the short loan of a GPU machine (≤ 8 minutes on one recent NVIDIA GPU, nothing
downloaded: every model is built with random weights from its timm / transformers config).
Writes results/gpu.md and results/gpu.json; prints one line per row as it goes; exits 1 if any
section fails (the others still run and are written), 0 otherwise. Sections:

  cait       CaiT-S36 at 384 px, images/s in fp32, bf16 autocast, bf16 + channels-last and
             bf16 + channels-last + torch.compile (compile time apart), each at the benchmark's
             default batch (256) and at the largest batch that fits (doubling until out of
             memory, capped); peak GPU memory per row; the Tiny-ImageNet ground truth
             (1,296 configurations × 10,000 images) projected in hours for the best row
  text       RoBERTa-base sequence pairs (QQP-like, 128 tokens) sequences/s and a CodeGen-2B-sized
             decoder (CodeGen-2B's config; halved in depth until it fits, the size is stated)
             forward tokens/s, both bf16 autocast
  families   every image family at 32 and 64 px: images/s on the device, on the CPU (one torch
             thread, as `scripts/bench_families.py`) and imagecorruptions-imaug per image; the
             device output must equal the CPU output within 2/255 (same generator draws)
  groundtruth  mnist5k ground truth on the CPU and on the device (the pinned LeNet-5):
             wall times; δ must be equal, ρ (SSIM) within 1e-4, P* identical. The metrics are
             the same code on both: DSA's nearest neighbours class by class (one distance block
             per predicted class), KID's clean-vs-clean kernel sum and SSIM's clean local mean
             and variance computed once, so the comparison covers them on the device too (on a
             GPU the cached SSIM statistics also save two of five filtered maps, and the second
             axis is one flat matrix product). The ℓ siblings of a prefix (configurations that
             differ in the last family) are scored as one stack (testnav/core/sets.py): on a device
             up to 1 GiB of images per stack (`groundtruth.STACK_BYTES`; all 6 siblings of
             mnist5k, 6,000 images, against 64 MiB on the CPU), so the inference runs in full
             batches of `batch_size` instead of one partial batch of |D| per configuration, and
             every metric and signal launches its kernels once per stack instead of once per
             configuration; the row reports the stack in effect

Without a CUDA device it prints one skip line and exits 0. `--device cpu --tiny` runs every
section on tiny models, batches and lattices on the CPU in seconds (tests/e2e/test_gpu_check.py).

    python scripts/gpu_check.py                   # the real check (needs CUDA)
    python scripts/gpu_check.py --device cpu --tiny --out /tmp/gpu-check
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]

from testnav.core import timing  # noqa: E402
from testnav.families import make as family_make  # noqa: E402
from testnav.families import table_nodes

FULL = {
    "cait": {"arch": "cait_s36_384", "input": 384, "kwargs": {}, "default_batch": 256, "max_batch": 4096, "repeat": 5},
    "roberta": {
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "batch": 256,
        "tokens": 128,
        "repeat": 5,
    },
    "codegen": {
        "n_embd": 2560,
        "n_layer": 32,
        "n_head": 32,
        "rotary_dim": 64,
        "vocab_size": 51200,
        "batch": 8,
        "tokens": 1024,
        "repeat": 3,
    },
    "families": {"batch": 10_000, "cpu_batch": 1000, "ref_images": 100, "repeat": 2},
    "groundtruth": {"overrides": []},
}
TINY = {
    "cait": {
        "arch": "cait_s36_384",
        "input": 32,
        "kwargs": {"img_size": 32, "embed_dim": 32, "depth": 1, "num_heads": 2, "depth_token_only": 1},
        "default_batch": 2,
        "max_batch": 8,
        "repeat": 1,
    },
    "roberta": {
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "vocab_size": 1000,
        "batch": 2,
        "tokens": 16,
        "repeat": 1,
    },
    "codegen": {
        "n_embd": 32,
        "n_layer": 2,
        "n_head": 2,
        "rotary_dim": 8,
        "vocab_size": 1000,
        "batch": 2,
        "tokens": 16,
        "repeat": 1,
    },
    "families": {"batch": 8, "cpu_batch": 8, "ref_images": 2, "repeat": 1},
    "groundtruth": {"overrides": ["benchmark.levels=2", "benchmark.test_per_class=2"]},
}
RHO_TOL = 1e-4
FAMILY_TOL = 2 / 255


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_script", ROOT / "scripts" / "bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Check:
    """Device, sizes, the printed rows and the failures of one run."""

    def __init__(self, device: str, tiny: bool, time_compile: bool = True):
        self.device, self.tiny, self.sizes = device, tiny, TINY if tiny else FULL
        self.cuda = torch.device(device).type == "cuda"
        self.time_compile = time_compile
        self.failures: list[str] = []

    def row(self, section: str, text: str) -> None:
        print(f"gpu-check | {section} | {text}", flush=True)

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def reset_peak(self) -> None:
        if self.cuda:
            torch.cuda.reset_peak_memory_stats()

    def peak_gib(self) -> float | None:
        return torch.cuda.max_memory_allocated() / 2**30 if self.cuda else None

    def timed(self, fn, repeat: int) -> float:
        """Median seconds of fn() over `repeat` runs after one warm-up, synchronised."""
        return statistics.median(timing.interleaved({"fn": fn}, repeat, warmup=1, sync=self.sync)["fn"])


def is_oom(e: BaseException) -> bool:
    return isinstance(e, torch.OutOfMemoryError) or "out of memory" in str(e).lower()


def largest_batch(run, start: int, cap: int) -> int:
    """The largest of start, 2·start, … ≤ cap for which run(batch) does not run out of memory."""
    best, b = None, start
    while b <= cap:
        try:
            run(b)
        except Exception as e:  # noqa: BLE001 - only out-of-memory ends the search
            if not is_oom(e):
                raise
            break
        finally:
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        best, b = b, b * 2
    if best is None:
        raise RuntimeError(f"batch {start} does not fit")
    return best


def section_cait(c: Check) -> dict:
    from testnav.models.classifier import ModelSpec

    s = c.sizes["cait"]
    model = ModelSpec(s["arch"], 200, input_size=s["input"], kwargs=s["kwargs"], random_weights=True).build()
    model = model.to(c.device)
    settings = {
        "fp32": (False, False, False),
        "bf16 autocast": (True, False, False),
        "bf16 + channels-last": (True, True, False),
        "bf16 + channels-last + compile": (True, True, True),
    }
    rows = []
    for name, (bf16, cl, compiled) in settings.items():
        if compiled and not c.time_compile:
            continue
        net = model.to(memory_format=torch.channels_last if cl else torch.contiguous_format)
        net = torch.compile(net, dynamic=False) if compiled else net

        def forward(batch, net=net, bf16=bf16, cl=cl):
            x = torch.rand(batch, 3, s["input"], s["input"], device=c.device)
            if cl:
                x = x.contiguous(memory_format=torch.channels_last)
            with (
                torch.inference_mode(),
                torch.autocast(torch.device(c.device).type, dtype=torch.bfloat16, enabled=bf16),
            ):
                return net(x)

        largest = (
            largest_batch(forward, s["default_batch"], s["max_batch"])
            if not compiled
            else max((r["batch"] for r in rows if r["setting"] == "bf16 + channels-last"), default=s["default_batch"])
        )
        for batch in sorted({s["default_batch"], largest}):
            compile_s = None
            if compiled:  # the first call compiles for this batch size; timed apart
                c.sync()
                t0 = time.perf_counter()
                forward(batch)
                c.sync()
                compile_s = time.perf_counter() - t0
            c.reset_peak()
            sec = c.timed(lambda b=batch: forward(b), s["repeat"])
            row = {
                "setting": name,
                "batch": batch,
                "largest": batch == largest,
                "images_per_s": batch / sec,
                "peak_gib": c.peak_gib(),
                "compile_s": compile_s,
            }
            rows.append(row)
            c.row(
                "cait",
                f"{name}, batch {batch}{' (largest that fits)' if batch == largest else ''}: "
                f"{row['images_per_s']:,.1f} images/s"
                + (f", peak {row['peak_gib']:.1f} GiB" if row["peak_gib"] is not None else "")
                + (f", compile {compile_s:.1f} s" if compile_s is not None else ""),
            )
    best = max(rows, key=lambda r: r["images_per_s"])
    c.row("cait", f"best: {best['setting']} at batch {best['batch']}: {best['images_per_s']:,.1f} images/s")
    return {"arch": s["arch"], "input": s["input"], "rows": rows, "best": best}


def section_text(c: Check) -> dict:
    import transformers

    out = {}
    s = c.sizes["roberta"]
    cfg = transformers.RobertaConfig(
        **{k: v for k, v in s.items() if k not in ("batch", "tokens", "repeat")}, num_labels=2
    )
    with torch.device(c.device):
        model = transformers.RobertaForSequenceClassification(cfg).eval()
    ids = torch.randint(3, cfg.vocab_size, (s["batch"], s["tokens"]), device=c.device)
    ids[:, 0], ids[:, s["tokens"] // 2], ids[:, -1] = 0, 2, 2  # <s> question1 </s> question2 </s>

    def roberta():
        with torch.inference_mode(), torch.autocast(torch.device(c.device).type, dtype=torch.bfloat16):
            return model(input_ids=ids).logits

    c.reset_peak()
    rate = s["batch"] / c.timed(roberta, s["repeat"])
    out["roberta"] = {
        "layers": cfg.num_hidden_layers,
        "hidden": cfg.hidden_size,
        "batch": s["batch"],
        "tokens": s["tokens"],
        "sequences_per_s": rate,
        "peak_gib": c.peak_gib(),
    }
    c.row(
        "text",
        f"RoBERTa ({cfg.num_hidden_layers} layers, {cfg.hidden_size} wide), pairs of {s['tokens']} tokens, "
        f"batch {s['batch']}: {rate:,.1f} sequences/s",
    )
    del model
    s = c.sizes["codegen"]
    layers = s["n_layer"]
    while True:
        try:
            cfg = transformers.CodeGenConfig(
                n_embd=s["n_embd"],
                n_layer=layers,
                n_head=s["n_head"],
                rotary_dim=s["rotary_dim"],
                vocab_size=s["vocab_size"],
                n_positions=max(2048, s["tokens"]),
                n_ctx=max(2048, s["tokens"]),
            )
            with torch.device(c.device):
                model = transformers.CodeGenForCausalLM(cfg).to(torch.bfloat16 if c.cuda else torch.float32).eval()
            ids = torch.randint(0, cfg.vocab_size, (s["batch"], s["tokens"]), device=c.device)

            def codegen(model=model, ids=ids):
                with torch.inference_mode(), torch.autocast(torch.device(c.device).type, dtype=torch.bfloat16):
                    return model(input_ids=ids).logits

            c.reset_peak()
            rate = s["batch"] * s["tokens"] / c.timed(codegen, s["repeat"])
            break
        except Exception as e:  # noqa: BLE001
            if not is_oom(e) or layers <= 1:
                raise
            model = None
            torch.cuda.empty_cache()
            layers //= 2
    params = sum(p.numel() for p in model.parameters())
    out["codegen"] = {
        "layers": layers,
        "layers_of_2b": s["n_layer"],
        "params": params,
        "batch": s["batch"],
        "tokens": s["tokens"],
        "tokens_per_s": rate,
        "peak_gib": c.peak_gib(),
    }
    c.row(
        "text",
        f"CodeGen decoder, {params / 1e9:.2f} B parameters ({layers} of {s['n_layer']} layers), "
        f"forward on {s['batch']} × {s['tokens']} tokens: {rate:,.0f} tokens/s",
    )
    return out


def reference_rate(name: str, family, x: torch.Tensor, level: int, repeat: int) -> float:
    """imagecorruptions-imaug per image, as scripts/bench_families.py times it (images/s)."""
    from PIL import Image

    sys.path.insert(0, str(ROOT))  # the repository's tests package (the reference families), not testnav
    from tests.helpers.family_reference import reference_function

    pil = [Image.fromarray(img) for img in (x * 255).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()]
    ref = reference_function(name, family.params)
    kwargs = {"seed": 0} if name == "glass_blur" else {}
    np.uint8(ref(pil[0], level, **kwargs))
    times = timing.interleaved({"ref": lambda: [np.uint8(ref(p, level, **kwargs)) for p in pil]}, repeat)["ref"]
    return len(pil) / min(times)


def section_families(c: Check, bench, only=None) -> dict:

    from bench_families import TABLES, images

    s, level, rows = c.sizes["families"], 3, []
    threads = torch.get_num_threads()
    for size in (32, 64):
        dev = bench._family_throughput(c.device, size, s["batch"], s["repeat"], only)
        torch.set_num_threads(1)
        try:
            cpu = bench._family_throughput("cpu", size, s["cpu_batch"], s["repeat"], only)
        finally:
            torch.set_num_threads(threads)
        fams = [family_make(n, table=TABLES[size]) for n in table_nodes(TABLES[size])]
        x = images(max(s["ref_images"], 8), size)
        for f in fams:
            name = type(f).reference
            if only and name not in only:
                continue
            here = f(x, level, torch.Generator().manual_seed(0))
            there = f(x.to(c.device), level, torch.Generator().manual_seed(0)).cpu()
            diff = float((here - there).abs().max())
            ref = reference_rate(name, f, x[: s["ref_images"]], level, s["repeat"])
            row = {
                "family": name,
                "size": size,
                "device": dev[name],
                "cpu_one_thread": cpu[name],
                "reference": ref,
                "device_vs_cpu": dev[name] / cpu[name],
                "device_vs_reference": dev[name] / ref,
                "max_abs_diff_device_cpu": diff,
            }
            rows.append(row)
            c.row(
                "families",
                f"{name} {size} px: device {dev[name]:,.0f}, CPU {cpu[name]:,.0f}, reference "
                f"{ref:,.0f} images/s ({row['device_vs_cpu']:.1f}× CPU, "
                f"{row['device_vs_reference']:.1f}× reference); |device − CPU| ≤ {diff:.2g}",
            )
            if diff > FAMILY_TOL:
                raise AssertionError(
                    f"{name} {size} px: device output differs from the CPU's by {diff:.3g} (> {FAMILY_TOL:.3g})"
                )
    return {"level": level, "rows": rows}


def mnist5k(overrides):
    from testnav.pipeline import compose_benchmark

    return compose_benchmark(list(overrides))


def compare_tables(cpu, dev) -> dict:
    """δ equal, ρ (SSIM) within RHO_TOL, the same P*: the device's table against the CPU's."""
    import pandas as pd

    from testnav.core.table import Objectives, level_columns

    cpu, dev = (t if isinstance(t, pd.DataFrame) else pd.read_parquet(t) for t in (cpu, dev))
    keys = level_columns(cpu)
    cpu, dev = cpu.sort_values(keys).reset_index(drop=True), dev.sort_values(keys).reset_index(drop=True)
    same_rows = cpu[keys].equals(dev[keys])
    delta_equal = same_rows and np.array_equal(cpu["delta"].to_numpy(), dev["delta"].to_numpy())
    rho_diff = float(np.abs(cpu["ssim"].to_numpy() - dev["ssim"].to_numpy()).max()) if same_rows else math.inf
    p_cpu, p_dev = (Objectives.from_table(t, "ssim", 1.0).pstar for t in (cpu, dev))
    return {
        "configurations": len(cpu),
        "delta_equal": bool(delta_equal),
        "rho_max_abs_diff": rho_diff,
        "rho_tolerance": RHO_TOL,
        "pstar_size": len(p_cpu),
        "pstar_identical": bool(np.array_equal(p_cpu, p_dev)),
        "ok": bool(delta_equal and rho_diff <= RHO_TOL and np.array_equal(p_cpu, p_dev)),
    }


def section_groundtruth(c: Check, work: Path) -> dict:
    from testnav.groundtruth.compute import compute_groundtruth, read_meta

    overrides = c.sizes["groundtruth"]["overrides"]
    walls = {}
    tables = {}
    for side, device in (("cpu", "cpu"), ("device", c.device)):
        cache = work / f"cache-{side}"  # both sides load the pinned LeNet-5 (no training)
        bench = mnist5k(overrides)
        t0 = time.perf_counter()
        tables[side] = compute_groundtruth(bench, cache, device, progress=False)
        c.sync()
        walls[side] = time.perf_counter() - t0
        stack = read_meta(tables[side])["runs"][-1].get("stacked", 1)
        c.row("groundtruth", f"mnist5k on {device}: {walls[side]:.1f} s ({stack} sibling sets stacked per call)")
    cmp = compare_tables(tables["cpu"], tables["device"])
    c.row(
        "groundtruth",
        f"{cmp['configurations']} configurations: δ equal {cmp['delta_equal']}, "
        f"max |ρ_device − ρ_cpu| = {cmp['rho_max_abs_diff']:.2g} (tolerance {RHO_TOL:g}), "
        f"P* ({cmp['pstar_size']}) identical {cmp['pstar_identical']}",
    )
    if not cmp["ok"]:
        raise AssertionError(f"mnist5k ground truth on {c.device} differs from the CPU's: {cmp}")
    return {"wall_s": walls, **cmp}


def render(r: dict) -> str:
    lines = [
        "# make gpu-check",
        "",
        f"Device: {r['device_name']}; torch {r['torch']}; {r['date']}; "
        f"total {r['seconds']:.0f} s. Random-weight models (nothing downloaded).",
        "",
    ]
    if "cait" in r:
        cait = r["cait"]
        lines += [
            "## CaiT-S36 at 384 px",
            "",
            "| setting | batch | images/s | peak GPU memory (GiB) | compile (s) |",
            "|---|---:|---:|---:|---:|",
        ]
        for row in cait["rows"]:
            peak = f"{row['peak_gib']:.1f}" if row["peak_gib"] is not None else "–"
            comp = f"{row['compile_s']:.1f}" if row["compile_s"] is not None else "–"
            lines.append(
                f"| {row['setting']} | {row['batch']}{' (largest)' if row['largest'] else ''} | "
                f"{row['images_per_s']:,.1f} | {peak} | {comp} |"
            )
        p = r.get("projection")
        if p:
            lines += [
                "",
                f"Tiny-ImageNet ground truth, best setting ({cait['best']['setting']}, batch "
                f"{cait['best']['batch']}): {p['configurations']:,} configurations × "
                f"{p['inferences'] // p['configurations']:,} images = {p['inferences']:,} inferences: "
                f"**{p['total_seconds'] / 3600:.2f} h** (inference {p['inference_seconds'] / 3600:.2f} h, "
                f"perturbation on the device {p['perturbation_seconds'] / 3600:.2f} h).",
            ]
        lines.append("")
    if "text" in r:
        t = r["text"]
        lines += [
            "## Text models (bf16 autocast)",
            "",
            f"- RoBERTa ({t['roberta']['layers']} layers, hidden {t['roberta']['hidden']}), QQP-like pairs of "
            f"{t['roberta']['tokens']} tokens, batch {t['roberta']['batch']}: "
            f"{t['roberta']['sequences_per_s']:,.1f} sequences/s",
            f"- CodeGen decoder, {t['codegen']['params'] / 1e9:.2f} B parameters ({t['codegen']['layers']} of "
            f"CodeGen-2B's {t['codegen']['layers_of_2b']} layers), forward on {t['codegen']['batch']} × "
            f"{t['codegen']['tokens']} tokens: {t['codegen']['tokens_per_s']:,.0f} tokens/s",
            "",
        ]
    if "families" in r:
        lines += [
            "## Image families, level 3 (images/s)",
            "",
            "| family | size | device | CPU, 1 thread | imagecorruptions-imaug | device ÷ CPU | device ÷ reference "
            "| max \\|device − CPU\\| |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for row in r["families"]["rows"]:
            lines.append(
                f"| {row['family']} | {row['size']} | {row['device']:,.0f} | {row['cpu_one_thread']:,.0f} | "
                f"{row['reference']:,.0f} | {row['device_vs_cpu']:.1f}× | {row['device_vs_reference']:.1f}× | "
                f"{row['max_abs_diff_device_cpu']:.2g} |"
            )
        lines.append("")
    if "groundtruth" in r:
        g = r["groundtruth"]
        lines += [
            "## mnist5k ground truth, device against CPU",
            "",
            f"- wall time: CPU {g['wall_s']['cpu']:.1f} s, device {g['wall_s']['device']:.1f} s",
            f"- {g['configurations']} configurations: δ equal: {g['delta_equal']}; max |Δρ| (SSIM) = "
            f"{g['rho_max_abs_diff']:.2g} (tolerance {g['rho_tolerance']:g}); P* ({g['pstar_size']} "
            f"configurations) identical: {g['pstar_identical']}",
            "",
        ]
    if r["failures"]:
        lines += ["## Failures", ""] + [f"- {f}" for f in r["failures"]] + [""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu (with --tiny: tests)")
    ap.add_argument("--tiny", action="store_true", help="tiny models, batches and lattice (seconds, for tests)")
    ap.add_argument(
        "--sections",
        nargs="+",
        default=["cait", "text", "families", "groundtruth"],
        choices=["cait", "text", "families", "groundtruth"],
    )
    ap.add_argument("--families", nargs="+", help="only these image families (default: all ten)")
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile rows")
    ap.add_argument("--out", type=Path, default=ROOT / "results", help="folder for gpu.md and gpu.json")
    args = ap.parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"gpu-check: SKIPPED: no CUDA device (torch {torch.__version__}); nothing measured or written")
        return 0
    c = Check(args.device, args.tiny, time_compile=not args.no_compile)
    bench = load_bench()
    t_start = time.perf_counter()
    report = {
        "device": args.device,
        "tiny": args.tiny,
        "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "device_name": torch.cuda.get_device_name(torch.device(args.device)) if c.cuda else "CPU",
    }
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        for name in args.sections:
            try:
                if name == "cait":
                    report["cait"] = section_cait(c)
                elif name == "text":
                    report["text"] = section_text(c)
                elif name == "families":
                    report["families"] = section_families(c, bench, args.families)
                else:
                    report["groundtruth"] = section_groundtruth(c, Path(tmp))
            except Exception as e:  # noqa: BLE001 - every section runs; the exit status says a section failed
                c.failures.append(f"{name}: {type(e).__name__}: {e}")
                c.row(name, f"FAILED: {type(e).__name__}: {e}")
                traceback.print_exc()
            finally:
                if c.cuda:
                    torch.cuda.empty_cache()
    if "cait" in report and "families" in report and not args.families:
        fam64 = {r["family"]: r["device"] for r in report["families"]["rows"] if r["size"] == 64}
        report["projection"] = bench.project_groundtruth(
            bench.TINY["images"],
            report["cait"]["best"]["images_per_s"],
            [fam64[n] for n in bench.TINY["families"]],
            bench.TINY["levels"],
        )
        p = report["projection"]
        c.row(
            "projection",
            f"Tiny-ImageNet ground truth ({p['inferences']:,} inferences): "
            f"{p['total_seconds'] / 3600:.2f} h at the best CaiT setting",
        )
    report["failures"] = c.failures
    report["seconds"] = time.perf_counter() - t_start
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu.json").write_text(json.dumps(report, indent=1, default=str))
    (args.out / "gpu.md").write_text(render(report))
    print(
        f"gpu-check: {'FAILED (' + '; '.join(c.failures) + ')' if c.failures else 'ok'} in "
        f"{report['seconds']:.0f} s → {args.out / 'gpu.md'}"
    )
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
