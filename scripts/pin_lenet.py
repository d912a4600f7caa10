"""Train mnist5k's LeNet-5 with the recipe in conf/benchmark/mnist5k.yaml and pin it.

    python scripts/pin_lenet.py            # train, write testnav/benchmarks/weights/mnist5k-lenet5.pt
                                           # + .json (recipe, accuracy, machine facts), set the yaml's sha256

This is how the shipped checkpoint was made. Run it only to change the model on purpose: the
golden digests (results/golden/) and every committed number follow from these weights.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

import torch  # noqa: E402

from testnav.benchmarks.mnist5k import WEIGHTS  # noqa: E402
from testnav.core.cache import file_digest  # noqa: E402
from testnav.models.lenet import predict  # noqa: E402
from testnav.paths import CONF  # noqa: E402
from testnav.pipeline import compose_benchmark  # noqa: E402

YAML = CONF / "benchmark" / "mnist5k.yaml"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> int:
    bench = compose_benchmark(["benchmark=mnist5k", "benchmark.model.train=true"])
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        loaded = bench.load(tmp)
        seconds = time.perf_counter() - t0
        (trained,) = (Path(tmp) / "models").glob("*.pt")
        target = WEIGHTS / "mnist5k-lenet5.pt"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(trained, target)
    digest = file_digest(target)
    accuracy = float((predict(loaded.model, loaded.inputs) == loaded.labels).float().mean())
    facts = {
        "file": target.name,
        "sha256": digest,
        "recipe": bench.recipe,
        "data": bench.data_description(),
        "clean_accuracy_on_D": accuracy,
        "train_seconds": round(seconds, 1),
        "made_by": "python scripts/pin_lenet.py",
        "date": time.strftime("%Y-%m-%d"),
        "machine": {
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        },
    }
    target.with_suffix(".json").write_text(json.dumps(facts, indent=2) + "\n")
    text = YAML.read_text()
    YAML.write_text(re.sub(r"(?m)^(  sha256: ).*$", rf"\g<1>{digest}", text))
    print(
        f"pinned {target} (sha256 {digest}), clean accuracy on D {accuracy:.4f}, trained in {seconds:.1f} s;"
        f" {YAML.relative_to(ROOT)} updated"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
