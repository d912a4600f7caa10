"""A page rendered in a real browser: Debian's headless Chromium with testnav.report.browser's flags,
and every host unresolvable, so a page that fetched anything would show it as an error.

`render(html_path)` loads a copy of the page with a probe injected first in <head>: it records
uncaught errors, failed loads and console.error calls, and once the page has loaded, how many
images it has and which did not load, and whether a click on a sortable table's numeric heading
sorted its rows. Chromium's own console log (stderr) is returned beside it.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

from testnav.report.browser import FLAGS as BROWSER_FLAGS
from testnav.report.browser import chromium, screenshot

FLAGS = [*BROWSER_FLAGS, "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0"]

PROBE = """<script>
window.__errors = [];
window.addEventListener("error", function (e) {
  window.__errors.push(String(e.message || (e.target && (e.target.src || e.target.href)) || "error"));
}, true);
(function () {
  var original = console.error;
  console.error = function () { window.__errors.push(Array.prototype.join.call(arguments, " ")); original.apply(console, arguments); };
})();
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var broken = images.filter(function (i) { return !i.complete || i.naturalWidth === 0; }).map(function (i) { return i.alt; });
  var sorted = null, table = document.querySelector("table.sortable");
  var head = table && table.querySelector("th.n");
  if (head) {
    var col = Array.prototype.indexOf.call(head.parentNode.cells, head);
    head.click();
    var values = Array.prototype.map.call(table.tBodies[0].rows, function (r) { return parseFloat(r.cells[col].dataset.v); });
    sorted = values.every(function (v, i) { return i === 0 || !(v < values[i - 1]); });
  }
  document.body.setAttribute("data-probe", JSON.stringify({images: images.length, broken: broken, errors: window.__errors, sorted: sorted}));
});
</script>"""


def render(page: Path, work: Path, png: Path | None = None) -> tuple[dict, list[str]]:
    """(the probe's findings, Chromium's console lines) for `page`; a PNG of it at `png`."""
    work.mkdir(parents=True, exist_ok=True)
    text = page.read_text(encoding="utf-8")
    probed = work / "probed.html"
    probed.write_text(text.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    args = [chromium(), *FLAGS, f"--user-data-dir={work / 'profile'}", "--virtual-time-budget=5000"]
    r = subprocess.run([*args, "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'data-probe="([^"]*)"', r.stdout)
    if found is None:
        raise AssertionError(f"the page never finished loading in Chromium: {r.stderr[-2000:]}")
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    if png is not None:
        screenshot(page, png)
    return json.loads(html.unescape(found.group(1))), console
