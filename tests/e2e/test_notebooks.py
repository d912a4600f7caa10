"""The notebooks in notebooks/ are executed end to end (nbclient), so they never rot.

They run on mnist5k through the package API, on a reduced lattice (3 levels, 200 digits, as
`small_benchmark` in conftest.py) and on this session's cache, set through the environment
variables their first cell reads; a cold cache costs a LeNet-5 training and an 81-row ground truth.
"""

import pathlib

import nbclient  # the test extra installs nbclient, nbformat and ipykernel
import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


def execute(name, cache_dir, monkeypatch):
    monkeypatch.setenv("TESTNAV_CACHE_DIR", str(cache_dir))
    monkeypatch.setenv("TESTNAV_OVERRIDES", "benchmark.levels=3 benchmark.test_per_class=20")
    monkeypatch.setenv("TESTNAV_DEVICE", "cpu")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    return nb


def outputs(nb) -> str:
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text.append(out.get("text", ""))
            text.append(str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(text)


def images(nb) -> int:
    return sum("image/png" in out.get("data", {}) for c in nb.cells for out in c.get("outputs", []))


def test_notebooks_are_committed_without_outputs():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{path.name} has outputs: clear them"


@pytest.mark.slow  # a Jupyter kernel per notebook: make test-all
def test_explore_groundtruth_notebook(cache_dir, monkeypatch):
    nb = execute("explore_groundtruth.ipynb", cache_dir, monkeypatch)
    text = outputs(nb)
    assert "81 configurations" in text and "|P*| = " in text
    assert images(nb) >= 2  # the (δ, ρ) scatter and the image grid


@pytest.mark.slow
def test_testifai_queries_notebook(cache_dir, monkeypatch):
    nb = execute("testifai_queries.ipynb", cache_dir, monkeypatch)
    text = outputs(nb)
    assert "tests measured with" in text and "estimate − true" in text
    assert images(nb) >= 1


@pytest.mark.slow
def test_your_model_notebook(cache_dir, monkeypatch):
    nb = execute("your_model.ipynb", cache_dir, monkeypatch)
    text = outputs(nb)
    assert "configurations run for" in text and "p_complete = " in text and "R_predicted" in text
    assert images(nb) >= 1
