"""What breaks the model, from the command line: `stage=scan` (the findings of any configured benchmark,
findings.html in the run directory) and the three-line answer a search run on a benchmark ends with
(`report.answer`; the findings of its cached ground truth, what `Tester.scan()` prints first).

    testnav stage=scan                                     # the embedded default (mnist5k's LeNet-5)
    testnav stage=scan benchmark=my5 --config-dir my_conf  # a model of your own, configured in YAML

The settings are conf/settings/scan.yaml's (`scan.budget_seconds=…`, `scan.failure_modes=…`), read by
one `ScanSpec`; the work is the pipeline's (testnav/pipeline/scan.py) on a `Session` opened here.
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

from .. import benchmarks, pipeline
from ..errors import UserError


def findings_of(cfg: DictConfig, benchmark, examples: bool = True):
    """The findings of `benchmark`'s model under the run's scan settings (a cached ground truth is read);
    `examples=False`: no inputs kept per failure mode (perturbing them is most of the time the answer takes)."""
    spec = pipeline.ScanSpec.from_node({**cfg.scan, **({} if examples else {"examples": 0, "orders": 0})})
    try:
        session = pipeline.open(benchmark, cfg.cache_dir, cfg.device, progress=cfg.progress)
    except UserError:
        raise
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else ""
        raise UserError(f"scan: benchmark {benchmark.name} cannot be loaded ({type(e).__name__}: {first})") from e
    return pipeline.scan(session, spec, cfg.fidelity.name)


def wanted(cfg: DictConfig) -> bool:
    """Whether this run ends with the answer: report.answer, where auto means a single run (not a sweep's)."""
    setting = pipeline.ReportSpec.from_node(cfg.report).answer
    if setting != "auto":
        return bool(setting)
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return not HydraConfig.initialized() or HydraConfig.get().mode != RunMode.MULTIRUN


def print_answer(cfg: DictConfig, benchmark) -> None:
    """The three-line answer under a heading, after a search run on `benchmark` (a replay of a table of
    its own has no model: nothing), where `wanted`."""
    if benchmark is None or not wanted(cfg):
        return
    findings = findings_of(cfg, benchmark, examples=False)
    print(f"What breaks {findings.model} (the ground truth's findings; stage=scan draws them in full):")
    print("\n".join("  " + line for line in findings.answer().splitlines()))


def run_scan(cfg: DictConfig, out_dir: Path) -> None:
    """stage=scan: the findings, printed; findings.html and findings/ (Findings.save) in the run directory."""
    benchmark = benchmarks.make(cfg.benchmark)
    findings = findings_of(cfg, benchmark)
    report = findings.report(out_dir / "findings.html")
    findings.save(out_dir / "findings")
    print(findings.text(hint=False))
    print(f"  run directory: {out_dir}  ({report.name}, findings/)")
