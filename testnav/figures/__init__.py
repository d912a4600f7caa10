"""Paper figures, tables and the report, rebuilt from whatever is under `results/`.

One concern per module, so each can be read (and tested) on its own:

* `loader`  — every run, trace and ground-truth table under `results/` as tidy frames,
  with a list of what is missing instead of an exception (partial sweeps are normal);
* `testnav_plots` — Figs. 1–8 of the TestNav paper from small frames (no file discovery);
* `tables`  — Table 2 (AUC-Recall with best/second marks) and Table 3 (P* by order);
* `examples` — the perturbed test input behind Figs. 5–6 (needs the benchmark's data);
* `reproduction` — `results/report.md`: every figure and table with one sentence and its number;
* `claims`  — `results/claims.md`: the claims of both papers that the tables can check, graded by stated
  rules (a package: the rules, and one registered function per claim);
* `protocol` — the report's sentences on seeds, engines and the §3.3 grid's selection;
* `testifai`, `severity` — TestifAI's figures from the study tables (Fig. 11 rebuilds images).

Every figure is drawn with testnav/plotstyle.py (Agg backend, fixed fonts and colours, one dpi, one
`save`, byte-stable PNGs), which the HTML reports (testnav/report/) share. `testnav figures`
(testnav/app/figures.py; `make figures`, scripts/figures.py) drives them.
"""
