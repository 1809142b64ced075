"""The documentation pages stand on their own and all their Python is executed.

The Sphinx build (``.ci/run``) runs every ``{testcode}`` block of the user guide
with ``sphinx.ext.doctest`` and every ``.. plot::`` (in ``{eval-rst}``) when it draws the page; a
plain ```` ```python ```` block would be shown without ever being run, so none is
allowed. The pages must not cite files that are not in the repository.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED = {"_build", "auto_examples", "generated"}
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md")
               if not GENERATED.intersection(p.relative_to(ROOT / "docs").parts))
RUN_OR_NOT_PYTHON = {"testcode", "testoutput", "eval-rst", "bash", "text", "include",
                     "toctree", "math", "note", "warning", ""}
OUTSIDE = re.compile(r"DESIGN\.md|reference_peers|reference_accounting|notes_00\d"
                     r"|\bissue \d+|issue notes?\b", re.IGNORECASE)


def test_the_guide_has_pages():
    names = {p.name for p in PAGES}
    assert {"index.md", "privacy.md", "choosing_epsilon.md", "clipping.md",
            "meta_estimators.md", "reproducibility.md", "developers.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT / "docs")))
def test_every_code_block_is_run_or_is_not_python(page):
    fences = re.findall(r"^(`{3,})\s*\{?([\w-]*)\}?", page.read_text(), re.MULTILINE)
    languages = [lang for ticks, lang in fences[::2]]  # opening fences
    assert set(languages) <= RUN_OR_NOT_PYTHON, (
        f"{page.name}: a code block that the docs build does not run "
        f"({sorted(set(languages) - RUN_OR_NOT_PYTHON)}); write Python as a "
        "{testcode} block")


@pytest.mark.parametrize("page", [*PAGES, ROOT / "README.md"], ids=lambda p: p.name)
def test_pages_cite_nothing_outside_the_repository(page):
    text = page.read_text()
    if page.name == "README.md":  # the one place that says where the tests' data live
        text = text.replace("`../shared/data`", "")
    found = OUTSIDE.findall(text) + re.findall(r"\.\./shared", text)
    assert not found, f"{page.name} cites {found}"
