"""The library pipeline under every entry point (run.py's stages, `testnav.Tester`, scripts):

    session = pipeline.open(benchmark, cache_dir, device)      # data and model on the device
    run = pipeline.live(RunSpec("nsga2", budget=200), session)  # the model itself, no table
    run = pipeline.replay(RunSpec("tomonav", seed=3), objectives, identity)   # a ground-truth table

A `RunSpec` is frozen: which search (a conf/search name, with overrides), the budget, the seed
and the stopping certificate's settings. `replay` and `live` build the search with
`testnav.searches.make`, run it under the certificate and return a `Run` (summary, trace,
ranked list), writing nothing; `Run.save` writes a run directory as run.py does. A `RunRecord`
(record.py) keeps what a model was measured on, per configuration and input, and `compare_on`
(compare.py) tests a model against one, configuration by configuration. Nothing here reads the
command line. `testnav.Tester` reaches the engines (ground truth, certificate, tomography) only
through here; TestifAI's part is tomography.py.
"""

from ..groundtruth.compute import compute_groundtruth, read_meta
from ..groundtruth.session import Session, open, resolve_device
from ..stopping.certificate import STOP_ON, CertificateConfig
from .compare import Comparison, compare, compare_on
from .config import build_groundtruth, cached_groundtruth, compose_benchmark, compose_config, groundtruth_objectives
from .live import live, live_oracle
from .record import RunRecord, record_of
from .resolution import RhoProbe
from .runs import Run, RunSpec, check_budget, check_seed, replay, search_for

__all__ = [
    "STOP_ON",
    "CertificateConfig",
    "Comparison",
    "Run",
    "RunRecord",
    "RhoProbe",
    "RunSpec",
    "Session",
    "build_groundtruth",
    "cached_groundtruth",
    "compare",
    "compare_on",
    "check_budget",
    "check_seed",
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
    "search_for",
]
