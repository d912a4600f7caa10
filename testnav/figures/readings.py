"""One sentence per language or code benchmark: which reading of ReCode / TextAttack made its numbers.

The readings are the families' `describe()`, the task settings and the metric settings that the
ground-truth table's meta records; a table written before a setting existed says so instead of
guessing. For QQP the sentence also reports what the contraction family alone does at its highest
level, read from the table itself: TextAttack's contractions need two-word expansions ("do not",
"I am") that QQP questions rarely contain, so that family is nearly a no-op there.
"""

from __future__ import annotations

NO_CHANGE = {"chrf": 100.0, "bertf1": 1.0}


def _family(meta, part: str):
    return [f for f in meta.get("families", []) if part in f.get("class", "")]


def _layer(meta) -> str:
    bert = (meta.get("metric_settings") or {}).get("bertf1")
    if not bert:
        return "BERT-F1 layer not recorded"
    n = bert.get("num_layers")
    return "BERT-F1 on the last layer (TorchMetrics' default)" if n is None else f"BERT-F1 on layer {n}"


def code_sentence(benchmark: str, meta: dict) -> str:
    masked = [f for f in _family(meta, "code_") if "protected" in f]
    prot = {f["protected"] for f in masked}
    words = (
        "ReCode's protected words (tree-sitter identifiers of prompt + solution, TYPE_VARS)"
        if prot == {"recode"}
        else "the harness's narrower ast identifiers as protected words"
        if prot == {"ast"}
        else "protected words not recorded (an older table: the ast identifiers)"
        if not prot
        else f"mixed protected-word readings {sorted(prot)}"
    )
    nl = next((f.get("where") for f in _family(meta, "code_newline")), None)
    newline = {
        "afterdoc": "newline = ReCode's new_line_afterdoc, n times",
        "docstring": "newline inside the docstring (the harness's reading, not ReCode's)",
    }.get(nl, "newline reading not recorded (an older table: inside the docstring)")
    task = meta.get("task") or {}
    decoding = {
        "recode": f"ReCode's decoding and filter_valid_code (max_length {task.get('max_length')})",
        "codex": f"Codex stop sequences ({task.get('max_new_tokens')} new tokens)",
    }.get(task.get("reading"), "decoding reading not recorded (an older table: Codex stop sequences)")
    return f"{benchmark}: {words}; {newline}; {decoding}; {_layer(meta)}."


def qqp_sentence(benchmark: str, meta: dict, gt) -> str:
    swaps = [f for f in meta.get("families", []) if f.get("name") in ("synonym", "typo")]
    flags = {f.get("stopwords") for f in swaps}
    stop = (
        "synonym and typo under TextAttack's RepeatModification and StopwordModification (NLTK's 179 English stopwords)"
        if flags and None not in flags and False not in flags
        else "synonym and typo under RepeatModification only (stopwords editable, unlike TextAttack)"
        if flags == {False}
        else "stopword constraint not recorded (an older table: RepeatModification only)"
    )
    out = f"{benchmark}: {stop}; {_layer(meta)}."
    names = [f.get("name") for f in meta.get("families", [])]
    if "contraction" in names and gt is not None and len(gt.points):
        i = names.index("contraction")
        cols = [f"t{j + 1}" for j in range(len(names))]
        top = int(gt.points[cols[i]].max())
        others = [c for j, c in enumerate(cols) if j != i]
        row = gt.points[(gt.points[cols[i]] == top) & (gt.points[others] == 0).all(axis=1)]
        if len(row):
            r = row.iloc[0]
            base = NO_CHANGE.get(gt.fidelity)
            rho = f"{gt.fidelity} {r['rho_raw']:.4g}" + (f" (unchanged = {base:g})" if base is not None else "")
            out += f" Contraction alone at level {top} gives δ = {r['delta_raw']:.4g} and {rho}"
            if base is not None and r["rho_raw"] >= 0.99 * base:
                out += ": it is nearly a no-op on QQP, whose questions rarely contain TextAttack's two-word expansions."
            else:
                out += "."
    return out


def reading_sentences(res) -> list[str]:
    """One sentence per benchmark with a ground truth whose families are text or code families."""
    out, seen = [], set()
    for (b, _f), gt in sorted(res.truths.items()):
        if b in seen:
            continue
        classes = " ".join(f.get("class", "") for f in gt.meta.get("families", []))
        if ".code_" in classes:
            out.append(code_sentence(b, gt.meta))
        elif ".text_" in classes:
            out.append(qqp_sentence(b, gt.meta, gt))
        else:
            continue
        seen.add(b)
    return out
