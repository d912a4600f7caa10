"""Fidelity metrics φ(T_θ, D). One metric per module, instantiated from the benchmark YAML.

A metric is prepared once on the clean inputs (and the model, for feature-based metrics)
and then called on each perturbed set, returning one raw float per configuration. The
`fidelity=` config group only chooses which raw column becomes ρ and with what sign.
"""
