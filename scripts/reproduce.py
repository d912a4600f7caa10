"""`make reproduce`: regenerate every committed mnist5k number from scratch and compare, line by line.

    python scripts/reproduce.py            # regenerate under results/reproduce/, print committed vs regenerated, exit 1 on a difference
    python scripts/reproduce.py --update   # after an intended change: copy the regenerated tables, figures,
                                           # report and goldens over the committed ones

Regenerated, in a scratch folder with its own cache (nothing under results/ is read as input):
the full mnist5k ground truth (checked against results/golden/), TestifAI's studies
(`stage=study`), the minimal sweep (10 seeds), Tables 2–3, the figures, `make run`'s numbers, the
report and the claims ledger (results/claims.md). The §3.3 grid's tables and the scaling and stopping
studies' (scale.csv, stopping_study.csv) are read as committed (`python run.py experiment=testnav_grid`,
scripts/scale_study.py and scripts/stopping_study.py regenerate them).
What must be identical and what only within a tolerance, and why: docs/reproducibility.md.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from testnav.pipeline import golden  # noqa: E402

TOL = 1e-6  # for numbers a float build may move in the last digits (TestifAI's forest, ρ); see the docs
COMMITTED = ROOT / "results"
TABLES = ["default_run.json", "table2.csv", "table2_all.csv", "table3.csv"]
GRID = ["grid_ranking.csv", "grid_selection.json"]  # read by the report and the claims ledger
# the report's scaling and stopping sections, drawn from tables that scripts/scale_study.py and
# scripts/stopping_study.py make (hours, not part of this check): inputs here, as committed
STUDIES = ["scale.csv", "stopping_study.csv"]


def step(label: str, cmd: list[str]) -> None:
    t0 = time.perf_counter()
    print(f"reproduce: {label} …", flush=True)
    done = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode:
        sys.stderr.write(done.stderr[-3000:])
        raise SystemExit(f"reproduce: {label} failed (exit {done.returncode})")
    print(f"reproduce: {label} done in {time.perf_counter() - t0:.0f} s", flush=True)


def regenerate(scratch: Path, seeds: int, cache: Path) -> list[tuple[str, str, str, str]]:
    """Build everything under `scratch`; return the golden comparison rows."""
    rows = []
    for scale in golden.SCALES:
        t0 = time.perf_counter()
        print(f"reproduce: ground truth {scale} …", flush=True)
        # the reduced scale in a cache of its own: the report reads every mnist5k table it finds in
        # <results>/cache and names the ones its runs did not read
        table = golden.groundtruth(scale, cache if scale == "mnist5k" else scratch / f"cache-{scale}", progress=True)
        print(f"reproduce: ground truth {scale} done in {time.perf_counter() - t0:.0f} s", flush=True)
        stem = golden.GOLDEN_DIR / scale
        problems = golden.compare(table, stem)
        want = json.loads(stem.with_suffix(".json").read_text())["fronts"]
        for metric, have in golden.fronts(table).items():
            w = want.get(metric, {})
            rows.append(
                (
                    f"{scale} · P* under {metric}",
                    f"{w.get('pstar_size')} {tuple(w.get('pstar_orders', []))}",
                    f"{have['pstar_size']} {tuple(have['pstar_orders'])}",
                    "identical" if w.get("pstar") == have["pstar"] else "DIFFERENT",
                )
            )
        rows.append(
            (
                f"{scale} · δ and ρ of all {len(table):,} θ",
                "results/golden/" + stem.name + ".csv",
                f"{len(problems)} difference(s)",
                "identical (δ exact, ρ ± 1e-6)" if not problems else "DIFFERENT",
            )
        )
        for p in problems[:20]:
            print(f"  {scale}: {p}")
        golden.write(
            table,
            scratch / "golden" / scale,
            {
                "scale": scale,
                "overrides": list(golden.SCALES[scale]),
                "made_by": f"python scripts/golden.py write --scale {scale}",
            },
        )
    py = sys.executable
    step(
        "TestifAI studies (stage=study)",
        [
            py,
            str(ROOT / "run.py"),
            "stage=study",
            "progress=false",
            f"cache_dir={cache}",
            f"tomography.out={scratch / 'tables' / 'testifai'}",
            f"hydra.run.dir={scratch / 'study_run'}",
        ],
    )
    for name in GRID + STUDIES:  # inputs here, as committed (the grid: `python run.py experiment=testnav_grid`)
        (scratch / "tables").mkdir(parents=True, exist_ok=True)
        shutil.copy2(COMMITTED / "tables" / name, scratch / "tables" / name)
    step(
        f"minimal sweep, tables, figures and report (scripts/figures.py, {seeds} seeds)",
        [py, str(ROOT / "scripts" / "figures.py"), "--results", str(scratch), "--sweep", "--seeds", str(seeds)],
    )
    return rows


def flat(path: Path) -> dict:
    """A table or JSON as {cell name: value}, for a cell-by-cell comparison. Rows are named by
    their first column (and the second where the first repeats, as in Table 3)."""
    if path.suffix == ".json":
        return json.loads(path.read_text())
    df = pd.read_csv(path)
    n = next((k for k in range(1, len(df.columns)) if not df.iloc[:, :k].duplicated().any()), 1)
    keys = list(df.columns[:n])  # as many leading columns as name each row once (Table 3: two; the grid: three)
    return {
        f"{' · '.join(str(r[k]) for k in keys)} | {c}": r[c]
        for _, r in df.iterrows()
        for c in df.columns
        if c not in keys
    }


def same(a, b) -> str:
    if a == b or (isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b)):
        return "identical"
    try:
        if abs(float(a) - float(b)) <= TOL:
            return f"within {TOL:g}"
    except (TypeError, ValueError):
        pass
    return "DIFFERENT"


def scaled_gap(a: np.ndarray, b: np.ndarray) -> float:
    """Largest |a − b| over the columns, each in units of its scale max(1, max |a|): absolute for
    rates and errors in [0, 1], relative for raw quality (KID in the thousands), which a ground
    truth reproduces only to its last float32 digits, as ρ is compared normalised in the goldens."""
    scale = np.maximum(1.0, np.nanmax(np.abs(a), axis=0, initial=0.0))
    with np.errstate(invalid="ignore"):
        return float(np.nanmax(np.abs(a - b) / scale, initial=0.0))


def compare(scratch: Path) -> list[tuple[str, str, str, str]]:
    rows = []
    for name in TABLES:
        old, new = COMMITTED / "tables" / name, scratch / "tables" / name
        if not old.exists() or not new.exists():
            rows.append(
                (
                    f"tables/{name}",
                    "present" if old.exists() else "missing",
                    "present" if new.exists() else "missing",
                    "DIFFERENT",
                )
            )
            continue
        a, b = flat(old), flat(new)
        for k in sorted(set(a) | set(b), key=lambda k: (list(a).index(k) if k in a else len(a), k)):
            rows.append((f"{name} · {k}", str(a.get(k, "—")), str(b.get(k, "—")), same(a.get(k), b.get(k))))
    for old in sorted((COMMITTED / "tables" / "testifai").rglob("*.csv")):
        rel = old.relative_to(COMMITTED / "tables")
        new = scratch / "tables" / rel
        if not new.exists():
            rows.append((str(rel), "present", "missing", "DIFFERENT"))
            continue
        a, b = pd.read_csv(old), pd.read_csv(new)
        if a.shape != b.shape or list(a.columns) != list(b.columns):
            rows.append((str(rel), f"{a.shape}", f"{b.shape}", "DIFFERENT"))
            continue
        num = a.select_dtypes("number").columns
        gap = scaled_gap(a[num].to_numpy(float), b[num].to_numpy(float)) if len(num) else 0.0
        text_same = a.drop(columns=num).equals(b.drop(columns=num))
        verdict = (
            "identical" if gap == 0 and text_same else f"within {TOL:g}" if gap <= TOL and text_same else "DIFFERENT"
        )
        rows.append((f"{rel} ({a.shape[0]} rows × {a.shape[1]})", "committed", f"largest gap {gap:.2g}", verdict))
    for name in ("report.md", "claims.md"):
        old, new = COMMITTED / name, scratch / name
        rows.append(
            (
                f"{name} (every sentence and number)"
                if name == "report.md"
                else f"{name} (every claim, value and verdict)",
                "committed" if old.exists() else "missing",
                "regenerated" if new.exists() else "missing",
                "identical" if old.exists() and new.exists() and old.read_text() == new.read_text() else "DIFFERENT",
            )
        )
    pngs = sorted(p.name for p in (COMMITTED / "figures").glob("*.png"))
    alike = sum(
        (scratch / "figures" / p).exists()
        and filecmp.cmp(COMMITTED / "figures" / p, scratch / "figures" / p, shallow=False)
        for p in pngs
    )
    rows.append(
        (
            f"figures/*.png ({len(pngs)})",
            "committed",
            f"{alike} byte-identical",
            "identical" if alike == len(pngs) else "drawing differs (not a failure)",
        )
    )
    return rows


def update(scratch: Path) -> None:
    for sub in ("figures", "tables/testifai"):
        shutil.copytree(scratch / sub, COMMITTED / sub, dirs_exist_ok=True)
    for p in [*(scratch / "tables").glob("table[23]*"), scratch / "tables" / "default_run.json"]:
        shutil.copy2(p, COMMITTED / "tables" / p.name)
    shutil.copy2(scratch / "report.md", COMMITTED / "report.md")
    shutil.copy2(scratch / "claims.md", COMMITTED / "claims.md")
    for p in (scratch / "golden").iterdir():
        shutil.copy2(p, golden.GOLDEN_DIR / p.name)
    print("reproduce: copied the regenerated figures, tables, report and goldens into results/")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scratch", default=str(COMMITTED / "reproduce"), help="where to regenerate (emptied first)")
    ap.add_argument("--seeds", type=int, default=10, help="seeds of the minimal sweep (as make figures)")
    ap.add_argument("--update", action="store_true", help="copy the regenerated results over the committed ones")
    ap.add_argument("--cache", help="reuse this cache's ground truths (default: a fresh one in the scratch folder)")
    args = ap.parse_args(argv)
    scratch = Path(args.scratch).resolve()
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    t0 = time.perf_counter()
    cache = scratch / "cache"
    if args.cache:  # scripts/figures.py reads <results>/cache: point it at the reused one
        cache.symlink_to(Path(args.cache).resolve(), target_is_directory=True)
    rows = regenerate(scratch, args.seeds, cache) + compare(scratch)
    width = max(len(r[0]) for r in rows)
    print(f"\n{'what':<{width}}  {'committed':>22}  {'regenerated':>22}  verdict")
    for what, old, new, verdict in rows:
        print(f"{what:<{width}}  {old:>22}  {new:>22}  {verdict}")
    bad = [r for r in rows if r[3] == "DIFFERENT"]
    print(
        f"\nreproduce: {len(rows)} lines, {len(bad)} different, in {time.perf_counter() - t0:.0f} s: "
        f"{'PASS' if not bad else 'FAIL'}"
    )
    if args.update:
        update(scratch)
        return 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
