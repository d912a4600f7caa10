import logging
import os
import platform
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from testnav.core import cache
from testnav.core.cache import atomic_path
from testnav.groundtruth.compute import compute_groundtruth, outcomes, read_meta
from testnav.groundtruth.walk import PrefixWalker, prefix_generator
from tests.conftest import small_benchmark


@pytest.fixture(scope="module")
def table(cache_dir):
    bench = small_benchmark()
    path = compute_groundtruth(bench, cache_dir, progress=False)
    return bench, path, pd.read_parquet(path)


def test_table_has_one_row_per_theta_and_required_columns(table):
    bench, path, df = table
    assert len(df) == 81
    assert {"t1", "t2", "t3", "t4", "psi", "delta", "ssim", "kid", "correct"} <= set(df.columns)
    assert not df.duplicated(["t1", "t2", "t3", "t4"]).any()
    meta = read_meta(path)
    clean = df[(df[["t1", "t2", "t3", "t4"]] == 0).all(axis=1)].iloc[0]
    assert clean.psi == pytest.approx(meta["psi_clean"]) and clean.delta == 0 and clean.ssim == pytest.approx(1.0)
    assert np.allclose(df.delta, np.maximum(meta["psi_clean"] - df.psi, 0))
    out = outcomes(df)
    assert out.shape == (81, 200) and np.allclose(out.mean(1), df.psi)
    assert meta["psi_clean"] >= 0.9


def test_prefix_sharing_counts_and_equals_naive(table):
    bench, path, df = table
    meta = read_meta(path)
    assert all(r["family_applications"] == 3**4 - 1 for r in meta["runs"])  # one per non-identity prefix node
    assert meta["family_applications"] == sum(r["family_applications"] for r in meta["runs"])  # a walk per part
    assert meta["naive_applications"] == 324
    loaded = bench.load(path.parents[1])
    for theta in [(1, 2, 0, 1), (2, 2, 2, 2), (0, 1, 2, 0)]:
        x = loaded.inputs
        for i, lvl in enumerate(theta):  # naive: apply each family from scratch with the prefix's generator
            if lvl:
                x = bench.families[i](x, lvl, prefix_generator(bench.perturb_seed, theta[: i + 1]))
        shared = PrefixWalker(bench.families, loaded.inputs, bench.perturb_seed).images(theta)
        assert np.array_equal(x.numpy(), shared.numpy())


def test_a_live_walkers_prefix_cache_gives_the_same_images_with_fewer_applications(table):
    """Out of lattice order (as a live search asks), the cached walker gives every configuration the
    images a fresh walk gives, applies fewer families than the stack alone, and keeps its cache
    within its bytes (inner prefixes only; the least recently used go first)."""
    bench, path, _ = table
    loaded = bench.load(path.parents[1])
    rng = np.random.default_rng(0)
    thetas = [tuple(int(v) for v in rng.integers(0, 3, 4)) for _ in range(40)]
    per = loaded.inputs.numel() * loaded.inputs.element_size()
    plain = PrefixWalker(bench.families, loaded.inputs, bench.perturb_seed)
    cached = PrefixWalker(bench.families, loaded.inputs, bench.perturb_seed, cache_bytes=6 * per)
    for theta in thetas:
        fresh = PrefixWalker(bench.families, loaded.inputs, bench.perturb_seed).images(theta)
        assert torch.equal(cached.images(theta), fresh) and torch.equal(plain.images(theta), fresh), theta
        assert cached.cached_bytes <= 6 * per and all(len(p) < 4 for p in cached.cache)
    assert 0 < cached.applications < plain.applications
    assert len(cached.cache) == 6


