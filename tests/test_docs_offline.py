"""The documentation site works offline: math included, nothing loaded from a CDN.

MathJax is served from the site's ``_static`` (the ``sphinx-mathjax-offline``
package of the docs extra), and the html build itself fails when a page loads
a script, a style sheet or an image from another host (``docs/conf.py``).
"""

import configparser
import runpy
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def conf():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MPLBACKEND", "Agg")
        return runpy.run_path(str(ROOT / "docs" / "conf.py"))


def _site(tmp_path, page, with_mathjax=True):
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "page.html").write_text(page)
    if with_mathjax:
        (tmp_path / "_static" / "mathjax").mkdir(parents=True)
        (tmp_path / "_static" / "mathjax" / "tex-chtml.js").write_text("")
    return SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html"))


def test_mathjax_is_served_from_the_site(conf):
    assert "sphinx-mathjax-offline" in conf["extensions"]
    assert not conf["mathjax_path"].startswith(("http:", "https:", "//"))
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    assert "sphinx-mathjax-offline" in config["options.extras_require"]["docs"]


@pytest.mark.parametrize("tag", [
    '<script defer="defer" src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js">',
    '<link href="https://cdn.datatables.net/1.13.6/css/dataTables.min.css" rel="stylesheet" />',
    '<img alt="badge" src="//img.shields.io/badge/x.svg" />',
])
def test_the_build_fails_on_a_page_that_loads_from_another_host(conf, tmp_path, tag):
    app = _site(tmp_path, f"<html><head>{tag}</head><body></body></html>")
    with pytest.raises(RuntimeError, match="another host.*api/page.html"):
        conf["_check_no_remote_assets"](app, None)


def test_the_build_passes_a_site_that_loads_only_its_own_files(conf, tmp_path):
    page = ('<script defer="defer" src="../_static/mathjax/tex-chtml.js"></script>'
            '<link rel="stylesheet" href="../_static/skdp.css" />'
            '<a href="https://scikit-learn.org">scikit-learn</a>')
    conf["_check_no_remote_assets"](_site(tmp_path, page), None)


def test_the_build_fails_without_the_local_mathjax(conf, tmp_path):
    app = _site(tmp_path, "<html></html>", with_mathjax=False)
    with pytest.raises(RuntimeError, match="math would not render"):
        conf["_check_no_remote_assets"](app, None)
