import json

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from testnav import searches
from testnav.app.grid import run_grid, select
from tests.unit.searches.test_searches import synthetic


def test_selection_rule():
    rows = []
    for (c, m, mu), finals in {
        (1, 5, 110): [1.0, 1.0, 0.99],
        (5, 5, 110): [1.0, 0.98, 1.0],
        (1, 1, 20): [0.99, 0.99, 0.99],
        (15, 15, 20): [0.9, 1.0, 1.0],
    }.items():
        for table, fr in zip("abc", finals):
            for seed in range(2):
                rows.append(
                    dict(table=table, eta_c=c, eta_m=m, pop_size=mu, seed=seed, final_recall=fr, auc_recall=0.5)
                )
    ranking, best = select(pd.DataFrame(rows), 0.999)
    # (1,5,110) and (5,5,110) and (15,15,20) reach 2 tables; worst recall 0.99 > 0.98 > 0.9
    assert (best["eta_c"], best["eta_m"], best["pop_size"]) == (1.0, 5.0, 110)
    assert ranking["reached"].tolist() == [2, 2, 2, 0]


def test_grid_runs_writes_and_resumes(tmp_path):
    obj = synthetic(n=3, levels=4, seed=0)
    cfg = OmegaConf.create(
        {
            "progress": False,
            "grid": {
                "engine": "fast",
                "eta_c": [1, 15],
                "eta_m": [5],
                "pop_size": [10, 20],
                "seeds": 3,
                "threshold": 0.999,
                "p_crossover": 0.9,
                "p_crossover_var": 0.5,
                "p_mutation": 0.9,
                "p_mutation_var": None,
                "eliminate_duplicates": True,
                "out": str(tmp_path),
                "tables": [],
            },
        }
    )
    s = run_grid(cfg, [("toy", obj)], tmp_path, lambda o: 5 * o.lattice.size)
    df = pd.read_csv(tmp_path / "grid.csv")
    assert len(df) == 2 * 1 * 2 * 3 and set(df.columns) >= {"eta_c", "eta_m", "pop_size", "seed", "auc_recall"}
    assert s["selected"]["pop_size"] in (10, 20) and json.loads((tmp_path / "grid_selection.json").read_text())
    mtime = (tmp_path / "grid" / "toy.parquet").stat().st_mtime_ns
    run_grid(cfg, [("toy", obj)], tmp_path, lambda o: 5 * o.lattice.size)
    assert (tmp_path / "grid" / "toy.parquet").stat().st_mtime_ns == mtime  # resumed, not recomputed


def test_grid_fast_matches_single_runs(tmp_path):
    """Lock-step batching does not change a run: the grid row equals a lone fast run with that seed."""
    from testnav.core.oracle import TableOracle
    from testnav.core.recall import auc_recall, first_sightings, recall_curve

    obj = synthetic(n=3, levels=4, seed=1)
    cfg = OmegaConf.create(
        {
            "progress": False,
            "grid": {
                "engine": "fast",
                "eta_c": [1, 15],
                "eta_m": [5, 10],
                "pop_size": [10],
                "seeds": 2,
                "threshold": 0.999,
                "p_crossover": 0.9,
                "p_crossover_var": 0.5,
                "p_mutation": 0.9,
                "p_mutation_var": None,
                "eliminate_duplicates": True,
                "out": str(tmp_path),
                "tables": [],
            },
        }
    )
    run_grid(cfg, [("toy", obj)], tmp_path, lambda o: 320)
    df = pd.read_csv(tmp_path / "grid.csv")
    row = df[(df.eta_c == 15) & (df.eta_m == 10) & (df.seed == 1)].iloc[0]
    p = searches.make("nsga2", pop_size=10, eta_c=15, eta_m=10, engine="fast").run(TableOracle(obj), 320, 1)
    assert row.auc_recall == pytest.approx(auc_recall(recall_curve(p[first_sightings(p)], obj.pstar, 64)))
    assert np.isfinite(df.seconds_per_run).all()


def test_grid_recomputes_when_the_table_changes(tmp_path):
    from testnav.core.table import Objectives

    obj = synthetic(n=2, levels=4, seed=0)
    cfg = OmegaConf.create(
        {
            "progress": False,
            "grid": {
                "engine": "fast",
                "eta_c": [1],
                "eta_m": [5],
                "pop_size": [4],
                "seeds": 1,
                "threshold": 0.999,
                "p_crossover": 0.9,
                "p_crossover_var": 0.5,
                "p_mutation": 0.9,
                "p_mutation_var": None,
                "eliminate_duplicates": True,
                "out": str(tmp_path),
                "tables": [],
            },
        }
    )
    run_grid(cfg, [("toy", obj)], tmp_path, lambda o: 32)
    mtime = (tmp_path / "grid" / "toy.parquet").stat().st_mtime_ns
    changed = Objectives(obj.lattice, obj.rho, obj.delta)
    run_grid(cfg, [("toy", changed)], tmp_path, lambda o: 32)
    assert (tmp_path / "grid" / "toy.parquet").stat().st_mtime_ns != mtime
