"""Each TestifAI plotting function draws a non-empty PNG from a small constructed frame;
draw_all skips what is missing and says which command makes it."""

import struct
from itertools import product

import numpy as np
import pandas as pd
import pytest

from testnav.figures import testifai as tf

PNG = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == PNG, f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height, len(data)


def check_png(path):
    width, height, size = png_size(path)
    assert width > 200 and height > 200 and size > 5000, (width, height, size)


def lattice_rows(n, levels=3):
    return np.array(list(product(range(levels), repeat=n)))


def per_test_frame(with_quality=True):
    rng = np.random.default_rng(0)
    frames = []
    for n in (3, 4):
        t = lattice_rows(n)
        order = (t > 0).sum(axis=1)
        r_true = np.clip(0.95 - 0.08 * t.sum(axis=1) + rng.normal(0, 0.02, len(t)), 0, 1)
        r_pred = np.clip(r_true + rng.normal(0, 0.03, len(t)) * (order >= 3), 0, 1)
        df = pd.DataFrame(t, columns=[f"t{i + 1}" for i in range(n)])
        df = df.assign(
            order=order,
            measured=order <= 2,
            r_true=r_true,
            r_pred=r_pred,
            error=r_pred - r_true,
            abs_error=np.abs(r_pred - r_true),
            tomography=f"{n}D",
            benchmark="toy",
            r_indep=np.where(order >= 3, r_true + 0.05, np.nan),
            r_product=np.where(order >= 3, r_true - 0.1, np.nan),
        )
        if with_quality:
            q = 100 * t.sum(axis=1) + rng.normal(0, 5, len(t))
            df = df.assign(q_true=q, q_pred=q + rng.normal(0, 10, len(t)) * (order >= 3))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def queries_frame():
    k = np.arange(1, 13)
    return pd.DataFrame(
        {
            "query": [f"Q{i}" for i in k],
            "text": ["a <= 2"] * 12,
            "tests": 27,
            "m": 9,
            "l": 18,
            "R_true": 0.9 - 0.05 * k,
            "R_pred": 0.9 - 0.05 * k + 0.01 * np.sin(k),
            "error": 0.01 * np.sin(k),
            "drop_true": 0.9 - 0.05 * k - 0.95,
            "drop_pred": 0.9 - 0.05 * k + 0.01 * np.sin(k) - 0.95,
            "reference": 0.95,
            "reference_source": "Table 1",
            "drop_true_relative": 1 - (0.9 - 0.05 * k) / 0.9,
            "drop_pred_relative": 1 - (0.9 - 0.05 * k + 0.01 * np.sin(k)) / 0.9,
            "benchmark": "toy",
        }
    )


def ovr_frame():
    rows = []
    for label, total in (("3D", 27), ("4D", 81)):
        for rep in range(3):
            for frac in (0.2, 0.5, 1.0):
                for strategy, scale in (("ordered", 1.0), ("random", 1.5)):
                    rows.append(
                        {
                            "tomography": label,
                            "strategy": strategy,
                            "fraction": frac,
                            "tests": int(round(frac * total)),
                            "rep": rep,
                            "mse": scale * (1 - frac + 0.01) * 0.02 * (1 + 0.1 * rep),
                        }
                    )
    return pd.DataFrame(rows)


def inferences_frame():
    return pd.DataFrame(
        {
            "tomography": ["3D"] * 3 + ["4D"] * 3,
            "regime": ["full", "partial", "partial_early_stopping"] * 2,
            "inferences": [27000, 20000, 15000, 81000, 33000, 30000],
            "mse": [0.0, 0.003, 0.004, 0.0, 0.006, 0.008],
        }
    )


