"""The finished-run memo is keyed by the code that produced the run (testnav/app/memo.py).

A body edit anywhere a replay's code reaches (TomoNav's surrogate, the certificate's forest, the
candidate pool) must move the key, so a relaunched sweep recomputes instead of linking a stale
summary; a docstring or comment edit must keep it, so prose never throws finished runs away.
"""

from __future__ import annotations

import shutil

import pytest

from testnav import searches
from testnav.app import memo
from testnav.core import cache

EDITS = {
    # module (relative to the package) → (a line of its body, the same line changed in behaviour)
    "stopping/level_surrogate.py": ("MIN_GROUP = 20", "MIN_GROUP = 21"),
    "stopping/forest.py": ("import numpy as np", "import numpy as np\n\n_EDITED = 1"),
    "stopping/pool.py": ("import numpy as np", "import numpy as np\n\n_EDITED = 1"),
}


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    """A copy of the package that the key is read from (cache.PACKAGE_ROOT), to edit freely."""
    root = tmp_path / "testnav"
    shutil.copytree(cache.PACKAGE_ROOT, root, ignore=shutil.ignore_patterns("__pycache__", "conf", "weights"))
    monkeypatch.setattr(cache, "PACKAGE_ROOT", root)
    return root


def edit(root, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text, f"{rel} no longer holds {old!r}: update EDITS"
    path.write_text(text.replace(old, new, 1))


def prose_edit(root, rel: str) -> None:
    """A docstring and a comment changed, nothing the interpreter runs."""
    path = root / rel
    text = path.read_text()
    start = text.index('"""') + 3
    path.write_text(text[:start] + "Reworded. " + text[start:] + "\n# a new comment\n")


@pytest.mark.parametrize(
    "search", [searches.make("tomonav"), searches.make("nsga2"), searches.make("random")], ids=lambda s: s.name
)
@pytest.mark.parametrize("rel", list(EDITS))
def test_body_edit_moves_the_key_docstring_edit_keeps_it(package_copy, search, rel):
    before = memo.code_key(search)
    prose_edit(package_copy, rel)
    assert memo.code_key(search) == before, f"a docstring edit to {rel} moved the memo key"
    edit(package_copy, rel, *EDITS[rel])
    assert memo.code_key(search) != before, f"a body edit to {rel} kept the memo key of {search.name}"


def test_an_unrelated_module_keeps_the_key(package_copy):
    """Code no replay runs (a figure, a perturbation family) is not in the key."""
    search = searches.make("tomonav")
    before = memo.code_key(search)
    for rel in ("families/brightness.py", "plotstyle.py"):
        edit(package_copy, rel, "from __future__ import annotations", "from __future__ import annotations\n\nX = 1")
    assert memo.code_key(search) == before


def test_the_certificates_settings_are_in_the_key():
    """A run that stops at 0.95 ends elsewhere than one that never stops: not the same memo."""
    from testnav.pipeline import compose_config

    search = searches.make("tomonav")
    keys = {
        memo.run_key(compose_config(overrides), __file__, 100, search)
        for overrides in ([], ["certificate.stop_at=0.95"], ["certificate.stop_at=0.95", "certificate.stop_on=good"])
    }
    assert len(keys) == 3
