"""Every measured number on a solver page comes from a results file the page cites.

THE RULE (issue 39; applies to every ``docs/solvers/*.md``, and to
``docs/secure_mode.md`` and ``docs/regression.md``):

1. A page *cites* a results file by naming its path ``benchmarks/results/<name>.md``
   anywhere on the page (prose, a table, or a ``{include}`` directive).
2. Every number on the page with three or more significant digits must appear,
   character for character (thousands separators ignored, a leading sign ignored),
   as a number in one of the results files the page cites.
   Significant digits: the digits from the first non-zero digit to the last
   digit written after a decimal point, or, for an integer, to its last non-zero
   digit (``0.9610`` has 4, ``0.0096`` has 2, ``20,000`` has 1, ``495,141`` has 6).
3. Not checked (they are code, settings or executed output, not measurements):
   fenced blocks (```` ``` ```` ... ```` ``` ````: ``testcode`` / ``testoutput`` are executed
   by the doc build, so their numbers are computed), inline code in backticks,
   math (``$...$``), link targets ``(...)`` of markdown links, arXiv identifiers
   (``arXiv:2008.07978``), DOIs (``10.1137/20M1355847``), page ranges of a
   reference (``pp. 308-318``), and years
   (four-digit integers 1900-2099 right after an author name or in a citation
   "et al. 2016", "Lee & Kifer 2018", i.e. any integer 1900-2099 with no decimal point).
4. A derived number (a difference, a ratio) is not exempt: write it into the
   results file (the script that writes the file computes it) or drop it.

Run it on one page: ``python -m pytest tests/test_docs_provenance.py -k rgda``.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the solver pages, and the user-guide pages whose every measured number comes
#: from a results file (the other guide pages quote executed examples and
#: published references as well)
PAGES = sorted((ROOT / "docs" / "solvers").glob("*.md")) + [
    ROOT / "docs" / "secure_mode.md", ROOT / "docs" / "regression.md"]

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")
_CITE = re.compile(r"benchmarks/results/([\w.-]+\.md)")
_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.S | re.M)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_ARXIV = re.compile(r"arXiv:?\s*\d{4}\.\d{4,5}", re.I)
_DOI = re.compile(r"\b10\.\d{4,9}/\S+")
_PAGES = re.compile(r"\bpp?\.\s*\d+\s*[-–]+\s*\d+")


def _normal(token):
    return token.lstrip("+-").replace(",", "")


def significant_digits(token):
    """Number of significant digits of a written number (rule 2)."""
    mantissa = re.split(r"[eE]", _normal(token))[0]
    if "." in mantissa:
        digits = mantissa.replace(".", "").lstrip("0")
        return len(digits)
    return len(mantissa.lstrip("0").rstrip("0"))


def _is_year(token):
    plain = _normal(token)
    return plain.isdigit() and len(plain) == 4 and 1900 <= int(plain) <= 2099


def checked_text(page_text):
    """The page text with the exempt parts of rule 3 blanked out."""
    text = _FENCE.sub(" ", page_text)
    text = _MATH.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    text = _ARXIV.sub(" ", text)
    text = _DOI.sub(" ", text)
    text = _PAGES.sub(" ", text)
    return _LINK_TARGET.sub("] ", text)


def numbers_to_trace(page_text):
    return sorted(
        {
            _normal(token)
            for token in _NUMBER.findall(checked_text(page_text))
            if significant_digits(token) >= 3 and not _is_year(token)
        }
    )


def cited_files(page_text):
    return sorted(set(_CITE.findall(page_text)))


def numbers_in(path):
    return {_normal(token) for token in _NUMBER.findall(path.read_text())}


def untraced(page_path, results_dir=ROOT / "benchmarks" / "results"):
    """Numbers of a page (rule 2) that none of its cited results files holds."""
    text = page_path.read_text()
    known = set()
    for name in cited_files(text):
        path = results_dir / name
        if path.exists():
            known |= numbers_in(path)
    return [number for number in numbers_to_trace(text) if number not in known]


def test_the_rule_counts_significant_digits():
    assert significant_digits("0.9610") == 4
    assert significant_digits("0.0096") == 2
    assert significant_digits("20,000") == 1
    assert significant_digits("495,141") == 6
    assert significant_digits("1e-5") == 1
    assert significant_digits("1.25e-3") == 3


def test_the_rule_exempts_code_math_and_years():
    page = (
        "Abadi et al. 2016 measured 0.9123 (`max_iter=1234`) with $1.234$ and\n"
        "```\nprint(5.678)\n```\n[a](https://x.org/123.456) arXiv:2008.07978\n"
        "doi 10.1137/20M1355847, pp. 308-318.\n"
    )
    assert numbers_to_trace(page) == ["0.9123"]


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_numbers_appear_in_cited_results(page):
    missing = untraced(page)
    cites = cited_files(page.read_text())
    assert not missing, (
        f"{page.relative_to(ROOT)}: these numbers appear in none of the results files "
        f"the page cites ({cites or 'none'}): {missing}. Cite the results file that "
        "holds them (benchmarks/results/<name>.md), regenerate it with its script, "
        "or remove the number (rule at the top of tests/test_docs_provenance.py)."
    )


def test_a_changed_number_on_a_page_fails(tmp_path):
    """A planted change (one digit of a traced number) in a copy of a page is caught."""
    results = tmp_path / "results"
    results.mkdir()
    (results / "r.md").write_text("| a | 0.9613 |\n| b | 12,345 |\n")
    page = tmp_path / "page.md"
    page.write_text("From `benchmarks/results/r.md`: 0.9613 and 12,345 rows.\n")
    assert untraced(page, results) == []
    page.write_text("From `benchmarks/results/r.md`: 0.9614 and 12,345 rows.\n")
    assert untraced(page, results) == ["0.9614"]
    page.write_text("From somewhere: 0.9613 and 12,345 rows.\n")
    assert untraced(page, results) == ["0.9613", "12345"]


def test_a_planted_change_on_the_real_pages_fails(tmp_path):
    """Changing one digit of a traced number in a copy of each page makes it untraced."""
    planted = 0
    for page in PAGES:
        text = page.read_text()
        known = set()
        for name in cited_files(text):
            path = ROOT / "benchmarks" / "results" / name
            if path.exists():
                known |= numbers_in(path)
        for target in numbers_to_trace(text):
            if target not in known or "," in target:
                continue
            bumped = target[:-1] + str((int(target[-1]) + 1) % 10)
            if bumped in known:
                continue
            pattern = rf"(?<![\w.]){re.escape(target)}(?![\w])"
            changed = re.sub(pattern, bumped, checked_text(text), count=1)
            copy = tmp_path / page.name
            # the citations may sit in inline code, which checked_text blanks: keep them
            cites = " ".join(f"benchmarks/results/{n}" for n in cited_files(text))
            copy.write_text(changed + "\n" + cites)
            assert bumped in untraced(copy), page.name
            planted += 1
            break
    assert planted >= 3
