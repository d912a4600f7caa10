"""`testnav report RUN_DIR`: the practitioner's report of a finished command-line run — the findings of
`Tester.scan()` (testnav/findings.py) from what the run measured, separate from the papers'
`testnav figures`.

    testnav report results/runs/2026-12-06/10-00-00_my5_ssim_nsga2_s0 [--failure-modes 5] [--fidelity-floor auto]

The benchmark is rebuilt as the run composed it (its .hydra/config.yaml, from the folder it started
in, so relative data paths hold). A run that replayed a ground truth (stage=search) has every
configuration measured: its table is read. A live run (stage=live) has the per-input outcomes of what
it ran (outcomes.parquet); the clean set and each family alone are measured now where it had not, as
are the sub-configurations the failure modes need. Writes RUN_DIR/findings.html and RUN_DIR/findings/
(Findings.save), and prints the findings. The settings are a `ScanSpec`'s (conf/settings/scan.yaml's
defaults, as `Tester.scan` reads them); the work is the pipeline's (testnav/pipeline/scan.py), on
a `Session` opened here.
"""

from __future__ import annotations

import argparse
import json
from contextlib import chdir
from pathlib import Path

import numpy as np
import pandas as pd

from .. import benchmarks
from ..errors import UserError


def parser(prog: str) -> argparse.ArgumentParser:
    from ..pipeline import ScanSpec  # its defaults: conf/settings/scan.yaml's

    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", help="a run directory of stage=search or stage=live (it holds summary.json)")
    p.add_argument(
        "--failure-modes", type=int, help=f"how many failure modes to list (default {ScanSpec.failure_modes})"
    )
    p.add_argument(
        "--fidelity-floor",
        help="the fidelity below which inputs count as destroyed, on the metric's scale (auto: SSIM 0.25, "
        f"chrF 40; none: no floor; default {ScanSpec.fidelity_floor})",
    )
    p.add_argument(
        "--min-loss",
        type=float,
        help="the loss (a share: 0.01 = one point) a family level or failure mode must be shown to cost "
        f"(default {ScanSpec.min_loss})",
    )
    p.add_argument("--out", default=None, help="the report's path (default RUN_DIR/findings.html)")
    return p


def floor_of(text: str):
    if text == "auto":
        return "auto"
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise UserError(f"--fidelity-floor={text}: a number on the metric's scale, auto or none") from None


def spec_of(args):
    """The scan's settings the command line gave, the rest conf/settings/scan.yaml's; checked."""
    from ..pipeline import ScanSpec

    given = {}
    if args.failure_modes is not None:
        if args.failure_modes < 1:
            raise UserError(f"--failure-modes={args.failure_modes}: a whole number ≥ 1")
        given["failure_modes"] = args.failure_modes
    if args.fidelity_floor is not None:  # "none" is a floor of None: no floor
        given["fidelity_floor"] = floor_of(str(args.fidelity_floor))
    if args.min_loss is not None:
        given["min_loss"] = args.min_loss
    return ScanSpec.from_node(given)


def composed(run_dir: Path):
    """The run's config and the folder it started in."""
    from omegaconf import OmegaConf

    cfg_path = run_dir / ".hydra" / "config.yaml"
    if not (run_dir / "summary.json").exists() or not cfg_path.exists():
        raise UserError(
            f"{run_dir}: not a finished run of stage=search or stage=live (expected summary.json and .hydra/config.yaml)"
        )
    hydra = run_dir / ".hydra" / "hydra.yaml"
    cwd = OmegaConf.select(OmegaConf.load(hydra), "hydra.runtime.cwd", default=None) if hydra.exists() else None
    return OmegaConf.load(cfg_path), Path(cwd) if cwd else run_dir


def measured_of(run_dir: Path, summary: dict, session, fidelity: str):
    """(ConfigurationOutcomes or None, method): the run's ground truth, or its live outcomes in the
    session's live oracle, completed by the clean set and each family alone (then None)."""
    from ..fidelity import sign
    from ..findings import ConfigurationOutcomes
    from ..pipeline import live_oracle
    from ..pipeline.scan import timed

    benchmark = session.benchmark
    lattice = benchmark.lattice
    table = summary.get("table")
    if table and not summary.get("live") and Path(table).exists() and str(table).endswith(".parquet"):
        df = pd.read_parquet(table)
        if len(df) == lattice.size and "correct" in df and fidelity in df:
            return ConfigurationOutcomes.from_table(df, lattice, fidelity), {"how": "lattice", "cached": True}
    outcomes = run_dir / "outcomes.parquet"
    if not outcomes.exists():
        raise UserError(f"{run_dir}: neither a ground truth nor outcomes.parquet (a live run's per-input outcomes)")
    oracle = live_oracle(session, fidelity)
    out = pd.read_parquet(outcomes)
    ranked = pd.read_csv(run_dir / "ranked.csv")
    cols = [f"t{i + 1}" for i in range(lattice.n)]
    rho = dict(zip(map(int, lattice.index(ranked[cols].to_numpy(np.int64))), ranked["rho"]))
    delta = dict(zip(map(int, lattice.index(ranked[cols].to_numpy(np.int64))), ranked["delta"]))
    s = sign(fidelity, benchmark.metrics)
    for theta, correct in zip(out[cols].to_numpy(np.int64), out["correct"]):
        i = int(lattice.index(theta))
        if i in rho:
            oracle.memo[i] = {"delta": delta[i], "rho": rho[i], fidelity: s * rho[i]}
            oracle.outcomes[i] = np.asarray(correct, bool)
    ran = len(oracle.memo)
    timed(oracle, np.flatnonzero(lattice.orders <= 1), None, "each family alone")
    return None, {"how": "run", "run_measured": ran}


def main(argv, prog: str = "testnav report") -> int:
    from ..core.naming import own_name
    from ..findings import SHOWN, ConfigurationOutcomes
    from ..pipeline import live_oracle
    from ..pipeline import open as open_session
    from ..pipeline.scan import complete_minimality, fidelity_of, findings_of

    args = parser(prog).parse_args(argv)
    run_dir = Path(args.run_dir).resolve()
    spec = spec_of(args)
    cfg, cwd = composed(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    fidelity = summary.get("fidelity") or str(cfg.fidelity.name)
    with chdir(cwd):
        benchmark = benchmarks.make(cfg.benchmark)
        if fidelity not in benchmark.metrics:
            raise UserError(f"{run_dir}: the run's fidelity {fidelity} is not among the benchmark's metrics")
        session = open_session(benchmark, str(cfg.cache_dir), str(cfg.device))
        fid = fidelity_of(session, spec, fidelity)
        measured, method = measured_of(run_dir, summary, session, fidelity)
        if measured is None:
            oracle = live_oracle(session, fidelity)
            method["sub_configurations_measured"] = complete_minimality(
                oracle, benchmark.lattice, fid, spec.failure_modes
            )
            measured = ConfigurationOutcomes.from_oracle(oracle)
        model = own_name(session.loaded.model)
        findings = findings_of(session, measured, spec, fid, method, model, keep=SHOWN)
        path = findings.report(Path(args.out) if args.out else run_dir / "findings.html")
        findings.save(run_dir / "findings")
    print(findings.text(hint=False))
    print(f"report: {path}")
    return 0
