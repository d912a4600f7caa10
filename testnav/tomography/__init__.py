"""TestifAI: partial model tomography (measure Θ≤2 with early stopping, predict the rest).

executor.py      early stopping over per-input outcomes; live (the model) or replayed (a ground truth)
surrogate.py     the random forest of §4.3 (robustness) and its regressor twin (quality q_σ, §6)
independence.py  the χ² test of §3 and the product-of-marginals estimate
query.py         the Boolean query language of §4.1.2 and R(Q)
studies.py       the paper's §5 studies on a benchmark with a ground truth
"""
