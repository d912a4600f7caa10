"""The library pipeline under every entry point (run.py's stages, `testnav.Tester`, scripts):

    session = pipeline.open(benchmark, cache_dir, device)      # data and model on the device
    run = pipeline.live(RunSpec("nsga2", budget=200), session)  # the model itself, no table
    run = pipeline.replay(RunSpec("tomonav", seed=3), objectives, identity)   # a ground-truth table
    findings = pipeline.scan(session, ScanSpec(), "ssim")       # what breaks the model
    comparison = pipeline.compare(session, RunRecord.load(path), CompareSpec(), "ssim")

A `RunSpec` is frozen: which search (a conf/search name, with overrides), the budget, the seed
and the stopping certificate's settings. `replay` and `live` build the search with
`testnav.searches.make`, run it under the certificate and return a `Run` (summary, trace,
ranked list), writing nothing; `Run.save` writes a run directory as run.py does. A `RunRecord`
(record.py) keeps what a model was measured on, per configuration and input, and `compare`
(compare.py) tests a model against one, configuration by configuration; `scan` (scan.py)
measures what breaks it. Each verb's settings are one frozen spec read from
conf/settings/<verb>.yaml and checked once (specs.py: `ScanSpec`, `CompareSpec`, `ReportSpec`;
TestifAI's `QuerySpec`). Nothing here reads the command line, and nothing takes the `Tester`:
below the facade the handle is the `Session`. `testnav.Tester` reaches the engines (ground truth,
certificate, tomography) only through here; TestifAI's part is tomography.py.
"""

from ..groundtruth.compute import compute_groundtruth, read_meta
from ..groundtruth.session import Session, open, resolve_device
from ..stopping.certificate import STOP_ON, CertificateConfig
from ..tomography.query import QuerySpec
from .compare import Comparison, compare, compare_records
from .config import build_groundtruth, cached_groundtruth, compose_benchmark, compose_config, groundtruth_objectives
from .live import live, live_oracle
from .record import RunRecord, record_of
from .resolution import RhoProbe
from .runs import Run, RunSpec, certificate_for, check_budget, check_seed, replay, search_for
from .scan import scan
from .specs import CompareSpec, ReportSpec, ScanSpec

__all__ = [
    "STOP_ON",
    "CertificateConfig",
    "CompareSpec",
    "Comparison",
    "QuerySpec",
    "ReportSpec",
    "Run",
    "RunRecord",
    "RhoProbe",
    "RunSpec",
    "ScanSpec",
    "Session",
    "build_groundtruth",
    "cached_groundtruth",
    "certificate_for",
    "check_budget",
    "check_seed",
    "compare",
    "compare_records",
    "compose_benchmark",
    "compose_config",
    "compute_groundtruth",
    "groundtruth_objectives",
    "live",
    "live_oracle",
    "open",
    "read_meta",
    "record_of",
    "replay",
    "resolve_device",
    "scan",
    "search_for",
]
