"""Run as a script without a display, an example saves its figure and says where.

Every ``examples/plot_*.py`` ends with the same block, hidden from the gallery
(``sphinx_gallery_start_ignore``): with matplotlib's non-interactive Agg backend
(a terminal with no display) and outside the sphinx-gallery build, it saves the
figure next to where it runs and prints the path; ``plt.show()`` then has
nothing left to show. The gallery build collects the figure itself, as before.
"""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))
SAVE_BLOCK = re.compile(r"# sphinx_gallery_start_ignore\n.*?# sphinx_gallery_end_ignore\n",
                        re.DOTALL)


def _save_block(path):
    blocks = SAVE_BLOCK.findall(path.read_text())
    return blocks[-1] if blocks else ""


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_ends_with_the_same_save_block(example):
    text = example.read_text()
    assert text.rstrip().endswith("plt.show()"), f"{example.name} must end with plt.show()"
    block = _save_block(example)
    assert block, f"{example.name}: no block saving the figure when there is no display"
    assert block == _save_block(EXAMPLES[0]), (
        f"{example.name}: the save block differs from {EXAMPLES[0].name}'s; use the same one")
    assert text.rstrip().endswith(block + "plt.show()")


class _Pyplot:
    """The two pyplot calls the block makes (the tests do not need matplotlib)."""

    def __init__(self, backend):
        self.backend, self.closed = backend, []

    def get_backend(self):
        return self.backend

    def close(self, fig):
        self.closed.append(fig)


class _Figure:
    def savefig(self, path):
        Path(path).write_bytes(b"\x89PNG")


def _run_block(tmp_path, monkeypatch, backend):
    monkeypatch.chdir(tmp_path)
    plt, fig = _Pyplot(backend), _Figure()
    namespace = {"plt": plt, "fig": fig, "__file__": str(ROOT / "examples" / "plot_x.py")}
    exec(_save_block(EXAMPLES[0]), namespace)
    return plt, fig


@pytest.mark.parametrize("backend", ["agg", "Agg"])
def test_without_a_display_the_figure_is_saved_and_its_path_printed(tmp_path, monkeypatch,
                                                                    capsys, backend):
    monkeypatch.delitem(sys.modules, "sphinx_gallery", raising=False)
    plt, fig = _run_block(tmp_path, monkeypatch, backend)
    saved = tmp_path / "plot_x.png"
    assert saved.read_bytes() == b"\x89PNG"
    assert str(saved) in capsys.readouterr().out
    assert plt.closed == [fig]  # plt.show() has nothing left to show (and does not warn)


@pytest.mark.parametrize("backend, gallery", [("agg", True), ("tkagg", False),
                                              ("QtAgg", False)])
def test_with_a_display_or_in_the_gallery_build_nothing_is_saved(tmp_path, monkeypatch,
                                                                 capsys, backend, gallery):
    if gallery:
        monkeypatch.setitem(sys.modules, "sphinx_gallery", sys)
    else:
        monkeypatch.delitem(sys.modules, "sphinx_gallery", raising=False)
    plt, _ = _run_block(tmp_path, monkeypatch, backend)
    assert list(tmp_path.iterdir()) == []
    assert capsys.readouterr().out == ""
    assert plt.closed == []  # left for plt.show() or for sphinx-gallery to collect
