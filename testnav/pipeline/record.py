"""A run you can keep: what a comparison of two versions of a model needs, saved and read back.

    record = tester.record()           # what the Tester measured (its live searches, its ground truth)
    record.save("runs/v1")             # runs/v1/record.parquet, then runs/v1/record.json
    base = RunRecord.load("runs/v1")   # a directory holding record.json, or record.json itself

Per measured configuration θ (the clean set θ = 0 always among them): its levels, the accuracy ψ
and the per-input outcomes (which inputs of D the model got right), and ρ where the fidelity
metric was scored. Beside them what makes two records comparable: the families (names, classes,
parameters, level labels), the levels, the perturbation seed, and digests of the model and of the
data. `record.parquet` holds one row per θ (`t1..tn`, `psi`, `rho`, `correct`: N booleans);
`record.json` the rest and the parquet file's sha256. Both are written atomically, the JSON last,
so a record that has its JSON is whole; `load` refuses a parquet file that is not the one its
JSON names.

Only measurements over all of D are kept: a live search's (its memo), a ground truth's, the
comparison's own. A tomography's early-stopped tests saw part of D and are left out.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.cache import atomic_path, file_digest, stable_hash, write_json_atomic
from ..core.naming import config_name
from ..errors import UserError

FORMAT = 1
JSON, PARQUET = "record.json", "record.parquet"


class NamedFamily:
    """A family as a record keeps it: its name and how each level reads ("σ 1.5"), for config_name."""

    def __init__(self, name: str, labels):
        self.name, self.labels = name, list(labels)

    def level_label(self, level: int) -> str:
        return "identity" if int(level) == 0 else self.labels[int(level) - 1]


def family_entries(benchmark) -> list[dict]:
    """The benchmark's families as a record keeps them (JSON-plain, so a loaded record compares equal)."""
    out = []
    for f in benchmark.families:
        entry = dict(f.describe())
        entry["labels"] = [
            f.level_label(k) if hasattr(f, "level_label") else str(k) for k in range(1, benchmark.levels)
        ]
        out.append(entry)
    return json.loads(json.dumps(out, default=str))


def data_digest(benchmark, loaded) -> str:
    """Identifies D: the benchmark's description of its data (a file listing, a subset's settings,
    the tensors' sha256), the number of inputs and the labels' bytes."""
    labels = np.asarray(loaded.labels.detach().cpu().numpy() if hasattr(loaded.labels, "detach") else loaded.labels)
    return stable_hash(
        {
            "data": benchmark.data_description(),
            "inputs": int(len(labels)),
            "labels": hashlib.sha256(labels.astype(np.int64).tobytes()).hexdigest(),
        }
    )


