"""scripts/bench.py's section 8 without a GPU: the projection arithmetic and the clean skip.
No timing assertions (the bench reports ratios; nothing here is timed)."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.cli_helpers import load_script


@pytest.fixture(scope="module")
def bench():
    return load_script("bench")


def test_projection_of_the_tiny_imagenet_ground_truth(bench):
    """1,296 configurations × 10,000 images at 1,000 images/s is 12,960 s of inference; the four
    families are applied 5, 30, 180 and 1,080 times (1,295, prefix sharing) to the data set."""
    p = bench.project_groundtruth(10_000, 1000.0, [1e4, 2e4, 4e4, 5e4], levels=6)
    assert p["configurations"] == 1296 and p["inferences"] == 12_960_000
    assert p["family_applications"] == [5, 30, 180, 1080] and sum(p["family_applications"]) == 1295
    assert math.isclose(p["inference_seconds"], 12_960.0)
    expected = 10_000 * (5 / 1e4 + 30 / 2e4 + 180 / 4e4 + 1080 / 5e4)
    assert math.isclose(p["perturbation_seconds"], expected)
    assert math.isclose(p["total_seconds"], 12_960.0 + expected)


def test_projection_scales_with_levels_and_families(bench):
    p = bench.project_groundtruth(7, 7.0, [1.0, 1.0], levels=3)  # 9 configurations, 2 + 6 applications
    assert p["configurations"] == 9 and p["family_applications"] == [2, 6]
    assert math.isclose(p["inference_seconds"], 9.0) and math.isclose(p["perturbation_seconds"], 56.0)


def test_gpu_section_is_skipped_without_a_device(bench, capsys):
    out = bench.section_gpu(quick=True, family_rows=[], cuda_available=False)
    assert out == {"skipped": "no CUDA device: GPU rows skipped"}
    assert "no CUDA device: GPU rows skipped" in capsys.readouterr().err


def test_report_renders_the_skip_and_the_cpu_projection(bench):
    proj = bench.project_groundtruth(10_000, 0.2, [1e4] * 4)
    r = {
        "gpu": {"skipped": "no CUDA device: GPU rows skipped"},
        "cpu_model": {
            "cait_s36": {
                "dtype": "float32",
                "batch": 2,
                "threads": 2,
                "repeat": 2,
                "images_per_s": 0.2,
                "seconds_per_batch": {"median": 10.0, "min": 9.0, "max": 11.0},
            },
            "families_64px_one_thread": {n: 1e4 for n in bench.TINY["families"]},
            "projection": proj,
        },
    }
    md = "\n".join(bench.render_model(r))
    assert "no CUDA device: GPU rows skipped." in md
    assert "on the **CPU**" in md and "projected ground truth on CPU" in md and "1,296 configurations" in md
    assert "days" in md  # 12,960,000 inferences at 0.2 images/s


def test_report_renders_gpu_rows(bench):
    proj = bench.project_groundtruth(10_000, 2000.0, [1e5] * 4)
    r = {
        "gpu": {
            "device": "H200",
            "families": [{"family": "pixelate", "size": 64, "ours_gpu": 1e6, "reference_cpu": 2.5e4, "ratio": 40.0}],
            "cait_s36": {"dtype": "bf16 autocast", "batch": 256, "repeat": 20, "images_per_s": 2000.0},
            "projection": proj,
        }
    }
    md = "\n".join(bench.render_model(r))
    assert "| pixelate | 64 | 1,000,000 | 25,000 | 40.0× |" in md
    assert "batch 256" in md and "projected ground truth on one GPU" in md and "1.8 h" in md


def test_report_renders_the_sandbox_row(bench):
    t = {k: {"median": v, "min": v, "max": v} for k, v in (("bare", 0.1), ("before", 0.2), ("after", 0.25))}
    md = "\n".join(bench.render_sandbox({"sandbox": {"program": "HumanEval/0", "seconds": t, "repeat": 30}}))
    assert "before 200 ms → after 250 ms (1.25×); bare `python -I -B -c` 100 ms" in md and "30 interleaved" in md
    del t["before"]  # no git history: the row says so instead of inventing a figure
    assert "before: no git history" in "\n".join(
        bench.render_sandbox({"sandbox": {"program": "p", "seconds": t, "repeat": 5}})
    )
    assert bench.render_sandbox({}) == []


def test_report_renders_the_bound_and_search_scaling_rows(bench):
    t = {"median": 1.0, "min": 1.0, "max": 1.0}
    r = {
        "groundtruth_bound": {
            "6^4": {
                "configurations": 1296,
                "sampled": 108,
                "seconds": {"groundtruth": t, "bound": t},
                "configurations_per_second": 10.8,
                "tables_per_second": 10.8 / 1296,
                "projected_table_seconds": 120.0,
                "ratio_to_bound": 1.25,
            }
        },
        "search_scaling": {
            "6^4": {"configurations": 1296, "budget": 1296, "ms_per_proposal": {"random": 0.01, "tomonav": 12.5}},
            "6^6": {"configurations": 46656, "budget": 1296, "ms_per_proposal": {"random": 0.02}},
        },
    }
    md = "\n".join(bench.render_scaling(r))
    assert "| 6^4 = 1,296 | 108 | 10.8 | 0.0083 (120 s) | 1.25× |" in md
    assert "| lattice | random | tomonav |" in md and "| 6^6 = 46,656 | 0.020 ms | not run |" in md
    assert bench.render_scaling({}) == []
    # and into results/bench.md as a whole: the committed report's other sections plus these two
    full = {**json.loads((bench.ROOT / "results" / "bench.json").read_text()), **r}
    md = bench.render(full)
    assert "| ground truth ÷ its inference bound (6⁴) | 1.25× (target ≤ 1.3×; bound: walk + bare forward) |" in md
    # where the coverage signals bin a float64 pass, the bound includes it, the bare ratio beside it
    coverage = {**r["groundtruth_bound"]["6^4"], "float64_pass": True, "ratio_to_bound_with_float64": 1.2}
    md = bench.render({**full, "groundtruth_bound": {"6^4": {**coverage, "ratio_to_bound": 2.1}}})
    assert (
        "| ground truth ÷ its inference bound (6⁴) | 1.20× (target ≤ 1.3×; bound: walk + forward + the coverage "
        "signals' float64 pass); 2.10× against the walk and the bare forward alone |" in md
    )
    assert "## Ground truth against its inference bound" in md and "## Search time per proposal" in md


def test_search_scaling_section_times_every_search_on_a_generated_table(bench, monkeypatch):
    """The smallest lattice only, budget cut so the test is quick; every search reports a time."""
    monkeypatch.setattr(bench, "SCALE_SIZES", ((4, 4),))
    monkeypatch.setattr(bench, "SCALE_BUDGET", 150)
    out = bench.section_search_scaling(quick=True)
    assert list(out) == ["4^4"] and out["4^4"]["configurations"] == 256
    assert set(out["4^4"]["ms_per_proposal"]) == {"nsga2/pymoo", "nsga2/fast", "ga/fast", "greedy", "random", "tomonav"}
    assert all(v > 0 for v in out["4^4"]["ms_per_proposal"].values())


def test_the_host_heads_the_report_and_the_new_rows_render(bench):
    """bench.md names its host (and an instruction-set cap, labelled an emulation), the first run's
    compile costs and the live path's ratio."""
    host = bench.section_host()
    assert host["cores"] >= 1 and host["torch"] and host["numba"] and host["numba_cpu"]
    capped = {**host, "instruction_set_capped": {"ATEN_CPU_CAPABILITY": "avx2"}, "torch_cpu_capability": "AVX2"}
    assert "capped to AVX2 by ATEN_CPU_CAPABILITY (an emulation" in bench.host_label(capped)
    full = {
        **json.loads((bench.ROOT / "results" / "bench.json").read_text()),
        "host": capped,
        "first_run": {"fresh": 30.0, "warm": 20.0, "bytecode_seconds": 4.0, "numba_seconds": 6.0},
        "live": {
            "mnist5k": {
                "evaluated": 250,
                "lattice": 1296,
                "live_seconds": 40.0,
                "bound_seconds": 25.0,
                "ratio_to_bound": 1.6,
                "ratio_per_round": [1.7, 1.6, 1.5],
                "budget": 300,
                "search_seconds": 38.0,
            }
        },
    }
    md = bench.render(full)
    assert md.splitlines()[2].startswith("Host: ") and "capped to AVX2" in md.splitlines()[2]
    assert (
        "| first run (`benchmark.levels=2`): fresh clone / warm | 30.0 s / 20.0 s: 4.0 s compiling bytecode, "
        "6.0 s compiling numba's kernels |" in md
    )
    assert "| live NSGA-II, mnist5k: time ÷ its bound | 1.60× (250 of 1,296 configurations" in md
    assert "bare forward 25.0 s; medians of 3 paired rounds: 1.70×, 1.60×, 1.50×; target ≤ 1.5×) |" in md


