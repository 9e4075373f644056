#!/usr/bin/env python3
"""Compare two msync-replay builds on one trace: CPU time and report.

usage: compare.py OLD NEW TRACE [STEPS] [--rounds N] [-- CHECK-OPTIONS...]

Runs `BIN check TRACE [--steps STEPS] CHECK-OPTIONS -q -o REPORT` for both
binaries, one process at a time, for N rounds (default 8). Each round runs
the two back to back, in the order OLD NEW on odd rounds and NEW OLD on
even ones, so that slow drift of the machine hits both alike. It prints the
median CPU seconds (user + sys) of each, and the ratio NEW / OLD as the
geometric mean of the per-round ratios with a 95 % interval (+-2 standard
errors): an interval that contains 1.00 means no difference this machine
can show, and one that does not is worth a second run at another time (see
docs/performance.md, "Comparing two builds"). It also checks that both builds wrote the same report apart from
the timing fields and exited with the same code, and exits 1 if not.

CPU time comes from wait4(2) for each child; peak RSS is bench.py's job.
"""

import math
import os
import statistics
import subprocess
import sys
import tempfile

TIMING = (b"elapsed_seconds:", b"events_per_second:")


def run(argv):
    """Run one command alone; return (exit code, CPU seconds)."""
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError as e:
        sys.exit("compare: cannot run %s: %s" % (argv[0], e.strerror))
    _, status, ru = os.wait4(proc.pid, 0)  # the child's own rusage
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped: tell Popen
    return proc.returncode, ru.ru_utime + ru.ru_stime


def parse_args(argv):
    rounds, extra, pos = 8, [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            extra = argv[i + 1:]
            break
        if a == "--rounds" and i + 1 < len(argv):
            rounds = int(argv[i + 1]) if argv[i + 1].isdigit() else 0
            i += 2
            continue
        pos.append(a)
        i += 1
    if len(pos) not in (3, 4) or rounds < 2:
        sys.exit("usage: compare.py OLD NEW TRACE [STEPS] [--rounds N >= 2] "
                 "[-- CHECK-OPTIONS...]")
    return pos[0], pos[1], pos[2], pos[3] if len(pos) == 4 else None, \
        rounds, extra


def report_body(path):
    """The report without the timing lines, which differ on every run;
    None when the build wrote none (it failed before the end)."""
    try:
        with open(path, "rb") as f:
            return [ln for ln in f if not ln.lstrip().startswith(TIMING)]
    except FileNotFoundError:
        return None


def main():
    old, new, trace, steps, rounds, extra = parse_args(sys.argv[1:])
    cpu = {"old": [], "new": []}
    ratios = []
    with tempfile.TemporaryDirectory(prefix="msr-compare-") as work:
        out = {k: os.path.join(work, k + ".yaml") for k in cpu}
        rc = {}
        for r in range(rounds):
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            got = {}
            for k in order:
                argv = [old if k == "old" else new, "check", trace]
                if steps:
                    argv += ["--steps", steps]
                argv += extra + ["-q", "-o", out[k]]
                rc[k], got[k] = run(argv)
                cpu[k].append(got[k])
            ratios.append(math.log(got["new"] / got["old"])
                          if got["old"] > 0 and got["new"] > 0 else 0.0)
            print("round %d/%d: old %.2f s, new %.2f s" % (
                r + 1, rounds, got["old"], got["new"]), flush=True)
        body = {k: report_body(out[k]) for k in out}
        same = rc["old"] == rc["new"] and body["old"] == body["new"]
    m = statistics.mean(ratios)
    se = statistics.stdev(ratios) / math.sqrt(len(ratios))
    print("old  %s: median %.3f s CPU" % (old, statistics.median(cpu["old"])))
    print("new  %s: median %.3f s CPU" % (new, statistics.median(cpu["new"])))
    print("new/old: %.3f (95 %% interval %.3f to %.3f, %d rounds)" % (
        math.exp(m), math.exp(m - 2 * se), math.exp(m + 2 * se), rounds))
    if same and body["old"] is None:
        print("reports: neither build wrote one (exit %d)" % rc["old"])
    elif same:
        print("reports: identical apart from timings (exit %d)" % rc["old"])
    else:
        print("reports: DIFFER (exit %d vs %d)" % (rc["old"], rc["new"]))
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
