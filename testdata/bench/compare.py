#!/usr/bin/env python3
"""Compare two msync-replay builds on one trace: CPU and wall time, report.

usage: compare.py OLD NEW TRACE [STEPS] [--rounds N] [--pause S]
                  [--memlat MSR_MEMLAT] [-- CHECK-OPTIONS...]

Runs `BIN check TRACE [--steps STEPS] CHECK-OPTIONS -q -o REPORT` for both
binaries, one process at a time, for N rounds (default 8). Each round runs
the two back to back, in the order OLD NEW on odd rounds and NEW OLD on
even ones, so that slow drift of the machine hits both alike. It prints the
median CPU seconds (user + sys, all threads) and wall seconds of each, and
for CPU, user and wall time the ratio NEW / OLD as the geometric mean of
the per-round ratios with a 95 % interval (+-2 standard errors): an
interval that contains 1.00 means no difference this machine can show, and
one that does not is worth a second run at another time (see
docs/performance.md, "Comparing two builds"). It also checks that both
builds wrote the same report apart from the timing fields and exited with
the same code, and exits 1 if not. A run that exits 2 (an unreadable
trace, a wrong option) ends it at once with that run's message.

CPU time comes from wait4(2) for each child, wall time from a monotonic
clock around it; peak RSS is bench.py's job. The user-time ratio is the
steadier one for a change to the code's own work: system time is mostly
first touches of fresh memory, whose cost on a virtual machine swings
with the host from run to run. OLD and NEW may be the same binary: options
for only one of them go in MSR_COMPARE_OLD_OPTS and MSR_COMPARE_NEW_OPTS
(split on spaces), e.g. NEW_OPTS=--single-thread.

--pause S sleeps S seconds (a decimal) before every run, untimed: on a
virtual machine that hands freed memory back to its host a few seconds
after it is freed, that measures replays whose memory is fresh to the
host, as in a job array whose tasks start apart, instead of memory the
run before has just freed (docs/performance.md, "When small pages are
faster").

--memlat MSR_MEMLAT runs the memory probe (build/testdata/bench/msr-memlat)
before every round, prints its figures on the round's line and ends with
each size's median and range, as bench.py does: a wide interval in a
session whose last-level cache came and went can then be told from a
change that sometimes helps.
"""

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import memory_figures, memory_line, probe_memory  # noqa: E402

TIMING = (b"elapsed_seconds:", b"events_per_second:")


def run(argv, err):
    """Run one command alone, its stderr into the file `err`; return (exit
    code, CPU seconds, user seconds, wall seconds). Exit 2 (unusable input
    or usage error) ends the comparison with the command's message: its
    timings would be those of a failure."""
    t0 = time.monotonic()
    with open(err, "wb") as ef:
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                    stderr=ef)
        except OSError as e:
            sys.exit("compare: cannot run %s: %s" % (argv[0], e.strerror))
        _, status, ru = os.wait4(proc.pid, 0)  # the child's own rusage
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped: tell Popen
    if proc.returncode == 2:
        with open(err, "rb") as ef:
            lines = ef.read().decode(errors="replace").strip().splitlines()
        sys.exit("compare: %s exited 2 (unusable input or usage error)%s" % (
            " ".join(argv), ": " + lines[-1] if lines else ""))
    return (proc.returncode, ru.ru_utime + ru.ru_stime, ru.ru_utime,
            time.monotonic() - t0)


def parse_args(argv):
    rounds, pause, memlat, extra, pos = 8, 0.0, None, [], []
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
        if a == "--pause" and i + 1 < len(argv):
            try:
                pause = float(argv[i + 1])
            except ValueError:
                pause = -1.0
            i += 2
            continue
        if a == "--memlat" and i + 1 < len(argv):
            memlat = argv[i + 1]
            i += 2
            continue
        pos.append(a)
        i += 1
    if len(pos) not in (3, 4) or rounds < 2 or not 0 <= pause <= 3600:
        sys.exit("usage: compare.py OLD NEW TRACE [STEPS] [--rounds N >= 2] "
                 "[--pause SECONDS] [--memlat MSR_MEMLAT] "
                 "[-- CHECK-OPTIONS...]")
    if memlat and not os.access(memlat, os.X_OK):
        sys.exit("compare: cannot run the memory probe %s" % memlat)
    return pos[0], pos[1], pos[2], pos[3] if len(pos) == 4 else None, \
        rounds, pause, memlat, extra


def report_body(path):
    """The report without the timing lines, which differ on every run;
    None when the build wrote none (it failed before the end)."""
    try:
        with open(path, "rb") as f:
            return [ln for ln in f if not ln.lstrip().startswith(TIMING)]
    except FileNotFoundError:
        return None


def log_ratio(a, b):
    return math.log(b / a) if a > 0 and b > 0 else 0.0


def print_ratio(what, ratios):
    m = statistics.mean(ratios)
    se = statistics.stdev(ratios) / math.sqrt(len(ratios))
    print("new/old %s: %.3f (95 %% interval %.3f to %.3f, %d rounds)" % (
        what, math.exp(m), math.exp(m - 2 * se), math.exp(m + 2 * se),
        len(ratios)))


def main():
    old, new, trace, steps, rounds, pause, memlat, extra = \
        parse_args(sys.argv[1:])
    own = {k: os.environ.get("MSR_COMPARE_%s_OPTS" % k.upper(), "").split()
           for k in ("old", "new")}
    cpu = {"old": [], "new": []}
    wall = {"old": [], "new": []}
    ratios, user_ratios, wall_ratios, probes = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="msr-compare-") as work:
        out = {k: os.path.join(work, k + ".yaml") for k in cpu}
        rc = {}
        for r in range(rounds):
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            got, gotu, gotw = {}, {}, {}
            probes.append(probe_memory(memlat))
            for k in order:
                argv = [old if k == "old" else new, "check", trace]
                if steps:
                    argv += ["--steps", steps]
                argv += extra + own[k] + ["-q", "-o", out[k]]
                if pause:
                    time.sleep(pause)
                rc[k], got[k], gotu[k], gotw[k] = run(
                    argv, os.path.join(work, "err"))
                cpu[k].append(got[k])
                wall[k].append(gotw[k])
            ratios.append(log_ratio(got["old"], got["new"]))
            user_ratios.append(log_ratio(gotu["old"], gotu["new"]))
            wall_ratios.append(log_ratio(gotw["old"], gotw["new"]))
            print("round %d/%d: old %.2f s CPU %.2f s wall, new %.2f s CPU "
                  "%.2f s wall%s" % (
                      r + 1, rounds, got["old"], gotw["old"], got["new"],
                      gotw["new"], memory_figures(probes[-1])),
                  flush=True)
        body = {k: report_body(out[k]) for k in out}
        same = rc["old"] == rc["new"] and body["old"] == body["new"]
    for k, b in (("old", old), ("new", new)):
        print("%s  %s: median %.3f s CPU, %.3f s wall" % (
            k, " ".join([b] + own[k]), statistics.median(cpu[k]),
            statistics.median(wall[k])))
    print_ratio("CPU", ratios)
    print_ratio("user", user_ratios)
    print_ratio("wall", wall_ratios)
    line = memory_line(probes)
    if line:
        print(line)
    if same and body["old"] is None:
        print("reports: neither build wrote one (exit %d)" % rc["old"])
    elif same:
        print("reports: identical apart from timings (exit %d)" % rc["old"])
    else:
        print("reports: DIFFER (exit %d vs %d)" % (rc["old"], rc["new"]))
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
