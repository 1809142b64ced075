"""Mironov's floating-point attack against the release door, float and secure paths.

    python benchmarks/float_attack.py [--trials 5000] [--out PATH] [--label TEXT]

The distinguishing game of :mod:`skdp.testing.float_attack`: a challenger
flips a fair coin, releases the exact value ``x0`` or ``x1`` (sensitivity 1
apart) through ``release(exact, Laplace(1 / epsilon), 1.0, rng)``, and the
attack guesses the coin from the released value. Under epsilon-DP no guess
is right with probability above ``e^eps / (1 + e^eps)``. Rows:

* **float path** (``secure_mode=False``): the door's numpy Laplace noise on a
  ``numpy.random.Generator``; neighbours 0 and 1, and 1000 and 1001 (the
  attack reads the low bits of the noise, which an exact value much larger
  than the noise's resolution rounds away);
* **secure path** (``secure_mode=True``): the same call on the secure noise
  stream (``skdp.accounting.release.SecureGenerator``), which rounds the exact
  value to a public grid and adds exact discrete Laplace noise; run only when
  this checkout has the secure door (issue 42), else the table says so.

Each rate comes with its two-sided 95 % Clopper-Pearson interval; "epsilon
certified" is ``log(p / (1 - p))`` of the interval's lower end ``p`` (the
epsilon the attack proves the release has at least, 0 when ``p <= 1/2``).
About a minute on one core at 5000 trials.
"""

import argparse
import importlib
import math
import subprocess
import time
from pathlib import Path

import numpy as np

from skdp.accounting import Laplace
from skdp.testing.float_attack import run_attack

EPSILONS = (0.1, 0.5, 1.0)
# the module (skdp.accounting re-exports its function `release` under the same name)
door = importlib.import_module("skdp.accounting.release")
RESULTS = Path(__file__).resolve().parent / "results" / "float_attack.md"


def _row(path, pair, epsilon, result, seconds):
    lower, upper = result["ci"]
    return (f"| {path} | {pair[0]:g} vs {pair[1]:g} | {epsilon:g} | {result['bound']:.4f} | "
            f"{result['success_rate']:.4f} | [{lower:.4f}, {upper:.4f}] | "
            f"{result['epsilon_lower']:.2f} | {result['by_support']:.3f} | {seconds:.1f} |")


def _game(rng, pair, epsilon, trials, seed):
    mechanism = Laplace(1.0 / epsilon)

    def release_once(exact):
        return door.release(exact, mechanism, 1.0, rng, what="float attack target")

    start = time.perf_counter()
    result = run_attack(release_once, pair[0], pair[1], 1.0 / epsilon, epsilon, trials, seed)
    return result, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--label", default="",
                        help="text added to the header (e.g. which secure door was imported)")
    args = parser.parse_args(argv)

    rows = []
    for i, epsilon in enumerate(EPSILONS):
        result, seconds = _game(np.random.default_rng(i), (0.0, 1.0), epsilon, args.trials,
                                seed=100 + i)
        rows.append(_row("float", (0, 1), epsilon, result, seconds))
    result, seconds = _game(np.random.default_rng(10), (1000.0, 1001.0), 1.0, args.trials,
                            seed=110)
    rows.append(_row("float", (1000, 1001), 1.0, result, seconds))

    secure_generator = getattr(door, "SecureGenerator", None)
    if secure_generator is None:
        rows.append("| secure | (not run: this checkout has no secure door) | | | | | | | |")
    else:
        for i, epsilon in enumerate(EPSILONS):
            result, seconds = _game(secure_generator(), (0.0, 1.0), epsilon, args.trials,
                                    seed=200 + i)
            rows.append(_row("secure", (0, 1), epsilon, result, seconds))

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).resolve().parent).stdout.strip()
    lines = [
        "# Mironov's floating-point attack on the release door "
        f"(`python benchmarks/float_attack.py --trials {args.trials}`)",
        "",
        f"Run on commit {commit or 'unknown'}, numpy {np.__version__}; "
        f"{args.trials} games a row, the secret coin fair."
        + (f" {args.label}" if args.label else ""),
        "",
        "The attack replays numpy's Laplace sampler bit for bit and asks which "
        "neighbour's float support contains the released double "
        "(`skdp/testing/float_attack.py`); the bound is the best success rate "
        "any test can have against an epsilon-DP release, e^eps / (1 + e^eps). "
        "For reference, the best test against the real-valued Laplace mechanism "
        "(a threshold half-way) succeeds with probability 1 - e^(-eps/2) / 2: "
        + ", ".join(f"{1 - math.exp(-e / 2) / 2:.4f} at epsilon {e:g}" for e in EPSILONS)
        + ".",
        "",
        "| path | exact values | epsilon | bound | success rate | 95 % CI | "
        "epsilon certified | decided by support | time (s) |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return args.out


if __name__ == "__main__":
    main()
