"""Run the long privacy audit and write its table to docs/audit_results.md.

    python benchmarks/audit_table.py

is the one command that regenerates ``docs/audit_results.md`` (issue 11):
rerun it whenever a solver, a loss, the clipping or the accounting changes,
and commit the result. It runs every case of the long audit
(``pytest -m audit_long tests/test_audit.py``) through the same code,
:mod:`skdp.testing.audit_designs`: the canary designs, the step counts each
solver plans for the real data, the variants, the negative controls and the
Gaussian self-check are imported from it, not copied. Per estimator, solver and variant the table
gives the claimed epsilon and delta, the audited lower bound on epsilon, the
runs, the confidence and the verdict; then the noise-off / clipping-off
controls (which must be caught) with their bounds.

Options (defaults are the long audit's): ``--runs`` runs per side of every
audit (10 000; ``SKDP_AUDIT_RUNS_LONG``), ``--control-runs`` (100),
``--jobs`` joblib workers (``SKDP_AUDIT_JOBS``, default 2), ``--only`` runs
only the cases whose id contains the given text (for trying things out: the
file then says it is partial), ``--out`` another output file. The file is
rewritten after every case (marked INCOMPLETE until the run ends). The exit
status is 1 if an audit fails or a control is not caught.

The run can be stopped and resumed: every finished case is saved in
``.audit_cache/`` (not committed) under a digest of the code it ran (every file
of ``skdp/``, ``tests/conftest.py`` and this script)
and of its run counts, and rerunning the command reuses exactly those cases. Any
change to that code changes the digest, so no result is reused across code
versions. ``--fresh`` ignores the cache.

Takes about 5 hours (302 min at the last run) on 2 cores (the accelerated solvers plan 350 - 1000
steps per fit and every audit fits 20 000 times).
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "python benchmarks/audit_table.py"


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per side of every audit (default: the long audit's)")
    parser.add_argument("--control-runs", type=int, default=None,
                        help="runs per side of every negative control")
    parser.add_argument("--jobs", type=int, default=None, help="joblib workers")
    parser.add_argument("--only", default=None,
                        help="run only the cases whose id contains this text")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "audit_results.md")
    parser.add_argument("--fresh", action="store_true",
                        help="rerun every case, ignoring results saved by earlier runs")
    return parser.parse_args(argv)


def _code_digest():
    """A digest of every file whose content decides an audit's outcome."""
    files = sorted((ROOT / "skdp").rglob("*.py"))
    files += [ROOT / "tests" / "conftest.py", Path(__file__).resolve()]
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class Cache:
    """Finished cases of earlier runs of the same code with the same run counts."""

    def __init__(self, key, fresh):
        self.path = ROOT / ".audit_cache" / f"{key}.json"
        self.entries = {}
        if not fresh and self.path.exists():
            self.entries = json.loads(self.path.read_text())

    def get(self, case_id):
        return self.entries.get(case_id)

    def put(self, case_id, entry):
        self.entries[case_id] = entry
        self.path.parent.mkdir(exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.entries, indent=1))
        tmp.replace(self.path)


def _git(*args):
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def _provenance():
    """The commit audited, and any uncommitted change to the code the audit runs."""
    commit = (_git("rev-parse", "--short", "HEAD") or "unknown").strip()
    changed = _git("status", "--porcelain", "--untracked-files=all", "--", "skdp", "tests",
                   "benchmarks/audit_table.py")
    files = [line[3:] for line in (changed or "").splitlines() if line.strip()]
    if files:
        return f"`{commit}` plus uncommitted changes to {', '.join(files)}"
    return f"`{commit}`"


def _fmt(x, digits=3):
    return f"{x:.{digits}f}"


