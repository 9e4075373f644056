#!/usr/bin/env python3
"""bench.py tested (TAP): its paired ratios and its verdict on each target,
from made-up results, then one tiny real run of the two binaries.

usage: bench_test.py BENCH_PY MSYNC_GEN MSYNC_REPLAY MSR_MEMLAT
"""

import importlib.util
import os
import subprocess
import sys
import tempfile

n = 0
failed = 0


def ok(cond, desc):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, desc))
    if not cond:
        failed += 1


sys.dont_write_bytecode = True  # no __pycache__ in the source tree
spec = importlib.util.spec_from_file_location("bench", sys.argv[1])
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

# --- paired ratios: (wall, cpu, rss) per round --------------------------------
ok(bench.paired([(2, 4, 0), (3, 9, 0)], [(1, 2, 0), (1, 3, 0)], 0) ==
   (2.5, 2.0, 3.0), "paired: median and range of the rounds' own ratios")
# a slow spell doubles check alone in round 2 and both runs in round 3: the
# median of the paired ratios says 3, the ratio of the medians would say 6
ok(bench.paired([(3, 3, 0), (6, 6, 0), (6, 6, 0)],
                [(1, 1, 0), (1, 1, 0), (2, 2, 0)], 0) == (3.0, 3.0, 6.0),
   "paired: a spell that slows both runs of a round cancels out")
ok(bench.paired([(1, 1, 0)], [(0, 0, 0)], 1) == (0.0, 0.0, 0.0),
   "paired: a zero denominator gives no ratio, not an error")


# --- targets: one line each, met or not ---------------------------------------
def made_up(xw, per_cpu_s, rss_mib, x2):
    """Random traces of 10M, 20M and 50M events whose check takes xw times
    the floor's wall time, runs at per_cpu_s events per CPU second (x2 times
    that CPU at 20M) and peaks at rss_mib (the 10M run; +1 MiB at 50M)."""
    traces, results = [], {}
    for events in (10000000, 20000000, 50000000):
        traces.append({"variant": "random", "events": events})
        cpu = events / per_cpu_s
        if events == 20000000:
            cpu = x2 * 10000000 / per_cpu_s
        rss = (rss_mib + (1 if events == 50000000 else 0)) * 1024
        results[("random", events, "floor")] = [(0.5, 0.5, 6000)] * 3
        results[("random", events, "check")] = [(0.5 * xw, cpu, rss)] * 3
    return traces, results, {"random": 10000000}


lines = bench.targets(*made_up(2.9, 16e6, 40, 2.0))
ok(len(lines) == 6 and lines[0] == "targets:" and
   all(line.startswith("  met ") for line in lines[1:]),
   "every target met: six lines, each says met")
ok("random 10M 2.90 (2.90-2.90)" in lines[1] and "random 50M 16.0M" in lines[2],
   "the lines give the figures they were judged on")
lines = bench.targets(*made_up(3.2, 16e6, 40, 2.0))
ok(lines[1].startswith("  NOT met check wall <= 3x") and
   lines[2].startswith("  met "), "3.2x the floor: that target alone not met")
lines = bench.targets(*made_up(2.9, 14e6, 40, 2.0))
ok(lines[2].startswith("  NOT met check >= 15M"), "14M events per CPU second: not met")
ok(len(lines) == 7 and lines[6] ==
   "  the 15M target against the floor: zstd alone decompresses random 10M "
   "20.0M, random 20M 40.0M, random 50M 100.0M events per CPU second; that "
   "leaves the replay 17 to 57 ns of CPU an event, where it takes 21 to 61",
   "rate not met: a line gives the floor's own rate and the replay's budget")
traces, results, smallest = made_up(2.9, 14e6, 40, 2.0)
results[("random", 10000000, "floor")] = [(0.8, 0.8, 6000)] * 3
line = bench.targets(traces, results, smallest)[6]
ok("random 10M 12.5M," in line and "leaves the replay 0 to 57 ns" in line and
   line.endswith("; below 15M for random 10M, where no replay that "
                 "decompresses its inputs can meet it"),
   "a floor below 15M events per CPU second: no budget, and the line says so")
lines = bench.targets(*made_up(2.9, 16e6, 130, 2.0))
ok(lines[3].startswith("  NOT met peak RSS <= 128 MiB") and
   lines[4].startswith("  met "), "131 MiB at 50M: over the bound, still flat")
lines = bench.targets(*made_up(2.9, 16e6, 8, 2.0))
ok(lines[4].startswith("  NOT met the same RSS"), "8 against 9 MiB: not flat")
lines = bench.targets(*made_up(2.9, 16e6, 40, 2.3))
ok(lines[5].startswith("  NOT met 2x events") and "random 2.30" in lines[5],
   "2.3x the CPU time for 2x events: not met")

# rounds on both sides of a bound: the figure is marked, and a note says so
traces, results, smallest = made_up(2.9, 16e6, 40, 2.0)
results[("random", 10000000, "check")] = [(1.3, 0.625, 40960), (1.45, 0.625, 40960),
                                          (1.6, 0.625, 40960)]
