"""Configurations as a person reads and writes them: by family and level, with the level's parameter.

    config_name((2, 0, 1), families)   → "gaussian_blur=2 (σ 1) · jpeg=1 (q 80)"
    parse_config("gaussian_blur=2,jpeg=1", families, levels) → (2, 0, 1)

Families at level 0 (the identity) are left out; θ = 0 is "clean". Without families (a replay on
an external table) a configuration is named by position, "t1=2 · t3=1". The t1..tn columns of
the trace and the ranked list stay as they are (the table contract); `with_names` adds a
`configuration` column beside them.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..errors import UserError
from .severity import level_of, severity_of, tested

SEP = " · "
CLEAN = "clean"
COLUMN = "configuration"
PAIR = re.compile(r"([A-Za-z_][\w\-]*)\s*=\s*([^\s,·&;()]+)")


def family_names(families, n: int | None = None) -> list[str]:
    """The names of `families` (Family objects or names), or t1..tn without them."""
    if families is None:
        return [f"t{i + 1}" for i in range(int(n or 0))]
    return [f if isinstance(f, str) else f.name for f in families]


def own_name(model) -> str:
    """The name a person gave the model: a bound method's owner's class (`clf.predict_proba` →
    LogisticRegression), a function's own name, a partial's function's, else the object's class;
    testnav's wrappers around a prediction function (Predicting) and a module (Hooked) are looked
    through, so a report never names them."""
    for _ in range(8):
        if type(model).__module__.startswith("testnav.models.") and hasattr(model, "predict"):
            model = model.predict
        elif type(model).__name__ == "Hooked" and hasattr(model, "net"):
            model = model.net
        elif hasattr(model, "func") and callable(model.func):  # functools.partial
            model = model.func
        else:
            break
    owner = getattr(model, "__self__", None)
    if owner is not None and not isinstance(owner, type(re)):  # a bound method, not a module's function
        return type(owner).__name__
    name = getattr(model, "__name__", None)
    if isinstance(name, str) and name.isidentifier():
        return name
    return type(model).__name__


def config_name(theta, families=None) -> str:
    """θ named by family and severity (the entry of the family's table a level applies, the same whatever
    `levels=` picked), the parameter in brackets where the family knows it."""
    theta = [int(t) for t in theta]
    names = family_names(families, len(theta))
    parts = []
    for i, level in enumerate(theta):
        if level:
            fam = None if families is None else families[i]
            label = fam.level_label(level) if fam is not None and hasattr(fam, "level_label") else ""
            shown = level if fam is None or isinstance(fam, str) else severity_of(fam, level)
            parts.append(f"{names[i]}={shown}" + (f" ({label})" if label else ""))
    return SEP.join(parts) or CLEAN


def level_columns(df: pd.DataFrame) -> list[str]:
    """The t1..tn columns of a trace, ranked list or table, in order."""
    cols = [c for c in df.columns if isinstance(c, str) and re.fullmatch(r"t\d+", c)]
    return sorted(cols, key=lambda c: int(c[1:]))


def with_names(df: pd.DataFrame, families=None) -> pd.DataFrame:
    """`df` with a `configuration` column right after its t1..tn columns (replaced if there)."""
    cols = level_columns(df)
    out = df.drop(columns=[COLUMN], errors="ignore")
    names = [config_name(row, families) for row in out[cols].to_numpy(np.int64)] if len(out) else []
    out.insert(list(out.columns).index(cols[-1]) + 1 if cols else 0, COLUMN, names)
    return out


def parse_config(config, families, levels: int) -> tuple[int, ...]:
    """A configuration given as {"gaussian_blur": 2, "jpeg": 1}, as "gaussian_blur=2,jpeg=1" (or
    as a name this module wrote, brackets and all), each a severity of the family's table that the
    lattice tested (0: the identity), or as θ itself, one lattice level per family (2, 0, 1), as the
    tables' t1..tn columns hold it; the lattice's levels θ. Families given by name only (a replay's)
    have severities equal to their levels."""
    names = family_names(families)
    if isinstance(config, str):
        text = config.strip()
        pairs = [] if text.lower() in ("", CLEAN, "none") else PAIR.findall(text)
        rest = "" if not text or text.lower() in (CLEAN, "none") else PAIR.sub("", re.sub(r"\([^)]*\)", "", text))
        if re.sub(r"[\s,·&;]", "", rest) or (text and text.lower() not in (CLEAN, "none") and not pairs):
            raise UserError(
                f"configuration {config!r}: write it as family=severity pairs, e.g. '{names[0]}=2,{names[-1]}=1' "
                f"(families: {', '.join(names)})"
            )
        config = pairs
    elif isinstance(config, dict):
        config = list(config.items())
    elif isinstance(config, (tuple, list, np.ndarray)) and all(not isinstance(v, (tuple, list)) for v in config):
        if len(config) != len(names):
            raise UserError(f"configuration {tuple(config)}: {len(config)} levels for {len(names)} families")
        bad = [int(t) for t in config if not 0 <= int(t) < levels or float(t) != int(t)]
        if bad:
            raise UserError(f"configuration {tuple(config)}: the lattice's levels θ, each in 0..{levels - 1}")
        return tuple(int(t) for t in config)  # θ as the tables' t1..tn columns hold it
    else:
        raise UserError(
            f"configuration {config!r}: give {{'family': severity, …}}, 'family=severity,…' or θ (one level per family)"
        )
    theta = [0] * len(names)
    seen = set()
    for name, level in config:
        if name not in names:
            raise UserError(f"configuration: unknown family {name!r} (valid: {', '.join(names)})")
        if name in seen:
            raise UserError(f"configuration: family {name} is given twice")
        seen.add(name)
        try:
            value = int(str(level)) if isinstance(level, str) else int(level)
            ok = float(level) == value
        except (TypeError, ValueError):
            ok = False
        fam = families[names.index(name)]
        sev = tested(fam, levels)
        if not ok or (value != 0 and value not in sev):
            raise UserError(
                f"configuration: {name}={level} (tested severities: {', '.join(map(str, sev))}; 0: the identity)"
            )
        theta[names.index(name)] = level_of(fam, value, levels)
    return tuple(theta)
