"""Every ``pip install`` line the project shows works from a checkout.

skdp is installed from the repository root (no registry serves it), so an
install line names the checkout (``.``, optionally with extras: ``".[dask]"``),
or a third-party package, never ``skdp`` itself; every extra it names exists in
setup.cfg. The lines are read from the README, the documentation pages, the
examples, the benchmarks and the library's own messages.
"""

import configparser
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED = {"_build", "auto_examples", "generated"}
SOURCES = sorted(
    [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("docs/**/*.py"),
     *ROOT.glob("examples/*.py"), *ROOT.glob("benchmarks/*.py"), *ROOT.glob("skdp/**/*.py")],
    key=str)
SOURCES = [p for p in SOURCES if not GENERATED.intersection(p.relative_to(ROOT).parts)]
# "pip install", its options (-e, --upgrade, ...), then the requirement, quoted or not
PIP_INSTALL = re.compile(r"""pip install((?:\s+--?[\w-]+)*)\s+(["']?)([^\s"'`]+)\2""")
CHECKOUT = re.compile(r"^\.(?:\[([\w,-]+)\])?$")


def _extras():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return set(config["options.extras_require"])


def _install_lines():
    lines = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8").replace('\\"', '"')
        for match in PIP_INSTALL.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            requirement = match.group(3).rstrip(".,;:)") or "."
            lines.append((f"{path.relative_to(ROOT)}:{line}", requirement))
    return lines


INSTALL_LINES = _install_lines()


def test_the_project_shows_install_lines():
    where = {place.split(":")[0] for place, _ in INSTALL_LINES}
    assert {"README.md", "docs/index.md", "docs/scaling.md"} <= where


@pytest.mark.parametrize("place, requirement", INSTALL_LINES,
                         ids=[place for place, _ in INSTALL_LINES])
def test_install_line_works_from_a_checkout(place, requirement):
    assert not re.match(r"^skdp\b", requirement), (
        f"{place}: 'pip install {requirement}' asks a registry for skdp, which none serves; "
        "install from the repository root: pip install \".[extra]\"")
    checkout = CHECKOUT.match(requirement)
    if checkout is None:
        assert not requirement.startswith("."), (
            f"{place}: 'pip install {requirement}' is not the checkout form "
            "(. or \".[extra1,extra2]\")")
        return  # a third-party requirement (e.g. dask[distributed,dataframe])
    named = set(filter(None, (checkout.group(1) or "").split(",")))
    extras = _extras()
    assert named <= extras, (
        f"{place}: 'pip install {requirement}' names the extra(s) {sorted(named - extras)}, "
        f"which setup.cfg does not define (it has {sorted(extras)})")


@pytest.mark.parametrize("text, requirement", [
    ("pip install . && python -m skdp", "."),
    ("`pip install .` from the root", "."),
    ('pip install ".[test]" && python -m pytest', ".[test]"),
    ("(pip install '.[bench]' from the checkout)", ".[bench]"),
    ('pip install -e ".[dask,docs]"', ".[dask,docs]"),
    ('(``pip install "skdp[dask]"``)', "skdp[dask]"),
])
def test_the_parser_reads_the_forms_the_pages_use(text, requirement):
    match = PIP_INSTALL.search(text)
    assert (match.group(3).rstrip(".,;:)") or ".") == requirement
