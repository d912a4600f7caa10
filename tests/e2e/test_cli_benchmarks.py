"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/benchmarks/test_benchmarks.py (the unit tier drives no CLI)."""

import pytest

from tests.helpers.artifacts import write_cifar10
from tests.helpers.cli_helpers import run_inprocess as run


@pytest.mark.parametrize(
    "name, args, expect",
    [
        ("cifar10", ["benchmark.data.root={tmp}/nowhere"], "does not exist: put CIFAR-10's python version there"),
        ("tiny_imagenet", ["benchmark.data.root={tmp}"], "wnids.txt"),
        ("gtsrb", ["benchmark.data.root={tmp}"], "GTSRB not found under"),
        ("mnist", ["benchmark.root={tmp}"], "MNIST not found under"),
    ],
)
def test_missing_files_say_what_to_put_where(name, args, expect, tmp_path):
    r = run(
        [
            "stage=groundtruth",
            f"benchmark={name}",
            f"cache_dir={tmp_path / 'cache'}",
            f"hydra.run.dir={tmp_path / 'run'}",
            *[a.format(tmp=tmp_path) for a in args],
        ],
        tmp_path,
    )
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode != 0 and len(lines) == 1 and expect in lines[0], r.stderr[-2000:]


def test_missing_checkpoint_is_named(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    write_cifar10(root)
    args = [
        "stage=groundtruth",
        "benchmark=cifar10",
        f"benchmark.data.root={root}",
        f"benchmark.model.checkpoint={tmp_path}/wrn.pt",
        f"cache_dir={tmp_path / 'cache'}",
        f"hydra.run.dir={tmp_path / 'run'}",
    ]
    r = run(args, tmp_path)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode != 0 and len(lines) == 1 and f"checkpoint {tmp_path}/wrn.pt does not exist" in lines[0]
    (tmp_path / "wrn.pt").write_bytes(b"\x80\x02 not a state dict")  # present but unreadable
    r = run(args, tmp_path)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode != 0 and len(lines) == 1 and f"{tmp_path}/wrn.pt" in lines[0] and "read" in lines[0], r.stderr
    assert not (tmp_path / "run").exists()
