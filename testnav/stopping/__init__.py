"""The stopping machinery: the certificate that says when a search may stop (`certificate`), the
level surrogate it shares with TomoNav (`level_surrogate`, on `forest`), and candidate pools on
lattices too large to rank whole (`pool`)."""
