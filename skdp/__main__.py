"""``python -m skdp``: fit every skdp estimator on data shipped with scikit-learn.

Prints, per data set and epsilon, the test score of the private model next
to the non-private scikit-learn score (see :mod:`skdp.demo` for the
preprocessing of each data set).
"""

import argparse
import sys
import time

from .demo import run_demo


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m skdp", description=__doc__)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.5, 1.0, 2.0, 8.0])
    parser.add_argument("--seeds", type=int, default=5, help="fits per cell (mean reported)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    print(run_demo(args.epsilons, n_seeds=args.seeds))
    print(f"\n(total {time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