lines = bench.targets(traces, results, smallest)
ok(lines[1].startswith("  met ") and "random 10M 2.90 (2.60-3.20)*" in lines[1] and
   "random 20M 2.90 (2.90-2.90)," in lines[1] and
   lines[-1].startswith("  * some rounds fell on the other side of the bound"),
   "a round on the other side of a bound: its figure marked, and a note")
ok(not any("*" in line for line in bench.targets(*made_up(2.9, 16e6, 40, 2.0))),
   "rounds all on one side: no mark, no note")
results[("random", 10000000, "check")] = [(1.45, 0.5, 40960), (1.45, 0.625, 40960),
                                          (1.45, 0.75, 40960)]
lines = bench.targets(traces, results, smallest)
ok("random 2.00 (1.67-2.50)*" in lines[5],
   "2x events: a band overrun on both sides is marked")

ok(bench.smallest_sizes([{"variant": "random", "events": 20000000},
                         {"variant": "random", "events": 10000000},
                         {"variant": "hot", "events": 20000000}]) ==
   {"random": 10000000, "hot": 20000000},
   "x_size and the 2x target: against each shape's smallest size, "
   "in whatever order the sizes are listed")

# --- options from the environment ---------------------------------------------
ok(bench.options_from_env({}) ==
   ([10000000, 20000000, 50000000], ["random", "hot", "large", "deep", "faulty"], 5),
   "options: the defaults")
ok(bench.options_from_env({"MSR_BENCH_EVENTS": "200k 1.5M 7000 1G",
                           "MSR_BENCH_VARIANTS": "hot", "MSR_BENCH_REPEAT": "2"}) ==
   ([200000, 1500000, 7000, 1000000000], ["hot"], 2),
   "options: sizes with k, M, G or none")


def refused(env, name):
    """options_from_env exits with a message naming the variable."""
    try:
        bench.options_from_env(env)
    except SystemExit as e:
        return name in str(e.code)
    return False


ok(all(refused({"MSR_BENCH_EVENTS": v}, "MSR_BENCH_EVENTS")
       for v in ("1Q", "0", "-5k", "", "10M x", "G", "1T")),
   "options: a size that is not a positive number of events is refused")
ok(all(refused({"MSR_BENCH_REPEAT": v}, "MSR_BENCH_REPEAT")
       for v in ("0", "x", "-1", "2.5", "")),
   "options: rounds must be a whole number, 1 or more")
ok(refused({"MSR_BENCH_VARIANTS": "random cold"}, "unknown variant cold") and
   refused({"MSR_BENCH_VARIANTS": " "}, "MSR_BENCH_VARIANTS"),
   "options: an unknown or no shape is refused")

