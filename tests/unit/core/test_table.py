import numpy as np
import pandas as pd
import pytest

from testnav.core.lattice import Lattice
from testnav.core.table import Objectives, minmax, validate_table
from testnav.errors import UserError


def full_table(n=2, levels=3, seed=0):
    lat = Lattice(n, levels)
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(lat.tuples, columns=[f"t{i + 1}" for i in range(n)])
    df["delta"] = rng.random(lat.size)
    df["rho"] = rng.random(lat.size)
    return df


def test_valid_table_any_row_order():
    df = full_table().sample(frac=1, random_state=1)
    obj = Objectives.from_table(df)
    assert obj.lattice == Lattice(2, 3)
    assert obj.delta.min() == 0 and obj.delta.max() == 1
    # rows come back in lattice order whatever the file order
    ref = full_table()
    assert np.allclose(obj.rho, minmax(ref["rho"].to_numpy()))


@pytest.mark.parametrize(
    "mutate, pattern",
    [
        (lambda d: d.drop(index=4), r"1 of 9 configurations missing \(first θ=\(1, 1\)\)"),
        (lambda d: pd.concat([d, d.iloc[[3]]]), r"θ=\(1, 0\) appears 2 times"),
        (
            lambda d: d.assign(rho=d.rho.where(d.index != 2, np.nan)),
            r"column rho has a non-finite value \(nan\) at θ=\(0, 2\)",
        ),
        (lambda d: d.assign(delta=d.delta.where(d.index != 0, np.inf)), r"column delta has a non-finite value \(inf\)"),
        (lambda d: d.drop(columns="rho"), r"missing column\(s\) rho"),
        (lambda d: d.rename(columns={"t1": "level1"}), r"need t1..tn"),
        (lambda d: d.iloc[0:0], r"table is empty"),
        (lambda d: d.assign(t1=d.t1 - 1), r"negative level -1"),
    ],
)
def test_bad_tables_are_named(mutate, pattern):
    with pytest.raises(UserError, match=pattern):
        validate_table(mutate(full_table()), ["delta", "rho"], "t.csv")


def test_constant_objective_normalises_to_zero():
    assert minmax(np.ones(4)).tolist() == [0, 0, 0, 0]
