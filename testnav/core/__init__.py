"""The core data types and the small pure helpers every layer shares: the lattice Θ, Pareto
dominance, Recall@P*, traces, ground-truth tables and the oracle seam, cache keys and atomic
writes, exact rounding, timing and memory. Nothing here imports torch models, Hydra or the CLI."""
