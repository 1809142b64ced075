"""The exact samplers of secure mode against OpenDP's (issue 42): CPU time per release.

Run by hand (not a test: timings are noisy on shared machines)::

    python benchmarks/exact_sampler.py            # 8,316 coordinates (Reuters), 7 rounds
    python benchmarks/exact_sampler.py --size 124 --rounds 11

One release of ``size`` coordinates of discrete Gaussian noise (variance
parameter ``sigma^2``, ``sigma`` = 4,206,649, the scale in grid units of a
Reuters gradient at epsilon 1) and of discrete Laplace noise (scale ``t`` =
``sigma``), drawn by skdp's exact sampler
(:mod:`skdp.accounting._exact_noise`) and by OpenDP's
(``opendp.measurements.make_gaussian`` / ``make_laplace`` on integer
vectors, which sample exactly too). The two alternate round by round;
the table gives the median CPU time (``time.process_time``) and every raw
time. Needs ``opendp`` (the ``secure`` extra).

Writes ``benchmarks/results/exact_sampler.md``.
"""

import argparse
import time
from pathlib import Path

import numpy as np
import opendp.prelude as dp

from skdp.accounting import _exact_noise

RESULTS = Path(__file__).resolve().parent / "results" / "exact_sampler.md"
SIGMA = 4_206_649


def opendp_samplers(size):
    dp.enable_features("contrib")
    gauss = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)),
                               dp.l2_distance(T=int), scale=float(SIGMA))
    laplace = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)),
                                dp.l1_distance(T=int), scale=float(SIGMA))
    zeros = [0] * size
    return {"discrete Gaussian": lambda: gauss(zeros),
            "discrete Laplace": lambda: laplace(zeros)}


def skdp_samplers(size):
    return {"discrete Gaussian": lambda: _exact_noise.discrete_gaussian(SIGMA * SIGMA, size),
            "discrete Laplace": lambda: _exact_noise.discrete_laplace(SIGMA, size)}


def cpu(call):
    start = time.process_time()
    call()
    return time.process_time() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8316)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    ours, theirs = skdp_samplers(args.size), opendp_samplers(args.size)
    lines = [
        "# Exact samplers: skdp against OpenDP (issue 42)",
        "",
        f"Written by `benchmarks/exact_sampler.py` (one release of {args.size} coordinates, "
        f"sigma = t = {SIGMA}; {args.rounds} alternating rounds; CPU seconds, median and raw).",
        "",
        "| law | skdp median s | OpenDP median s | OpenDP / skdp | skdp raw | OpenDP raw |",
        "|---|---|---|---|---|---|",
    ]
    for law in ours:
        ours[law](), theirs[law]()  # warm
        a, b = [], []
        for _ in range(args.rounds):
            a.append(cpu(ours[law]))
            b.append(cpu(theirs[law]))
        lines.append(f"| {law} | {np.median(a):.4f} | {np.median(b):.4f} | "
                     f"{np.median(b) / np.median(a):.1f}x | "
                     f"{' '.join(f'{v:.4f}' for v in a)} | {' '.join(f'{v:.4f}' for v in b)} |")
        print(lines[-1], flush=True)
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