class Table:
    """The rows gathered so far and the markdown file they make."""

    def __init__(self, args, n_cases, started, settings):
        self.args, self.n_cases, self.started = args, n_cases, started
        self.settings = settings
        self.earlier_seconds = 0.0  # spent by earlier, resumed runs on the cached cases
        self.provenance = _provenance()
        self.audits, self.controls, self.self_check = [], [], None

    @property
    def failures(self):
        bad = [f"audit {r['id']}: lower bound {_fmt(r['eps_lb'])} > claimed "
               f"{r['claimed']:g}" for r in self.audits if not r["ok"]]
        bad += [f"control {r['id']}: not caught ({r['why']})"
                for r in self.controls if not r["ok"]]
        if self.self_check is not None and not self.self_check["ok"]:
            bad.append("Gaussian self-check out of range")
        return bad

    def markdown(self, done):
        a = self.args
        elapsed = (time.time() - self.started + self.earlier_seconds) / 60
        status = ("complete" if done else
                  f"INCOMPLETE: {len(self.audits) + len(self.controls)} of "
                  f"{self.n_cases} cases done so far")
        lines = [
            "# Privacy audit results",
            "",
            f"Generated by `{COMMAND}`"
            + (f" (with `--only {a.only}`: PARTIAL)" if a.only else "")
            + f" on {datetime.date.today().isoformat()} from skdp commit "
            f"{self.provenance}. Status: {status}; {elapsed:.0f} min of computing on "
            f"{os.cpu_count()} cores with {self.settings['jobs']} joblib workers "
            f"(Python {platform.python_version()}, NumPy {self.settings['numpy']}).",
            "",
            "Do not edit by hand: rerun the command above whenever a solver, a loss, the "
            "clipping or the accounting changes, and commit this file. It runs the long "
            "audit (`pytest -m audit_long tests/test_audit.py`) through its designs, "
            "`skdp.testing.audit_designs`; `docs/audit.md` explains the canaries, the statistic "
            "and what a bound means.",
            "",
        ]
        failures = self.failures
        if failures:
            lines += ["**FAILURES**:", ""] + [f"- {f}" for f in failures] + [""]
        elif done:
            lines += [f"All {len(self.audits)} audits pass (audited lower bound <= claimed "
                      f"epsilon) and all {len(self.controls)} negative controls are caught.",
                      ""]
        lines += [
            "## Audits",
            "",
            "Every fit runs the number of steps its solver plans with `max_iter=None` for "
            "the real data (`steps`; Adult for the linear models, the benchmark's "
            "matrix-sensing instance for `DPMatrixSensing`), except `pure_1_step`, the "
            "tight single-Laplace-step audit. A pass is a lower bound at or below the "
            "claimed epsilon; `ceiling` is the largest bound the run count allows. "
            "Variants: `gaussian` (epsilon, delta) full batches; `pure` delta = 0; "
            "`pure_1_step` delta = 0, one step, 99 % confidence; `sampled` Poisson "
            "batches at rate 1/4 (steps planned at that rate on the real data).",
            "",
            "| estimator | design | solver | variant | steps | claimed epsilon | delta "
            "| audited epsilon lower bound | runs per side | confidence | ceiling | result |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for r in self.audits:
            lines.append(
                f"| {r['estimator']} | {r['design']} | {r['solver']} | {r['variant']} "
                f"| {r['steps']} | {r['claimed']:g} | {r['delta']:g} | {_fmt(r['eps_lb'])} "
                f"| {r['runs']} | {r['confidence']:.0%} | {_fmt(r['ceiling'], 2)} "
                f"| {'pass' if r['ok'] else '**FAIL**'} |")
        lines += [
            "",
            "## Negative controls (must be caught)",
            "",
            "The same pairings with the noise switched off, or with clipping switched off "
            "and a canary of norm 1e8 (patches in `skdp.testing.audit_designs`, never options). "
            "Caught means a lower bound above the claimed epsilon: the audit sees the "
            "broken variant.",
            "",
            "| estimator | design | solver | control | steps | claimed epsilon | delta "
            "| audited epsilon lower bound | runs per side | confidence | ceiling | result |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for r in self.controls:
            lines.append(
                f"| {r['estimator']} | {r['design']} | {r['solver']} | {r['variant']} "
                f"| {r['steps']} | {r['claimed']:g} | {r['delta']:g} | {_fmt(r['eps_lb'])} "
                f"| {r['runs']} | {r['confidence']:.0%} | {_fmt(r['ceiling'], 2)} "
                f"| {'caught' if r['ok'] else '**NOT CAUGHT**'} |")
        if self.self_check is not None:
            s = self.self_check
            lines += [
                "",
                "## Self-check: a plain Gaussian mechanism",
                "",
                f"True epsilon {s['claimed']:g} (delta {s['delta']:g}), {s['runs']} runs per "
                f"side, {s['confidence']:.0%} confidence: audited lower bound "
                f"{_fmt(s['eps_lb'])} (the test requires it in "
                f"({_fmt(s['claimed'] / 1.5, 2)}, {s['claimed']:g}]): "
                f"{'ok' if s['ok'] else '**out of range**'}.",
            ]
        return "\n".join(lines) + "\n"

    def write(self, done=False):
        self.args.out.write_text(self.markdown(done))


def _row(design, solver, variant, result, ok, why=None):
    return {
        "id": f"{design.name}-{solver}-{variant}", "estimator": design.estimator.__name__,
        "design": design.name, "solver": solver, "variant": variant,
        "steps": int(result.n_iter), "claimed": float(result.claimed_epsilon),
        "delta": float(result.delta), "eps_lb": float(result.epsilon_lower_bound),
        "runs": int(result.n_runs), "confidence": float(result.confidence),
        "ceiling": float(result.epsilon_ceiling), "ok": bool(ok), "why": why,
    }


def main(argv=None):
    args = _parse_args(argv)
    if args.jobs is not None:
        os.environ["SKDP_AUDIT_JOBS"] = str(args.jobs)
    # as tests/conftest.py, before anything imports SciPy: the same environment
    os.environ.setdefault("SCIPY_ARRAY_API", "1")
    import numpy as np

    from skdp.testing import audit_designs as t

    runs = args.runs or t.N_RUNS_LONG
    control_runs = args.control_runs or t.N_RUNS_CONTROL
    keep = (lambda case_id: args.only in case_id) if args.only else (lambda case_id: True)
    audits = [(d, s, v) for d, s, v in t.long_cases()[0] if keep(f"{d.name}-{s}-{v}")]
    controls = [(d, s, c) for d, s in t.PAIRINGS for c in t.CONTROLS
                if keep(f"{d.name}-{s}-{c}")]
    table = Table(args, len(audits) + len(controls), time.time(),
                  {"jobs": t.N_JOBS, "numpy": np.__version__})
    print(f"{len(audits)} audits ({runs} runs per side), {len(controls)} controls "
          f"({control_runs} runs per side) -> {args.out}", flush=True)

    cache = Cache(f"{_code_digest()}-{runs}-{control_runs}", args.fresh)
    if cache.entries:
        print(f"resuming: {len(cache.entries)} finished cases in {cache.path}", flush=True)

    def cached(case_id, compute):
        entry = cache.get(case_id)
        if entry is None:
            start = time.time()
            entry = {"row": compute(), "seconds": time.time() - start}
            cache.put(case_id, entry)
        else:
            table.earlier_seconds += entry["seconds"]
        return entry["row"]

    def self_check():
        result = t.gaussian_self_check()
        return {
            "claimed": result.claimed_epsilon, "delta": result.delta, "runs": result.n_runs,
            "confidence": result.confidence, "eps_lb": result.epsilon_lower_bound,
            "ok": bool(t.CLAIMED_EPSILON / 1.5 < result.epsilon_lower_bound
                       <= t.CLAIMED_EPSILON),
        }

    def control_row(design, solver, control):
        result = t.control_audit(design, solver, control, n_runs=control_runs)
        why = t.control_missed(control, result)
        return _row(design, solver, control, result, why is None, why)

    def audit_row(design, solver, variant):
        result = t.long_audit(design, solver, variant, n_runs=runs)
        ok = bool(result.epsilon_lower_bound <= t.CLAIMED_EPSILON)
        return _row(design, solver, variant, result, ok)

    if not args.only:
        table.self_check = cached("gaussian-self-check", self_check)
    for design, solver, control in controls:
        case_id = f"control:{design.name}-{solver}-{control}"
        table.controls.append(cached(case_id, lambda: control_row(design, solver, control)))
        table.write()
    for design, solver, variant in audits:
        case_id = f"audit:{design.name}-{solver}-{variant}"
        table.audits.append(cached(case_id, lambda: audit_row(design, solver, variant)))
        table.write()
    table.write(done=True)
    print(f"\nwrote {args.out} in {(time.time() - table.started) / 60:.1f} min", flush=True)
    for failure in table.failures:
        print("FAILURE:", failure, flush=True)
    return 1 if table.failures else 0


if __name__ == "__main__":
    sys.exit(main())
