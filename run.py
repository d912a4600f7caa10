"""Hydra entry point: `python run.py [overrides]`. All logic lives in testnav.app.stages."""

import sys
from pathlib import Path

import testnav  # noqa: F401  (sets HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE before anything else)
import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from testnav.app import stages as app
from testnav.app.cli import guarded, precheck, quote_free_text, register_resolvers, survive_own_requeue
from testnav.paths import CONF
from testnav.registry import normalise


@hydra.main(config_path=str(CONF), config_name="config", version_base="1.3")
def main(cfg: DictConfig):
    out_dir = Path(HydraConfig.get().runtime.output_dir)
    survive_own_requeue()  # the job's own `scontrol requeue` must outlive the SIGTERM it brings
    return guarded(lambda: app.main(cfg, out_dir), lambda: out_dir)


if __name__ == "__main__":
    register_resolvers()
    sys.argv[1:] = normalise(quote_free_text(sys.argv[1:]))
    precheck(sys.argv[1:], CONF)
    main()
