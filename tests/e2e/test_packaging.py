"""A wheel (a non-editable install) carries conf/ and composes configs, and carries docs/, which --help
names: testnav/paths.py finds them inside the package, where the checkout's testnav/conf and testnav/docs
links point at the top-level folders."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_wheel_ships_conf_and_composes_from_it(tmp_path):
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    src = tmp_path / "src"  # pip builds in the source tree: a copy keeps the checkout clean
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "conf", "docs", "testnav"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(
            ROOT / name,
            src / name,
            **(
                {"symlinks": True, "ignore": shutil.ignore_patterns("__pycache__", "*.egg-info")}
                if copy is shutil.copytree
                else {}
            ),
        )
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("testnav-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.removeprefix("testnav/") for n in names if n.startswith("testnav/conf/")}
    assert shipped == {str(p.relative_to(ROOT)) for p in (ROOT / "conf").rglob("*.yaml")}
    guides = {n.removeprefix("testnav/") for n in names if n.startswith("testnav/docs/")}
    assert guides == {str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*") if p.suffix in (".md", ".png")}
    subprocess.run([*pip, "install", "--no-deps", "--target", str(tmp_path / "site"), str(wheel)], check=True)
    probe = (
        "import testnav, testnav.paths as p; from testnav.pipeline import compose_benchmark;"
        f"assert testnav.__file__.startswith({str(tmp_path / 'site')!r}), testnav.__file__;"
        "assert p.CONF == p.PACKAGE_ROOT / 'conf' and p.DOCS == p.PACKAGE_ROOT / 'docs';"
        "from testnav.app.main import usage; assert str(p.DOCS) in usage([], 'testnav');"
        "print(compose_benchmark(['benchmark=mnist5k']).lattice.size)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "1296"