def test_stacked_siblings_score_as_each_set_alone(table):
    """The ground truth scores a prefix's siblings as one stacked view (testnav/core/sets.py): each
    set's predictions are those of the set alone, to the bit, and every metric and signal its
    value alone; the table holds those values."""
    bench, path, df = table
    loaded = bench.load(path.parents[1])
    bench.prepare_metrics(loaded)
    thetas = [(1, 2, 0, k) for k in range(3)]
    walker = PrefixWalker(bench.families, loaded.inputs, bench.perturb_seed)
    images = [walker.images(t) for t in thetas]
    stacked = bench.score_sets(loaded, images, thetas)
    assert len(stacked) == 3 and set(stacked[0]) >= {"psi", "correct", "ssim", "kid", "lsa", "dsa", "kmnc", "tknc"}
    for x, theta, s in zip(images, thetas, stacked):
        alone = bench.score(loaded, x, theta=theta)
        assert np.array_equal(s["correct"], alone["correct"]) and s["psi"] == alone["psi"]
        for k in alone.keys() - {"psi", "correct"}:
            assert s[k] == pytest.approx(alone[k], rel=1e-12, abs=1e-12), k
        row = df[(df[["t1", "t2", "t3", "t4"]] == theta).all(axis=1)].iloc[0]
        assert row.kid == pytest.approx(s["kid"], rel=1e-12) and row.dsa == pytest.approx(s["dsa"], rel=1e-12)
    assert len({s["ssim"] for s in stacked}) == 3  # three different sets


def test_cache_hit_and_resume_after_interruption(table, cache_dir):
    bench, path, df = table
    mtime = path.stat().st_mtime_ns
    assert compute_groundtruth(small_benchmark(), cache_dir, progress=False) == path
    assert path.stat().st_mtime_ns == mtime  # served from cache, not recomputed
    # simulate a killed run: final table and its parts gone, only some chunks of each part written
    full = pd.read_parquet(path)
    parts = path.with_suffix(".parts")
    parts.mkdir()
    t, signals = ["t1", "t2", "t3", "t4"], list(bench.signals)
    for (t1, t2), chunk in full.groupby(["t1", "t2"]):
        if t1 == 0:
            with atomic_path(parts / f"chunk-{t1}-{t2}.parquet", checksum=True) as tmp:
                chunk.drop(columns=signals).assign(psi=-1.0).to_parquet(tmp, index=False)  # marked
            with atomic_path(parts / f"signals-{t1}-{t2}.parquet", checksum=True) as tmp:
                chunk[t + signals].reset_index(drop=True).to_parquet(tmp, index=False)
    keys = read_meta(path)["parts"]  # this table's parts (the cache holds other tests' too)
    saved = {
        p: p.read_bytes() for k, v in keys.items() for p in (cache_dir / "groundtruth" / "parts").glob(f"*-{k}-{v}.*")
    }
    for p in saved:
        p.unlink()
    path.unlink()
    compute_groundtruth(small_benchmark(), cache_dir, progress=False)
    resumed = pd.read_parquet(path)
    assert (resumed[resumed.t1 == 0].psi == -1.0).all()  # finished chunks were reused, not redone
    pd.testing.assert_frame_equal(
        resumed[resumed.t1 > 0].reset_index(drop=True), full[full.t1 > 0].reset_index(drop=True)
    )
    assert not parts.exists()
    with atomic_path(path, checksum=True) as tmp:  # restore for other tests
        full.to_parquet(tmp, index=False)
    for p, raw in saved.items():
        p.write_bytes(raw)


