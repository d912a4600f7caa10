"""Large lattices: index arithmetic instead of Θ-sized arrays, TomoNav's candidate pool
(testnav/stopping/pool.py) above `pool_above`, and the certificate's sampled estimate beyond
Tuning.sample_above unmeasured configurations."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from testnav import searches
from testnav.core.exact import on_grid
from testnav.core.lattice import Lattice
from testnav.core.oracle import Oracle, TableOracle
from testnav.core.pareto import nondominated_mask
from testnav.core.recall import first_sightings
from testnav.core.table import Objectives
from testnav.errors import UserError
from testnav.groundtruth.synthetic import synthetic_table
from testnav.searches import tomonav
from testnav.searches.tomonav import _low_orders
from testnav.stopping.certificate import Certificate, CertifiedOracle, run_certified
from testnav.stopping.estimators import Fit
from testnav.stopping.pool import candidate_pool, neighbours, random_configurations
from testnav.stopping.tuning import TUNED


def test_index_arithmetic_matches_the_tabulated_lattice():
    lat = Lattice(3, 5)
    idx = np.arange(lat.size)
    assert np.array_equal(lat.theta(idx), lat.tuples) and np.array_equal(lat.order_of(idx), lat.orders)
    assert lat.theta(7).tolist() == lat.tuples[7].tolist()
    assert np.array_equal(_low_orders(lat, 1), np.flatnonzero(lat.orders <= 1))
    assert np.array_equal(_low_orders(lat, 2), np.flatnonzero(lat.orders <= 2))


def test_random_configurations_and_neighbours():
    lat = Lattice(8, 8)  # 16.7 M configurations: nothing of that size may be built
    rng = np.random.default_rng(0)
    got = random_configurations(lat, 500, rng, exclude=[0, 1, 2])
    assert len(np.unique(got)) == 500 and not np.isin(got, [0, 1, 2]).any() and (np.diff(got) > 0).all()
    small = Lattice(2, 3)
    assert random_configurations(small, 20, rng, exclude=[4]).tolist() == [0, 1, 2, 3, 5, 6, 7, 8]
    nb = neighbours(lat, [0])
    assert len(nb) == 8 and (lat.order_of(nb) == 1).all()


def test_candidate_pool_is_unmeasured_sorted_and_holds_the_fronts_neighbours():
    lat = Lattice(6, 6)
    rng = np.random.default_rng(1)
    measured = np.r_[0, random_configurations(lat, 200, rng, exclude=[0])]
    values = np.random.default_rng(2).random((len(measured), 2))
    values[0] = [0.0, 1.0]  # θ = 0, the clean reference: on every front, yet left out
    pool = candidate_pool(lat, measured, values, np.array([5, 6]), 1000, rng)
    assert (np.diff(pool) > 0).all() and not np.isin(pool, measured).any() and 0 not in pool
    assert np.isin([5, 6], pool).all() and 250 <= len(pool) <= 1300
    test = measured[1:]
    front = test[nondominated_mask(values[1:, 0], values[1:, 1])]
    nb = np.setdiff1d(neighbours(lat, front), np.r_[measured, 0])
    assert np.isin(nb, pool).all()


def test_candidate_pool_around_several_fronts_holds_the_later_fronts_neighbours():
    """`fronts`=k draws the neighbours from the first k measured fronts, peeled one by one
    (TomoNav's mop-up): the second front's neighbours are in, which one front does not promise."""
    lat = Lattice(6, 6)
    rng = np.random.default_rng(1)
    measured = np.r_[0, random_configurations(lat, 200, rng, exclude=[0])]
    values = np.random.default_rng(2).random((len(measured), 2))
    test, v = measured[1:], values[1:]
    first = nondominated_mask(v[:, 0], v[:, 1])
    second = np.zeros(len(test), bool)
    second[np.flatnonzero(~first)[nondominated_mask(v[~first, 0], v[~first, 1])]] = True
    nb2 = np.setdiff1d(neighbours(lat, test[second]), np.r_[measured, neighbours(lat, test[first])])
    assert len(nb2) > 0
    pool = candidate_pool(lat, measured, values, np.zeros(0, np.int64), 2000, np.random.default_rng(3), fronts=2)
    assert np.isin(nb2, pool).all() and not np.isin(pool, measured).any()


def test_mop_up_around_the_band_finds_more_of_a_noisy_front():
    """On a noisy table (P*: noise spikes along the band inside the front) a pool around the
    first 8 measured fronts, once the predicted front is exhausted, finds more of P* than a pool
    around the first front alone, which is then mostly uniform fill (a tuning table: 47 of P*'s 51
    members against 35)."""
    obj = Objectives.from_table(synthetic_table("pairs", n=6, levels=6, noise=0.03, seed=8))
    found = {}
    for k in (1, 8):
        proposals = searches.make("tomonav", mop_fronts=k).run(TableOracle(obj), 5000, 8)
        found[k] = int(np.isin(obj.pstar, proposals).sum())
    assert found[8] >= found[1] + 5


class FunctionOracle(Oracle):
    """A live-like oracle on a lattice never tabulated: (δ, ρ) computed from θ on demand."""

    def __init__(self, lattice):
        self.lattice, self.calls = lattice, 0
        rng = np.random.default_rng(0)
        self.a, self.f = rng.uniform(0.2, 1.5, lattice.n), rng.uniform(0.2, 1.5, lattice.n)

    def evaluate(self, indices, names=("delta", "rho")):
        s = self.lattice.theta(np.asarray(indices, dtype=np.int64)) / (self.lattice.levels - 1)
        self.calls += len(s)
        return np.column_stack([1 - np.exp(-(s @ self.a) - s[:, 0] * s[:, 1]), np.exp(-(s @ self.f))])

    def table(self, names=("delta", "rho")):
        raise UserError("no table live")


def test_pool_path_runs_live_on_a_lattice_of_millions():
    lat = Lattice(8, 8)
    oracle = FunctionOracle(lat)
    p = searches.make("tomonav").run(oracle, 600, seed=0)
    assert len(p) == 600 == oracle.calls and first_sightings(p).all() and 0 <= p.min() and p.max() < lat.size
    assert np.array_equal(p, searches.make("tomonav").run(FunctionOracle(lat), 600, seed=0))  # deterministic per seed


def test_pool_path_finds_far_more_of_pstar_than_random():
    obj = Objectives.from_table(synthetic_table("pairs", 6, 6, seed=7))
    pstar = set(obj.pstar.tolist())
    found = lambda p: len(pstar & set(p.tolist()))  # noqa: E731
    tomo = searches.make("tomonav").run(TableOracle(obj), 1500, seed=0)
    rand = np.random.default_rng(0).choice(obj.lattice.size, 1500, replace=False)
    assert first_sightings(tomo).all() and found(tomo) > 5 * max(found(rand), 1)


def test_pool_threshold_and_parameters():
    obj = Objectives.from_table(synthetic_table("pairs", 3, 6, seed=1))
    dense = searches.make("tomonav").run(TableOracle(obj), 300, seed=0)
    pooled = searches.make("tomonav", pool_above=10, pool=100).run(TableOracle(obj), 300, seed=0)
    assert len(pooled) == 300 and len(np.unique(pooled[: obj.lattice.size])) == min(300, obj.lattice.size)
    assert not np.array_equal(dense, pooled)
    for bad in (dict(pool=0), dict(pool_above=1.5), dict(batch_growth=-1), dict(max_samples=0)):
        with pytest.raises(UserError):
            searches.make("tomonav", **bad)


def test_sampled_certificate_estimate_is_close_to_the_exact_sum():
    obj = Objectives.from_table(synthetic_table("pairs", 6, 6, seed=7))
    p = searches.make("tomonav").run(TableOracle(obj), 3000, seed=0)
    values = np.column_stack([obj.delta, obj.rho])

    def missing(**tuning):
        cert = Certificate(obj.lattice, seed=0, tuning=dataclasses.replace(TUNED, **tuning))
        cert.measured.values[p], cert.measured.seen[p] = values[p], True
        return cert.missing()

    sampled = missing()
    exact = missing(sample_above=10**9)
    # the two forests differ too (1,000-point bootstraps when sampled), so only roughly equal
    assert sampled > 0 and exact > 0 and abs(sampled - exact) < 0.4 * exact
    assert Certificate(obj.lattice).schedule.every == 2000 and Certificate(Lattice(4, 6)).schedule.every == 65
    assert Certificate(Lattice(8, 6)).schedule.every == 2000


def test_scale_figure_from_the_study_table(tmp_path):
    from testnav.figures import scale

    rows = [
        {
            "ok": True,
            "profile": "pairs",
            "space_size": size,
            "budget": b,
            "search": s,
            "auc": auc,
            "search_ms_per_proposal": ms,
        }
        for size, b in ((1296, 6480), (46656, 5000), (46656, 20000))
        for s, auc, ms in (("nsga2", 0.7, 0.2), ("tomonav", 0.9, 0.4))
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "scale.csv", index=False)
    path, sentence = scale.draw(tmp_path / "scale.csv", tmp_path / "scale.png")
    assert path.exists() and "1,296–46,656" in sentence
    assert scale.draw(tmp_path / "absent.csv", tmp_path / "x.png") is None


def test_default_pool_threshold_sits_between_the_papers_lattice_and_4096():
    """6⁴ (both papers) ranks all of Θ by default, bit for bit the exact path; 4⁶ = 4,096 is pooled."""
    papers = Objectives.from_table(synthetic_table("pairs", 4, 6, seed=1))
    unpooled = searches.make("tomonav", pool_above=10**9).run(TableOracle(papers), 200, seed=0)
    assert np.array_equal(searches.make("tomonav").run(TableOracle(papers), 200, seed=0), unpooled)
    big = Objectives.from_table(synthetic_table("pairs", 6, 4, seed=1))
    search = searches.make("tomonav")
    pooled = search.run(TableOracle(big), 400, seed=0)
    assert len(pooled) == 400 and first_sightings(pooled).all()
    exact = searches.make("tomonav", pool_above=10**9)
    assert not np.array_equal(pooled, exact.run(TableOracle(big), 400, seed=0))
    # the pooled path's batches grow with what was measured: fewer refits than batches of 10
    assert len(search.history) < len(exact.history) / 2


class SaturatedOracle(FunctionOracle):
    """δ squeezed into [1 − 1e-7, 1]: neighbouring front members closer than the surrogate's grid."""

    def evaluate(self, indices, names=("delta", "rho")):
        v = super().evaluate(indices, names)
        v[:, 0] = 1 - 1e-7 * (1 - v[:, 0])
        return v


def test_pool_is_drawn_around_the_fronts_of_the_values_as_measured(monkeypatch):
    """The grid that the surrogate needs (2⁻²⁴) merges front members whose δ saturates at 1;
    the pool's fronts come from the measured values themselves, so no member's neighbours
    drop out of it."""
    handed = []
    real_pool = tomonav.candidate_pool

    def spy(lattice, measured, values, *args):
        handed.append((measured.copy(), values.copy()))
        return real_pool(lattice, measured, values, *args)

    monkeypatch.setattr(tomonav, "candidate_pool", spy)
    oracle = SaturatedOracle(Lattice(6, 6))
    searches.make("tomonav", pool_above=10).run(oracle, 400, seed=0)
    seen, values = handed[-1]
    assert np.array_equal(values, SaturatedOracle(Lattice(6, 6)).evaluate(seen))  # bit for bit, not rounded
    test = seen != 0
    exact = nondominated_mask(values[test, 0], values[test, 1]).sum()
    grid = on_grid(values[test])
    assert nondominated_mask(grid[:, 0], grid[:, 1]).sum() < exact  # the grid would have merged members


def test_dense_certificate_schedule_is_chosen_by_size():
    """Above Tuning.reuse_above configurations checkpoints come dense_growth apart; the lattices of
    both papers keep `growth` (their committed results were made with it). `every` is the same rule."""
    small, large = Certificate(Lattice(4, 6)), Certificate(Lattice(6, 4))
    assert not small.fitting.dense and large.fitting.dense
    small, large = small.schedule, large.schedule
    assert small.growth == TUNED.growth and small.every == 65
    assert large.growth == TUNED.dense_growth < TUNED.growth and large.every == 205
    assert small.after(1000) == 1250 and 3300 <= large.after(3000) <= 3301  # 1.1 × 3000, rounded up
    assert not Certificate(Lattice(6, 4), dense=False).fitting.dense


def _feed(cert, indices, values, piece=50):
    for i in range(0, len(indices), piece):
        for chunk in cert.split(indices[i : i + piece]):
            cert.feed(chunk, values[chunk])


def test_dense_fresh_counts_members_of_the_trailing_window():
    """One front member measured at u ≈ 1,000 on 4⁶ among dominated points: the checkpoint of
    its window counts it, and so does the next one (1,230: the member lies within its trailing
    0.2 u), which the sparse rule would call quiet; the one after (1,435) is quiet."""
    rng = np.random.default_rng(0)
    order = rng.permutation(np.arange(1, 4096))[:1600]
    values = np.zeros((4096, 2))
    values[order] = rng.uniform(0, 0.5, (len(order), 2))
    values[order[1000]] = (0.9, 0.9)  # dominates every other measured point
    fresh = {}
    for dense in (True, False):
        cert = Certificate(Lattice(6, 4), seed=0, growth=TUNED.dense_growth, dense=dense)
        _feed(cert, order, values)
        fresh[dense] = {r.proposals: r.complete.fresh for r in cert.records}  # every proposal is new: b = u
    assert fresh[True][1025] == fresh[False][1025] == 1  # the window that found it
    assert fresh[True][1230] == 1 and fresh[False][1230] == 0  # within 0.2 u: not quiet yet
    assert fresh[True][1435] == fresh[False][1435] == 0


def test_dense_certificate_fits_once_per_quiet_spell(monkeypatch):
    """TomoNav on `pairs` 4⁶: the certificate fits its surrogate at fewer checkpoints than are
    quiet, and at a checkpoint without a refit its sum is the spell's fit's p_θ over the θ
    still unmeasured, as a fresh evaluation of that fit gives them."""
    from testnav.stopping.level_surrogate import Surrogate

    fits = []
    fit = Surrogate.fit
    monkeypatch.setattr(Surrogate, "fit", lambda self, *a, **k: (fits.append(self.kind), fit(self, *a, **k))[1])
    obj = Objectives.from_table(synthetic_table("pairs", n=6, levels=4, seed=7))
    table = TableOracle(obj)
    cert = Certificate(obj.lattice, seed=7)
    budget = 3 * obj.lattice.size // 4  # stays below Θ, after the search has gone quiet
    p, _ = run_certified(searches.make("tomonav"), CertifiedOracle(table, cert), budget, 7, table.evaluate)
    quiet = sum(0 < r.complete.missing < np.inf for r in cert.records)
    assert 1 <= fits.count("forest") < quiet
    spell = cert.complete.spell
    assert spell is not None  # the last checkpoint reused its spell's fit
    assert spell.exact == len(spell.cand)  # fewer than sample_above unmeasured: every one is scored
    m = cert.measured
    unmeasured = spell.cand[~m.seen[spell.cand]]
    direct = cert.complete.scored(Fit(spell.model, spell.front, None, m.u), unmeasured).sum()
    assert cert.missing() == pytest.approx(direct, rel=1e-12) and direct > 0


def test_reused_sampled_sum_tracks_the_exact_sum_of_the_same_fit():
    """On 6⁶ (more unmeasured θ than Tuning.sample_above) the spell's fit sums the front's neighbours
    exactly and weights a uniform sample up to the rest. After more dominated θ are measured
    (the front unchanged), the reused sum still estimates that fit's sum over every θ left."""
    obj = Objectives.from_table(synthetic_table("pairs", 6, 6, seed=7))
    p = searches.make("tomonav").run(TableOracle(obj), 3000, seed=0)
    values = np.column_stack([obj.delta, obj.rho])
    cert = Certificate(obj.lattice, seed=0)
    m = cert.measured
    m.values[p], m.seen[p] = values[p], True
    first = cert.missing()
    spell = cert.complete.spell
    assert 0 < spell.exact < len(spell.cand) and first > 0
    rng = np.random.default_rng(1)
    later = rng.choice(np.flatnonzero(~m.seen), 8000, replace=False)
    m.values[later] = 0.0  # dominated by the front: nothing new on it
    m.seen[later] = True
    reused = cert.missing()
    left = np.flatnonzero(~m.seen)
    exact_sum = cert.complete.scored(Fit(spell.model, spell.front, None, m.u), left[left != 0]).sum()
    assert reused < first and abs(reused - exact_sum) < 0.25 * exact_sum