def test_the_stage_breakdown_renders_shares(bench):
    st = {"configurations": 72, "ms_per_configuration": {"walk": 20.0, "forward": 20.0, "float64 pass": 60.0}}
    md = "\n".join(bench.render_stages({"stages": st}))
    assert "| float64 pass | 60.0 | 60% |" in md and "| all | 100.0 | |" in md
    assert bench.render_stages({}) == []


def test_the_avx2_emulation_caps_numba_too():
    """`make bench-avx2`'s environment keeps numba's kernels off AVX-512 registers: NUMBA_CPU_NAME
    alone would keep the host's features (on an AVX-512 host its loops then use zmm registers)."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    makefile = Path(__file__).resolve().parents[2] / "Makefile"
    line = next(ln for ln in makefile.read_text().splitlines() if "NUMBA_CPU_NAME=" in ln)
    env = dict(re.findall(r"(\w+)=(\S*)", line.split("$(PY)")[0]))
    assert env.get("NUMBA_CPU_NAME") == "haswell" and env.get("NUMBA_CPU_FEATURES") == ""
    probe = (
        "import numpy as np\nfrom numba import njit\n"
        "@njit(cache=False)\ndef f(a, b):\n    for i in range(len(a)):\n        a[i] = a[i] * 2.0 + b[i]\n"
        "f(np.ones(64), np.ones(64))\nprint(list(f.inspect_asm().values())[0])"
    )

    def asm(extra):
        base = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")}
        r = subprocess.run([sys.executable, "-c", probe], env={**base, **extra}, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-1000:]
        return r.stdout

    assert "zmm" not in asm(env)
    cpuinfo = Path("/proc/cpuinfo")
    if "avx512f" in (cpuinfo.read_text() if cpuinfo.exists() else ""):
        assert "zmm" in asm({"NUMBA_CPU_NAME": "haswell"})  # why the features must be named as well


def test_the_objectives_part_and_the_practitioner_rows_render(bench):
    """Issue 67's rows: the objectives-only table against its bound, `python run.py` with the parts its
    ground truth computed, and a practitioner's time to an answer with its stage table."""
    full = json.loads((bench.ROOT / "results" / "bench.json").read_text())
    row = {
        **full["groundtruth_bound"]["6^4"],
        "objectives_ratio_to_bound": 1.18,
        "objectives_ratio_per_round": [1.2, 1.18, 1.17],
        "objectives_configurations_per_second": 30.0,
    }
    stages = {"walk": 1.0, "forward": 6.0, "scoring beyond the bound (ψ, SSIM, outcomes)": 1.0}
    practitioner = {
        "ResNet-18": {
            "budget": 40,
            "evaluated": 38,
            "lattice": 625,
            "search_seconds": 9.0,
            "bound_seconds": 7.0,
            "configurations_per_second": 4.2,
            "ratio_to_bound": 1.29,
            "answer_ratio_to_bound": 1.5,
            "stages": {**stages, "search and bookkeeping": 1.0},
        }
    }
    end = {**full["end_to_end"], "targets": bench.RUN_TARGETS, "groundtruth_seconds": 40.0}
    end["groundtruth_parts"] = ["objectives"]
    report = {**full, "groundtruth_bound": {"6^4": row}, "practitioner": practitioner, "end_to_end": end}
    md = bench.render({**report, "notes": ["these rows come from another run."]})
    assert md.splitlines()[4] == "Note: these rows come from another run."
    assert "| objectives-only table ÷ its bound (6⁴) | 1.18× (target ≤ 1.3×; bound: walk + bare forward" in md
    assert "(targets ≤ 120 s / ≤ 20 s); the cold run's ground truth 40.0 s, parts computed: objectives |" in md
    assert "`Tester` on ResNet-18, CPU: live NSGA-II ÷ its bound | 1.29× (38 configurations evaluated" in md
    assert "| ResNet-18 | 1.0 (11%) | 6.0 (67%) | 1.0 (11%) | 1.0 (11%) | 9.0 |" in md
