"""Sphinx configuration of the skdp documentation.

Build (warnings are errors): ``python -m sphinx -W -b html docs docs/_build/html``;
run the user guide's code: ``python -m sphinx -W -b doctest docs docs/_build/doctest``.
"""

import os
import re
import sys
import warnings
from pathlib import Path

import skdp

project = "skdp"
author = "the skdp developers"
copyright = "2026, the skdp developers"
release = version = skdp.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax served from _static: formulas render offline
    "matplotlib.sphinxext.plot_directive",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5",
                    "sg_execution_times.rst", "auto_examples/sg_execution_times.rst"]
templates_path = ["_templates"]

# -- MyST (the Markdown pages) ------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# -- API reference --------------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# numpydoc validation, on for every documented object (warnings are errors with -W).
# Not required: an extended summary (ES01), a See Also section (SA01), an Examples
# section on every function (EX01; the estimators, the accountant and the searches
# have one), and the docstring starting on the first line (GL01) or ending with a
# blank line (GL02).
numpydoc_validation_checks = {"all", "ES01", "SA01", "EX01", "GL01", "GL02", "SS05",
                              "RT02", "PR09", "RT05"}
# scikit-learn's own methods, documented in scikit-learn
numpydoc_validation_exclude = {
    r"\.get_params$", r"\.set_params$", r"\.set_\w+_request$", r"\.get_metadata_routing$",
    r"\.set_output$", r"\.fit_transform$", r"\.__init__$",
}

def _skip_sklearn_members(app, what, name, obj, skip, options):
    """Document skdp's own members; scikit-learn's are documented by scikit-learn."""
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] == "sklearn" or re.match(r"^set_\w+_request$", name):
        return True
    return skip


_REMOTE_ASSET = re.compile(
    r"<(?:script|img)\b[^>]*\bsrc=[\"'](?:https?:)?//|<link\b[^>]*\bhref=[\"'](?:https?:)?//")


def _check_no_remote_assets(app, exc):
    """Fail the html build if a page loads a script, style or image from another host.

    The site must work offline (math included): everything it loads is under
    ``_static``. Links to other sites (``<a href>``) are fine.
    """
    if exc is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    remote = sorted(str(page.relative_to(outdir)) for page in outdir.rglob("*.html")
                    if _REMOTE_ASSET.search(page.read_text(encoding="utf-8")))
    if remote:
        raise RuntimeError(f"{len(remote)} pages load a script, style or image from "
                           f"another host (first: {remote[:3]}); serve it from docs/_static "
                           "so the site works offline")
    if not (outdir / "_static" / mathjax_path).is_file():
        raise RuntimeError(f"_static/{mathjax_path} is missing: the math would not render; "
                           "install the docs extra (pip install \".[docs]\")")


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_members)
    # after sphinx-mathjax-offline's handler (connected when its extension loaded),
    # which copies MathJax into _static
    app.connect("build-finished", _check_no_remote_assets, priority=900)


# -- the example gallery (executed at build time) -------------------------------
os.environ.setdefault("MPLBACKEND", "Agg")
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "plot_gallery": "True",
    # its page of run times loads jQuery and DataTables from CDNs (the site is offline)
    "write_computation_times": False,
}
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")

# -- figures drawn at build time in the user guide (``{plot}`` blocks) ----------------
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 100)]
plot_rcparams = {"figure.figsize": (6.4, 3.4)}

# -- HTML ---------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skdp {version}"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_static_path = ["_static"]
html_css_files = ["skdp.css"]
mathjax_path = "mathjax/tex-chtml.js"  # relative to _static (sphinx-mathjax-offline's copy)

# -- doctest (the user guide's testcode blocks) --------------------------------------
doctest_global_setup = """
import numpy as np
import warnings
np.set_printoptions(precision=4, suppress=True)
"""
