"""The page around the report's sections: its style and its one script, inline (no file, font or
library is fetched: the page is read offline, from a CI artifact or an e-mail attachment).

The script makes every `table.sortable` sortable by a click on a column's heading (numbers as
numbers, a cell's `data-v` when it has one); nothing else on the page needs it.
"""

from string import Template

STYLE = """
:root { --ink: #1d2733; --muted: #5d6b78; --line: #d9dee3; --teal: #0f8b8d; --bad: #b3261e; --good: #1b7a43; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1180px; padding: 24px 28px 60px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 8px; padding-top: 10px; border-top: 2px solid var(--line); }
h3 { font-size: 15px; margin: 22px 0 4px; }
p, li { max-width: 920px; }
.sub { color: var(--muted); margin: 0 0 16px; }
.verdict { border-left: 5px solid var(--teal); background: #eef7f7; padding: 10px 14px; margin: 14px 0; font-size: 15px; }
.verdict.fail { border-color: var(--bad); background: #fbeeed; }
.verdict.undecided { border-color: #b7791f; background: #fdf6e7; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(230px, 1fr)); gap: 6px 24px; margin: 8px 0; }
.fact b { display: block; font-size: 12px; color: var(--muted); font-weight: 500; }
table { border-collapse: collapse; margin: 8px 0 4px; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; user-select: none; white-space: nowrap; }
table.sortable th::after { content: " ⇅"; color: #aab3bb; font-size: 11px; }
table.sortable th[data-dir=asc]::after { content: " ▲"; color: var(--ink); }
table.sortable th[data-dir=desc]::after { content: " ▼"; color: var(--ink); }
.scroll { max-height: 420px; overflow: auto; border: 1px solid var(--line); display: inline-block; }
.scroll table { margin: 0; }
.scroll thead th { position: sticky; top: 0; background: #f6f8f9; }
img.fig { max-width: 100%; height: auto; }
.key { font-size: 13px; padding-left: 22px; }
.key li.within { color: #777; }
.strip { display: flex; flex-wrap: wrap; gap: 10px; margin: 8px 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 6px; font-size: 12px; }
.card.flip { border-color: var(--bad); box-shadow: 0 0 0 1px var(--bad) inset; }
.pair { display: flex; gap: 4px; }
.pair figure { margin: 0; text-align: center; color: var(--muted); font-size: 11px; }
.pair img { width: 84px; height: 84px; object-fit: contain; image-rendering: pixelated; background: #eee; display: block; }
.texts { display: grid; grid-template-columns: 1fr; gap: 8px; margin: 8px 0; max-width: 980px; }
.texts .card p { margin: 2px 0; }
.lbl { color: var(--muted); font-size: 11px; margin-right: 6px; }
del { background: #fbdcd9; color: #7a1b14; text-decoration: line-through; }
ins { background: #d8f1df; color: #0d4f28; text-decoration: none; font-weight: 600; }
.wrong { color: var(--bad); font-weight: 600; }
.right { color: var(--good); font-weight: 600; }
.tag { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 8px; background: #eef1f3; color: var(--muted); }
.note { color: var(--muted); font-size: 12px; }
nav a { margin-right: 14px; color: var(--teal); text-decoration: none; }
"""

SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    th.addEventListener("click", function () {
      var dir = th.dataset.dir === "asc" ? -1 : 1;
      Array.prototype.forEach.call(heads, function (h) { delete h.dataset.dir; });
      th.dataset.dir = dir === 1 ? "asc" : "desc";
      var key = function (row) {
        var cell = row.cells[col], v = cell.dataset.v !== undefined ? cell.dataset.v : cell.textContent;
        var x = parseFloat(v);
        return isNaN(x) ? v.toLowerCase() : x;
      };
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (typeof x !== typeof y) { x = String(x); y = String(y); }
        return (x < y ? -1 : x > y ? 1 : 0) * dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

PAGE = Template(
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>$style</style>
</head>
<body>
$body
<script>$script</script>
</body>
</html>
"""
)


def page(title: str, body: str) -> str:
    """The whole document: `title` already escaped, `body` the sections' HTML."""
    return PAGE.substitute(title=title, style=STYLE, body=body, script=SCRIPT)