# --- settings: what the figures depend on ------------------------------------
with tempfile.TemporaryDirectory() as d:
    thp = os.path.join(d, "enabled")
    with open(thp, "w") as f:
        f.write("always [madvise] never\n")
    ok(bench.settings({"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}, thp) ==
       "transparent huge pages madvise, GLIBC_TUNABLES glibc.malloc.hugetlb=1",
       "settings: the huge-page mode in brackets and the glibc tunables")
    ok(bench.settings({}, os.path.join(d, "absent")) ==
       "transparent huge pages unknown, GLIBC_TUNABLES unset",
       "settings: no huge-page file and no tunables")

# --- the machine line: model, L2 and L3 ------------------------------------
with tempfile.TemporaryDirectory() as d:
    info = os.path.join(d, "cpuinfo")
    with open(info, "w") as f:
        f.write("processor\t: 0\ncpu family\t: 25\nmodel\t\t: 1\n"
                "model name\t: AMD EPYC\n\nprocessor\t: 1\n"
                "model name\t: other\n")
    cache = os.path.join(d, "cache")
    for idx, level, size in (("index0", "1", "32K"), ("index2", "2", "512K"),
                             ("index3", "3", "32768K")):
        os.makedirs(os.path.join(cache, idx))
        for name, value in (("level", level), ("size", size)):
            with open(os.path.join(cache, idx, name), "w") as f:
                f.write(value + "\n")
    with open(os.path.join(cache, "uevent"), "w") as f:
        f.write("")
    ok(bench.cpu_model(info, cache) ==
       "AMD EPYC (family 25 model 1), L2 512K per core, L3 32768K",
       "cpu_model: the first processor's model, its L2 and its L3")
    ok(bench.cpu_model(os.path.join(d, "none"), os.path.join(d, "none")) ==
       "unknown CPU", "cpu_model: nothing to read is an unknown CPU, not an error")

# GNU time's 10 ms steps: a tiny trace's check can read 0 CPU seconds
tr, res, sm = made_up(2.9, 16e6, 40, 2.0)
res[("random", 10000000, "check")] = [(1.0, 0.0, 40 * 1024)] * 3
lines = bench.targets(tr, res, sm)
ok(lines[2].startswith("  NOT met check >= 15M events per CPU second: "
                       "random 10M (under 10 ms of CPU: no rate), random 20M"),
   "targets: a check timed at 0 CPU seconds gives no rate and no verdict")

# --- each round's own ratios --------------------------------------------------
rt = [{"variant": "random", "events": 10000420},
      {"variant": "hot", "events": 20000550}]
rr = {("random", 10000420, "floor"): [(0.5, 0.5, 0), (0.4, 0.4, 0)],
      ("random", 10000420, "check"): [(1.5, 3.0, 0), (2.0, 3.0, 0)],
      ("hot", 20000550, "floor"): [(1.0, 1.0, 0), (0.0, 0.0, 0)],
      ("hot", 20000550, "check"): [(2.5, 4.0, 0), (3.0, 4.0, 0)]}
ok(bench.round_ratios(rt, rr, 0) ==
   "  check / floor in wall time: random 10M 3.00, hot 20M 2.50",
   "round_ratios: the round's own wall-time ratio of every trace")
ok(bench.round_ratios(rt, rr, 1) ==
   "  check / floor in wall time: random 10M 5.00",
   "round_ratios: a floor of 0 s gives no ratio for its trace")
ok(bench.round_ratios(rt, rr, 2) == "" and bench.round_ratios(rt, {}, 0) == "",
   "round_ratios: a round not run yet gives no line")

# --- the memory probe ----------------------------------------------------------
ok(bench.parse_memlat("1 MiB 9.3 ns, 4 MiB 144.3 ns, 16 MiB 158.1 ns\n") ==
   [("1 MiB", 9.3), ("4 MiB", 144.3), ("16 MiB", 158.1)],
   "parse_memlat: msr-memlat's line, size by size")
ok(bench.parse_memlat("") == [] and bench.parse_memlat("1 MiB fast") == [] and
   bench.parse_memlat("1 MiB x ns") == [],
   "parse_memlat: anything else is no figures, not an error")
ok(bench.memory_line([[("1 MiB", 9.0), ("4 MiB", 15.0)], [],
                      [("1 MiB", 11.0), ("4 MiB", 144.0)],
                      [("1 MiB", 10.0), ("4 MiB", 80.0)]]) ==
   "memory latency before each round (median, range): "
   "1 MiB 10 ns (9-11), 4 MiB 80 ns (15-144)",
   "memory_line: each size's median and range; a failed probe is left out")
ok(bench.memory_line([]) == "" and bench.memory_line([[]]) == "",
   "memory_line: no probes, no line")
memlat = sys.argv[4]
p = subprocess.run([memlat, "64k", "256k"], capture_output=True, text=True)
figs = bench.parse_memlat(p.stdout)
ok(p.returncode == 0 and [f[0] for f in figs] == ["64 KiB", "256 KiB"] and
   all(0 < f[1] < 10000 for f in figs),
   "msr-memlat: one figure a size asked for, in nanoseconds")
p = subprocess.run([memlat, "4M", "3q"], capture_output=True, text=True)
ok(p.returncode == 2 and p.stdout == "" and "bad size '3q'" in p.stderr,
   "msr-memlat: a bad size is exit 2 and a message, before any measuring")

# --- one real run, tiny -------------------------------------------------------
with tempfile.TemporaryDirectory(prefix="msr-bench-test-") as work:
    env = dict(os.environ, MSR_BENCH_EVENTS="20k 40k", MSR_BENCH_VARIANTS="random",
               MSR_BENCH_REPEAT="1", MSR_BENCH_DIR=work)
    if not os.access("/usr/bin/time", os.X_OK):
        print("ok %d # SKIP GNU time (/usr/bin/time) is not installed" % (n + 1))
        n += 1
    else:
        p = subprocess.run([sys.executable, sys.argv[1], sys.argv[2], sys.argv[3],
                            memlat], env=env, capture_output=True, text=True)
        out = p.stdout.splitlines()
        rows = [line.split() for line in out if line.startswith("random ")]
        at = [i for i, line in enumerate(out)
              if line.startswith("targets (stated for 10M to 50M events")]
        block = []
        for line in out[at[0] + 1 if at else len(out):]:
            if not line.startswith("  "):
                break
            block.append(line)
        ok(p.returncode == 0 and len(rows) == 8 and
           out[1].startswith("settings: transparent huge pages ") and
           [r[2] for r in rows[:4]] == ["floor", "stat", "no-tso", "check"] and
           sum(line.startswith(("  met ", "  NOT met ")) for line in block) == 5 and
           out[-1].startswith("memory latency before each round (median, "
                              "range): 1 MiB ") and "16 MiB" in out[-1] and
           any(line.startswith("round 1/1, memory 1 MiB ") for line in out) and
           any(line.startswith("  check / floor in wall time: random 20k ") and
               "random 40k " in line for line in out),
           "a real run: its settings, four commands a size, the five targets, "
           "the memory probe and the round's ratios")
        if p.returncode != 0 or len(rows) != 8:
            print("# " + "\n# ".join((p.stdout + p.stderr).splitlines()[-15:]))

print("1..%d" % n)
sys.exit(1 if failed else 0)
