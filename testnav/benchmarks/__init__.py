"""Benchmarks: data D, a model, n perturbation families × ℓ levels, ψ and fidelity metrics.

One benchmark per module, instantiated from conf/benchmark/*.yaml. The ground-truth pass
(testnav.groundtruth.compute) only needs what `VisionBenchmark` exposes, so a new image benchmark
implements `load()` and nothing else.
"""
