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
    """θ named by family and level, the level's parameter in brackets where the family knows it."""
    theta = [int(t) for t in theta]
    names = family_names(families, len(theta))
    parts = []
    for i, level in enumerate(theta):
        if level:
            fam = None if families is None else families[i]
            label = fam.level_label(level) if fam is not None and hasattr(fam, "level_label") else ""
            parts.append(f"{names[i]}={level}" + (f" ({label})" if label else ""))
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
    as a name this module wrote, brackets and all), or as the levels (2, 0, 1); checked against
    the families and the lattice's `levels`."""
    names = family_names(families)
    if isinstance(config, str):
        text = config.strip()
        pairs = [] if text.lower() in ("", CLEAN, "none") else PAIR.findall(text)
        rest = "" if not text or text.lower() in (CLEAN, "none") else PAIR.sub("", re.sub(r"\([^)]*\)", "", text))
        if re.sub(r"[\s,·&;]", "", rest) or (text and text.lower() not in (CLEAN, "none") and not pairs):
            raise UserError(
                f"configuration {config!r}: write it as family=level pairs, e.g. '{names[0]}=2,{names[-1]}=1' "
                f"(families: {', '.join(names)})"
            )
        config = pairs
    elif isinstance(config, dict):
        config = list(config.items())
    elif isinstance(config, (tuple, list, np.ndarray)) and all(not isinstance(v, (tuple, list)) for v in config):
        if len(config) != len(names):
            raise UserError(f"configuration {tuple(config)}: {len(config)} levels for {len(names)} families")
        config = list(zip(names, config))
    else:
        raise UserError(
            f"configuration {config!r}: give {{'family': level, …}}, 'family=level,…' or one level per family"
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
        if not ok or not 0 <= value < levels:
            raise UserError(f"configuration: {name}={level} (valid levels: 0..{levels - 1})")
        theta[names.index(name)] = value
    return tuple(theta)