@dataclass
class RunRecord:
    """One model's measurements on one data set: `thetas` (K, n) levels, `correct` (K, N) per-input
    outcomes, `rho` (K,) ρ (NaN where not scored), and what identifies the run."""

    benchmark: str
    families: list
    levels: int
    perturb_seed: int
    model: str
    data: str
    fidelity: str | None
    thetas: np.ndarray
    correct: np.ndarray
    rho: np.ndarray
    sources: list = field(default_factory=list)
    created: str = ""
    name: str = ""

    def __post_init__(self):
        self.thetas = np.asarray(self.thetas, dtype=np.int64).reshape(-1, len(self.families))
        self.correct = np.asarray(self.correct, dtype=bool).reshape(len(self.thetas), -1)
        self.rho = np.asarray(self.rho, dtype=float).reshape(len(self.thetas))

    # --- what it holds ----------------------------------------------------------------------
    @property
    def digest(self) -> str:
        """What the record holds, hashed: its model, data and fidelity, and each configuration's levels,
        per-input outcomes and ρ (two records with one digest compare alike)."""
        h = hashlib.sha256(json.dumps([self.model, self.data, self.fidelity, self.families]).encode())
        for part in (self.thetas, np.packbits(self.correct, axis=1), self.rho):
            h.update(np.ascontiguousarray(part).tobytes())
        return h.hexdigest()[:16]

    @property
    def inputs(self) -> int:
        return int(self.correct.shape[1])

    @property
    def family_names(self) -> list[str]:
        return [f["name"] for f in self.families]

    @property
    def named_families(self) -> list[NamedFamily]:
        return [NamedFamily(f["name"], f.get("labels", [])) for f in self.families]

    @property
    def psi(self) -> np.ndarray:
        return self.correct.mean(axis=1) if self.inputs else np.zeros(len(self.thetas))

    @property
    def psi_clean(self) -> float:
        clean = np.flatnonzero(~self.thetas.any(axis=1))
        return float(self.psi[clean[0]]) if len(clean) else float("nan")

    def index(self) -> dict[tuple, int]:
        """θ (a tuple of levels) → its row."""
        return {tuple(map(int, t)): i for i, t in enumerate(self.thetas)}

    @property
    def table(self) -> pd.DataFrame:
        """One row per θ: t1..tn, `configuration` (named), `psi`, `delta` (ψ_clean − ψ, at least 0), `rho`."""
        df = pd.DataFrame(self.thetas, columns=[f"t{i + 1}" for i in range(len(self.families))])
        fams = self.named_families
        df["configuration"] = [config_name(t, fams) for t in self.thetas]
        df["psi"] = self.psi
        df["delta"] = np.maximum(self.psi_clean - df["psi"], 0.0)
        df["rho"] = self.rho
        return df

    def __len__(self) -> int:
        return len(self.thetas)

    def __repr__(self) -> str:
        return (
            f"RunRecord({self.benchmark}: {len(self)} configurations of {self.levels ** len(self.families):,}, "
            f"{self.inputs} inputs, clean accuracy {self.psi_clean:.3f}, model {self.model}, data {self.data})"
        )

    # --- disk -------------------------------------------------------------------------------
    def save(self, path) -> Path:
        """Write `path`/record.parquet then `path`/record.json (atomically, the JSON last); returns the directory."""
        out = Path(path)
        if out.name == JSON:
            out = out.parent
        if out.exists() and not out.is_dir():
            raise UserError(f"record path {path}: a file is there; give a directory (it will hold {JSON}, {PARQUET})")
        out.mkdir(parents=True, exist_ok=True)
        df = pd.DataFrame(self.thetas, columns=[f"t{i + 1}" for i in range(len(self.families))])
        df["psi"], df["rho"] = self.psi, self.rho
        df["correct"] = [row.tolist() for row in self.correct]
        with atomic_path(out / PARQUET) as tmp:
            df.to_parquet(tmp, index=False)
        meta = {
            "format": FORMAT,
            "name": self.name,
            "benchmark": self.benchmark,
            "families": self.families,
            "levels": int(self.levels),
            "perturb_seed": int(self.perturb_seed),
            "model": self.model,
            "data": self.data,
            "inputs": self.inputs,
            "fidelity": self.fidelity,
            "psi_clean": self.psi_clean,
            "configurations": len(self),
            "sources": list(self.sources),
            "created": self.created or now(),
            "parquet_sha256": file_digest(out / PARQUET),
        }
        write_json_atomic(out / JSON, meta)
        return out

    @classmethod
    def load(cls, path, key: str = "baseline") -> RunRecord:
        """A record as `save` wrote it: `path` is its directory (a run directory of stage=live or
        stage=compare, or what Tester.save wrote) or its record.json. `key` names the setting in errors."""
        p = Path(path)
        meta_path = p if p.name == JSON else p / JSON
        if not meta_path.is_file():
            what = "no such directory" if not p.exists() else f"no {JSON} there"
            raise UserError(
                f"{key}={path}: {what} (a run directory of stage=live or stage=compare, or a directory Tester.save wrote)"
            )
        meta = json.loads(meta_path.read_text())
        if meta.get("format") != FORMAT:
            raise UserError(f"{key}={path}: record format {meta.get('format')} (valid: {FORMAT})")
        table = meta_path.parent / PARQUET
        if not table.is_file() or file_digest(table) != meta.get("parquet_sha256"):
            why = "is missing" if not table.is_file() else "is not the one its record.json names (sha256 differs)"
            raise UserError(f"{key}={path}: {PARQUET} {why}; save the run again")
        df = pd.read_parquet(table)
        n = len(meta["families"])
        correct = np.stack(list(df["correct"])).astype(bool) if len(df) else np.zeros((0, meta["inputs"]), bool)
        return cls(
            benchmark=meta["benchmark"],
            families=meta["families"],
            levels=int(meta["levels"]),
            perturb_seed=int(meta["perturb_seed"]),
            model=meta["model"],
            data=meta["data"],
            fidelity=meta.get("fidelity"),
            thetas=df[[f"t{i + 1}" for i in range(n)]].to_numpy(np.int64),
            correct=correct,
            rho=df["rho"].to_numpy(float),
            sources=meta.get("sources", []),
            created=meta.get("created", ""),
            name=meta.get("name", ""),
        )


