"""Wall time of the test tiers, as the README quotes them.

Usage::

    python benchmarks/tier_times.py             # the fast tier: pytest -m "not heavy"
    python benchmarks/tier_times.py --tier full  # the whole suite: plain pytest

Runs the tier with the interpreter running this script, from the repository
root, and records its wall time, pytest's summary line, the number of cores and
the load average before and after (a loaded machine is slower: other jobs share
the cores) in ``benchmarks/results/test_tiers.md``, one section per tier (a run
replaces its tier's section and keeps the other's).
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "test_tiers.md"
TIERS = {
    "fast": ["-m", "not heavy"],
    "full": [],
}
#: the slowest tests listed per tier (pytest --durations)
SLOWEST = 25
HEADER = ("# Test tiers: wall time\n\n"
          "Written by `python benchmarks/tier_times.py [--tier fast|full]`.\n")


def run(tier):
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               f"--durations={SLOWEST}", *TIERS[tier]]
    load_before = os.getloadavg()
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_after = os.getloadavg()
    summary = [line.strip("= ") for line in done.stdout.splitlines()
               if re.search(r"\d+ (passed|failed)", line)]
    return {
        "command": "python -m pytest " + " ".join(
            f'"{arg}"' if " " in arg else arg for arg in TIERS[tier]),
        "seconds": seconds,
        # CPU time of pytest and its worker processes (one pytest-xdist worker per
        # core): on idle cores about the cores times the wall time
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "summary": summary[-1] if summary else f"no summary (exit {done.returncode})",
        "slowest": slowest_tests(done.stdout),
        "failed": failed_tests(done.stdout),
        "cores": os.cpu_count(),
        "load": (load_before[0], load_after[0]),
        "when": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "exit": done.returncode,
    }


def slowest_tests(output):
    """The ``(seconds, phase, test)`` rows of pytest's ``--durations`` report, slowest first."""
    rows = re.findall(r"^\s*([\d.]+)s (call|setup|teardown)\s+(\S.*?)\s*$", output, flags=re.M)
    return [(float(seconds), phase, test) for seconds, phase, test in rows]


def failed_tests(output):
    """The tests pytest's short summary (``-ra``, the project's default) lists as failed."""
    return re.findall(r"^(?:FAILED|ERROR) (\S+)", output, flags=re.M)


def section(tier, result):
    minutes, seconds = divmod(round(result["seconds"]), 60)
    return (f"## {tier}\n\n"
            f"- command: `{result['command'].strip()}`\n"
            f"- wall time: {minutes} min {seconds:02d} s ({result['seconds']:.0f} s)\n"
            f"- CPU time (pytest and its workers): {result['cpu_seconds']:.0f} s\n"
            f"- pytest: {result['summary']}\n"
            f"- cores: {result['cores']}; load average (1 min) before / after: "
            f"{result['load'][0]:.1f} / {result['load'][1]:.1f}\n"
            f"- run: {result['when']}\n"
            + "".join(f"- failed: `{test}`\n" for test in result.get("failed", []))
            + _slowest_list(result.get("slowest", [])))


def _slowest_list(rows):
    if not rows:
        return ""
    return ("\nSlowest tests (wall seconds, phase):\n\n"
            + "".join(f"- {seconds:.1f} s {phase}: `{test}`\n" for seconds, phase, test in rows))


def write(tier, result, path=RESULTS):
    sections = {}
    if path.exists():
        for block in re.split(r"^(?=## )", path.read_text(encoding="utf-8"), flags=re.M):
            if block.startswith("## "):
                sections[block.split("\n", 1)[0][3:].strip()] = block.rstrip() + "\n"
    sections[tier] = section(tier, result)
    text = HEADER + "".join("\n" + sections[name] for name in TIERS if name in sections)
    path.write_text(text, encoding="utf-8")
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tier", choices=list(TIERS), default="fast")
    args = parser.parse_args(argv)
    result = run(args.tier)
    print(write(args.tier, result))
    return result["exit"]


if __name__ == "__main__":
    sys.exit(main())
