import numpy as np
import pandas as pd

from testnav.core.lattice import Lattice
from testnav.core.pareto import nondominated_mask
from testnav.core.trace import budget_curve, make_trace, ranked_list, unique_curve


def test_trace_curves_on_both_axes_and_ranked_list():
    lat = Lattice(1, 6)
    proposals = np.array([3, 1, 3, 5, 1, 2])
    values = np.array([[0.3, 0.7], [0.1, 0.9], [0.3, 0.7], [0.5, 0.2], [0.1, 0.9], [0.2, 0.1]])
    trace = make_trace(proposals, lat, values, pstar=np.array([1, 3, 5]))
    assert trace.new.tolist() == [True, True, False, True, False, True]
    assert trace.unique.tolist() == [1, 2, 2, 3, 3, 4]
    assert np.allclose(budget_curve(trace, 3), [1 / 3, 2 / 3, 2 / 3, 1, 1, 1])
    assert np.allclose(unique_curve(trace, lat, np.array([1, 3, 5])), [1 / 3, 2 / 3, 1, 1, 1, 1])
    r = ranked_list(trace, 1)
    assert len(r) == 4 and r["rank"].is_monotonic_increasing
    front = set(r.loc[r["rank"] == 0, "t1"])
    firsts = trace[trace.new]
    assert front == set(firsts.t1[nondominated_mask(firsts.delta, firsts.rho)])
    assert r.loc[r["rank"] == 0, "crowding"].iloc[0] == np.inf


def test_live_trace_has_no_pstar():
    t = make_trace(np.array([0, 1]), Lattice(1, 3), np.zeros((2, 2)), None)
    assert t.in_pstar.isna().all()
    assert isinstance(t, pd.DataFrame)