def estimates_frame():
    rows = []
    for label, tests in (("3D", 8), ("4D", 48)):
        for k, defined in (("chi2", 0), ("1", tests // 2), ("2", tests)):
            rows.append(
                dict(
                    tomography=label,
                    pairs_independent=k,
                    independent="a⊥b",
                    tests=tests,
                    defined=defined,
                    mse_mixed=np.nan if not defined else 0.002,
                    mse_forest=np.nan if not defined else 0.004,
                    mse_product=np.nan if not defined else 0.01,
                )
            )
    return pd.DataFrame(rows)


CASES = [
    (tf.plot_r_distributions, per_test_frame, "median r_σ falls"),
    (tf.plot_per_test_errors, per_test_frame, "within ±0.05"),
    (tf.plot_queries, queries_frame, "worst Q"),
    (tf.plot_ordered_vs_random, ovr_frame, "ordered"),
    (tf.plot_inferences, inferences_frame, "of full"),
    (tf.plot_quality_vs_severity, per_test_frame, "mean |q̂ − q|"),
    (tf.plot_quality_errors, per_test_frame, "unmeasured tests of order ≥ 3"),
    (tf.plot_estimates, per_test_frame, "mixed estimate is defined"),
    (
        tf.plot_estimate_mse,
        estimates_frame,
        "4D: at α the mixed estimate is defined on 0 of 48 tests; with the 2 least",
    ),
]


@pytest.mark.parametrize("plot, frame, phrase", CASES, ids=[c[0].__name__ for c in CASES])
def test_plot_writes_a_png_and_a_sentence(tmp_path, plot, frame, phrase):
    path = tmp_path / "sub" / "fig.png"
    sentence = plot(frame(), path)
    check_png(path)
    assert phrase in sentence and sentence.endswith(".")
    again = tmp_path / "again.png"
    plot(frame(), again)
    assert again.read_bytes() == path.read_bytes()  # deterministic bytes
    assert b"Software" not in path.read_bytes()


def test_numbers_in_sentences_come_from_the_frame(tmp_path):
    inf = inferences_frame()
    assert "74.1% of full" in tf.plot_inferences(inf, tmp_path / "i.png")  # 20000 / 27000
    q = queries_frame()
    q.loc[4, "error"] = -0.2
    assert "worst Q5 at -0.200" in tf.plot_queries(q, tmp_path / "q.png")
    # Fig. 6's drop: points against the reference (Q12: 0.3 + 0.01·sin 12 − 0.95 → −65.5 points), or relative
    assert "largest predicted drop is 65.5 points (Q12), against 95.0 % (Table 1)" in tf.plot_queries(
        q, tmp_path / "q.png"
    )
    relative = tf.plot_queries(q, tmp_path / "r.png", drop="relative")
    assert "largest predicted relative drop is 67.3% (Q12)" in relative
    with pytest.raises(ValueError, match="drop=points"):
        tf.plot_queries(q, tmp_path / "x.png", drop="points")
    mse = tf.estimate_errors(per_test_frame())
    row = mse[(mse.tomography == "4D") & (mse.column == "r_product") & (mse.scope == "all Θ≥3")].iloc[0]
    assert row.mse == pytest.approx(0.01) and row.tests == row.of == 48  # the order-3 and -4 tests of 3⁴: 32 + 16


def test_a_frame_missing_columns_is_named(tmp_path):
    with pytest.raises(ValueError, match="q_true"):
        tf.plot_quality_vs_severity(per_test_frame(with_quality=False), tmp_path / "x.png")
    with pytest.raises(ValueError, match="empty"):
        tf.plot_queries(queries_frame().iloc[:0], tmp_path / "x.png")


def test_draw_all_writes_what_it_has_and_names_what_is_missing(tmp_path, capsys):
    assert tf.draw_all(tmp_path, tmp_path / "figures") == []
    assert "python run.py stage=study" in capsys.readouterr().out
    study = tmp_path / "tables" / "testifai" / "mnist5k"
    study.mkdir(parents=True)
    per_test_frame(with_quality=False).to_csv(study / "per_test_errors.csv", index=False)
    queries_frame().to_csv(study / "queries.csv", index=False)
    out = tf.draw_all(tmp_path, tmp_path / "figures")
    names = sorted(p.name for p, _ in out)
    assert names == [
        "testifai_mnist5k_estimates.png",
        "testifai_mnist5k_per_test_errors.png",
        "testifai_mnist5k_queries.png",
        "testifai_mnist5k_r_distribution.png",
    ]
    for path, sentence in out:
        check_png(path)
        assert sentence.startswith("mnist5k: ")
    printed = capsys.readouterr().out
    assert "ordered_vs_random.csv" in printed and "inferences.csv" in printed
    assert "tomography.quality=kid" in printed and printed.count("python run.py stage=study") == 5