@pytest.mark.parametrize("victim", [".parquet", ".json"])
def test_corrupted_cache_file_is_detected_reported_and_recomputed(victim, tmp_path, caplog):
    cache_copy = tmp_path / "cache"
    tiny = dict(levels=2, test_per_class=5)  # the cache's checks do not depend on the table's size
    path = compute_groundtruth(small_benchmark(**tiny), cache_copy, progress=False)
    good = path.read_bytes()
    damaged = path.with_suffix(victim)
    raw = bytearray(damaged.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # one flipped byte: still a file of the right size, silently wrong
    damaged.write_bytes(bytes(raw))
    with caplog.at_level(logging.WARNING):
        assert compute_groundtruth(small_benchmark(**tiny), cache_copy, progress=False) == path
    assert f"cached file {damaged} is corrupted (checksum mismatch)" in caplog.text
    assert path.read_bytes() == good and cache.verified(damaged)


def test_corrupted_chunk_is_redone_and_a_cached_model_is_retrained(tmp_path, caplog):
    chunk = tmp_path / "chunk-0-0.parquet"
    with atomic_path(chunk, checksum=True) as tmp:
        pd.DataFrame({"a": [1, 2]}).to_parquet(tmp)
    assert cache.verified(chunk)
    chunk.write_bytes(chunk.read_bytes()[:-5])  # truncated (a full disk, a killed copy)
    with caplog.at_level(logging.WARNING):
        assert not cache.verified(chunk)
    assert "checksum mismatch" in caplog.text and not chunk.exists() and not cache.checksum_path(chunk).exists()
    legacy = tmp_path / "legacy.parquet"
    legacy.write_bytes(b"written without a digest")
    assert not cache.verified(legacy) and "no checksum recorded" in caplog.text


def test_key_changes_with_what_the_table_depends_on(cache_dir):
    base = small_benchmark()
    loaded = base.load(cache_dir)
    key = base.key(loaded)
    assert small_benchmark().key(loaded) == key
    assert small_benchmark(**{"benchmark.perturb_seed": 1}).key(loaded) != key
    assert small_benchmark(**{"benchmark.families.0.params": "[0.1,0.2,0.35,0.4,0.5]"}).key(loaded) != key
    assert small_benchmark(**{"benchmark.metrics.ssim.data_range": 255.0}).key(loaded) != key
    assert small_benchmark(levels=4).key(loaded) != key
    assert small_benchmark(test_per_class=10).key(base.load(cache_dir)) != key  # data subset
    retrained = small_benchmark(**{"benchmark.model.train": "true", "benchmark.model.epochs": 1})  # another model key
    assert retrained.key(retrained.load(cache_dir)) != key


def test_source_hash_follows_the_code_of_the_families(tmp_path, monkeypatch):
    shutil.copytree(cache.PACKAGE_ROOT / "families", tmp_path / "families")
    monkeypatch.setattr(cache, "PACKAGE_ROOT", tmp_path)
    before = cache.source_hash("families")
    assert cache.source_hash("families") == before
    f = tmp_path / "families" / "brightness.py"
    f.write_text(f.read_text() + "\n# a changed family\n")
    assert cache.source_hash("families") != before


def test_freed_memory_is_kept_unless_switched_off(monkeypatch):
    """glibc's thresholds are set once per process (the ground truth's tensors then reuse freed
    memory instead of faulting it in afresh); TESTNAV_KEEP_FREED_MEMORY=0 leaves the defaults."""
    import platform

    from testnav.core import memory

    monkeypatch.setenv("TESTNAV_KEEP_FREED_MEMORY", "0")
    assert memory.keep_freed_memory.__wrapped__() is False
    monkeypatch.setenv("TESTNAV_KEEP_FREED_MEMORY", "1")
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert memory.keep_freed_memory.__wrapped__() is True


FAULTS_PROBE = """
import resource, torch
from testnav.core.memory import keep_freed_memory
keep_freed_memory()
faults = []
for i in range(20):  # a 64 MB tensor, above glibc's 32 MiB mmap ceiling, allocated, filled, freed
    start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t = torch.empty(16 << 20)
    t.fill_(1.0)
    del t
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start)
print(min(faults))
"""


@pytest.mark.slow  # two fresh interpreters importing torch
@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt settings are what is tested")
def test_freed_memory_above_the_mmap_ceiling_is_reused_too():
    """A tensor larger than glibc's largest mmap threshold (oneDNN's blocked activations at
    batch 1,024) is reused from the heap, not faulted in afresh, once freed memory is kept;
    with glibc's defaults every allocation faults in its 16,384 pages. The heap takes a varying
    number of rounds to settle (up to 9 of 12 measured on this project's Intel host, run to run), so the fewest
    faults of any round is compared."""

    def faults(keep: str) -> int:
        env = {**os.environ, "TESTNAV_KEEP_FREED_MEMORY": keep}
        out = subprocess.run([sys.executable, "-c", FAULTS_PROBE], env=env, capture_output=True, text=True, check=True)
        return int(out.stdout.split()[-1])

    assert faults("0") > 16_000
    assert faults("1") < 1_000