def now() -> str:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()


def record_of(session, fidelity: str | None = None, groundtruth: Path | None = None, name: str = "") -> RunRecord:
    """What an opened session measured over all of D: the clean set, every live oracle's memo (ρ from
    the oracle of `fidelity`, else any) and, when given, a ground-truth table (ρ from its `fidelity`
    column)."""
    from ..fidelity import sign as rho_sign
    from ..groundtruth.compute import outcomes as table_outcomes

    benchmark, loaded = session.benchmark, session.loaded
    lattice = benchmark.lattice
    clean = session.clean
    rows: dict[tuple, tuple[np.ndarray, float]] = {}
    sources = []
    zero = (0,) * lattice.n
    clean_rho = None
    if fidelity and clean.get(fidelity) is not None:
        clean_rho = rho_sign(fidelity, benchmark.metrics) * float(clean[fidelity])
    rows[zero] = (np.asarray(clean["correct"], bool), np.nan if clean_rho is None else clean_rho)
    oracles = sorted(session.live_oracles.items(), key=lambda kv: kv[0] != fidelity)  # ρ's own oracle first
    for column, oracle in oracles:
        if oracle.outcomes:
            sources.append(f"live ({column})")
        for index, correct in oracle.outcomes.items():
            theta = tuple(map(int, lattice.theta(index)))
            rho = oracle.memo[index]["rho"] if column == fidelity else np.nan
            if theta not in rows or (np.isnan(rows[theta][1]) and not np.isnan(rho)):
                rows[theta] = (np.asarray(correct, bool), float(rho))
    if groundtruth is not None:
        table = pd.read_parquet(groundtruth)
        out = table_outcomes(table)
        cols = [f"t{i + 1}" for i in range(lattice.n)]
        rho = (
            rho_sign(fidelity, benchmark.metrics) * table[fidelity].to_numpy(float)
            if fidelity and fidelity in table
            else np.full(len(table), np.nan)
        )
        for levels, correct, r in zip(table[cols].to_numpy(np.int64), out, rho):
            rows.setdefault(tuple(map(int, levels)), (correct, float(r)))
        sources.append("ground truth")
    thetas = sorted(rows)
    return RunRecord(
        benchmark=benchmark.name,
        families=family_entries(benchmark),
        levels=benchmark.levels,
        perturb_seed=int(getattr(benchmark, "perturb_seed", 0)),
        model=str(loaded.model_key),
        data=data_digest(benchmark, loaded),
        fidelity=fidelity,
        thetas=np.array(thetas, dtype=np.int64).reshape(len(thetas), lattice.n),
        correct=np.stack([rows[t][0] for t in thetas]),
        rho=np.array([rows[t][1] for t in thetas], dtype=float),
        sources=sources,
        created=now(),
        name=name or benchmark.name,
    )


def check_comparable(base: RunRecord, new: RunRecord, key: str = "baseline") -> None:
    """Refuse, in one line, a pair of records that a paired test cannot compare: other data, other
    families or levels, another perturbation seed."""
    if base.data != new.data or base.inputs != new.inputs:
        raise UserError(
            f"{key}: measured on other data ({base.inputs:,} inputs, digest {base.data}; this model's: "
            f"{new.inputs:,} inputs, digest {new.data}); a paired comparison needs the same inputs"
        )
    mine = [(f["name"], f.get("params")) for f in new.families]
    theirs = [(f["name"], f.get("params")) for f in base.families]
    if mine != theirs or base.levels != new.levels:
        raise UserError(
            f"{key}: families {', '.join(base.family_names)} at {base.levels} levels; this model's: "
            f"{', '.join(new.family_names)} at {new.levels} levels (a comparison needs the same families, "
            "severities and levels)"
        )
    if base.perturb_seed != new.perturb_seed:
        raise UserError(
            f"{key}: perturb_seed={base.perturb_seed}; this model's is {new.perturb_seed} (a comparison needs "
            "the same perturbed inputs)"
        )
