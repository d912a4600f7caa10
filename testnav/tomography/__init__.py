"""TestifAI: partial model tomography (measure Θ≤2 with early stopping, predict the rest).

executor.py      low-order tests under the early-stopping rule (testnav/core/early_stopping.py), live (the
                 model) or replayed (a ground truth)
surrogate.py     the random forest of §4.3 (robustness) and its regressor twin (quality q_σ, §6)
independence.py  the χ² test of §3 and the product-of-marginals estimate
query.py         the Boolean query language of §4.1.2 and R(Q); QuerySpec, a query's settings
gate.py          R(Q)'s interval and the CI gate (answer, gate)
core.py          one tomography: Settings, build, from_groundtruth
studies.py       the paper's §5 studies on a benchmark with a ground truth

A benchmark's tomography is built through testnav/pipeline/tomography.py (Tester, the notebooks);
the stages that read the config, print and write files are testnav/app/tomography.py.
"""
