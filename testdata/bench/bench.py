#!/usr/bin/env python3
"""msync-replay throughput and memory benchmark.

Generates clean traces with msync-gen (random program on 8 cores x 8 strands,
in several shapes and sizes), then measures in one run, alternating the
commands (in reverse order every second round) and repeating each round:

  floor    zstd -dc TRACE > /dev/null  plus  zstd -dc STEPS > /dev/null
  stat     msync-replay stat TRACE
  no-tso   msync-replay check TRACE --steps STEPS --no-tso
  check    msync-replay check TRACE --steps STEPS

Every command runs alone (never two at once); its CPU time (user+sys) and
peak RSS come from wait4(2), its wall time from a monotonic clock. The table
shows the median of the repeats, events per CPU second, the ratios
check/floor in CPU time (x_floor) and in wall time (xw_floor) and the scaling
ratio of each size against the smallest one; a ratio is the median of each
round's own ratio, so that a slow spell of a shared machine, which slows
both runs of a round alike, mostly cancels out. Then one line per target
(check <= 3x the floor in wall time, >= 15M events per CPU second, peak RSS
<= 128 MiB and flat from the smallest to the largest size, 2x events for 2x
the CPU time), met or not, with the figures and their range over the
rounds. CPU time is the figure to
compare on a busy machine: wall time includes waiting for a core. `check`
decompresses on a helper thread, so its wall time can be below its CPU time
when a second core is free; xw_floor is the figure for one replay's latency,
x_floor for a farm's throughput (every core busy).

After each round it prints that round's check / floor ratio (wall time)
for every trace. With a third argument, the msr-memlat probe built beside
this script, it measures the machine's latency of a random read at 1, 4
and 16 MiB before every round, prints it on the round's first line and
ends with their medians and ranges: a replay's speed
follows them (a virtual machine whose last-level cache neighbours have
taken slows `check` two- to threefold and the floor hardly at all), so a
run is read together with that line.

`bench.py --shape-options SHAPE` prints one shape's msync-gen options.

It only reads the binaries it is given and writes under the work directory,
which it removes at the end unless MSR_BENCH_KEEP=1.

Environment:
  MSR_BENCH_EVENTS    sizes, e.g. "10M 20M 50M" (default), "200k 400k" or "1G",
                      run in the order given (x_size: against the smallest)
  MSR_BENCH_VARIANTS  shapes (default "random hot large deep faulty"); the extra
                      shapes run only at the two smallest sizes
  MSR_BENCH_REPEAT    rounds (default 5)
  MSR_BENCH_DIR       work directory (default /tmp/msr-bench)
  MSR_BENCH_KEEP      1 = keep the generated traces, and reuse the ones an
                      earlier run kept in MSR_BENCH_DIR

Needs zstd(1) and GNU time (/usr/bin/time).
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TIME = "/usr/bin/time"

# Generator options of each shape; all run on the default 8x8 system.
VARIANTS = {
    # default random mix, 64 KiB pool, half the accesses on 16 hot lines
    "random": [],
    # hot-line contention: 90 % of accesses on 4 lines, store-heavy
    "hot": ["--hot-lines", "4", "--hot-rate", "0.9",
            "--mix", "ld=30,st=40,cas=8,swap=4,ldstub=2,membar=4,nop=4"],
    # large footprint: 16 MiB pool, few hot accesses
    "large": ["--footprint", "16M", "--hot-rate", "0.05"],
    # deep store buffers: 32 entries per strand, store-heavy, few fences,
    # so up to 64 x 32 stores are in flight (>= 512 operations)
    "deep": ["--stb-depth", "32", "--hot-rate", "0.2",
             "--mix", "ld=20,st=70,stblk=4,stbi=2,nop=4"],
    # a failing seed: the hot shape losing an invalidation every 5,000
    # instructions or so; each lost one holds the MAB (and with it every
    # store of every strand) until the window of 65536 entries gives it
    # up. (msync-gen injects at most 2048 faults: the 20M trace stays
    # under that, so both sizes have the same density.)
    "faulty": ["--hot-lines", "4", "--hot-rate", "0.9",
               "--mix", "ld=30,st=40,cas=8,swap=4,ldstub=2,membar=4,nop=4",
               "--inject", "lost-inv:0.0002"],
}


def parse_size(text):
    """"10M" -> 10000000, "200k" -> 200000, "1G" -> 10**9, "5000" -> 5000;
    None unless a positive number of events."""
    text = text.strip().lower()
    mult = 1
    suffixes = {"k": 1000, "m": 1000000, "g": 1000000000}
    if text[-1:] in suffixes:
        mult, text = suffixes[text[-1]], text[:-1]
    try:
        n = int(float(text) * mult)
    except (ValueError, OverflowError):
        return None
    return n if n > 0 else None


def options_from_env(env):
    """(sizes, variants, repeat) from MSR_BENCH_*; exits with a message
    naming the variable when one is not usable."""
    words = env.get("MSR_BENCH_EVENTS", "10M 20M 50M").split()
    sizes = [parse_size(w) for w in words]
    if not sizes or None in sizes:
        sys.exit("bench: MSR_BENCH_EVENTS=%r: expected sizes such as "
                 "\"10M 20M 50M\", \"200k 400k\" or \"1G\"" %
                 env.get("MSR_BENCH_EVENTS", ""))
    variants = env.get("MSR_BENCH_VARIANTS",
                       "random hot large deep faulty").split()
    if not variants:
        sys.exit("bench: MSR_BENCH_VARIANTS is empty: expected shapes from "
                 "%s" % " ".join(VARIANTS))
    for v in variants:
        check_variant(v)
    text = env.get("MSR_BENCH_REPEAT", "5")
    if not text.strip().isdigit() or int(text) < 1:
        sys.exit("bench: MSR_BENCH_REPEAT=%r: expected a number of rounds, "
                 "1 or more" % text)
    return sizes, variants, int(text)


def run(argv, stdout=subprocess.DEVNULL):
    """Run one command alone; return (rc, wall, cpu, maxrss_kib, stderr).

    The command runs under /usr/bin/time: a child forked straight from this
    interpreter would report the interpreter's resident size as its peak.
    """
    with tempfile.NamedTemporaryFile("r", prefix="msr-bench-") as tf:
        t0 = time.monotonic()
        proc = subprocess.run([TIME, "-q", "-f", "%U %S %M", "-o", tf.name] +
                              argv, stdout=stdout, stderr=subprocess.PIPE)
        wall = time.monotonic() - t0
        fields = tf.read().split()[-3:]
    user, system, rss = float(fields[0]), float(fields[1]), int(fields[2])
    return proc.returncode, wall, user + system, rss, proc.stderr


def generate(gen, work, variant, events):
    base = os.path.join(work, "%s-%d" % (variant, events))
    trace, steps = base + ".trace.zst", base + ".steps.zst"
    argv = [gen, "-o", trace, "--steps", steps, "--events", str(events),
            "--seed", "11"] + VARIANTS[variant]
    count = base + ".events"
    if os.environ.get("MSR_BENCH_KEEP") == "1" and all(
            os.path.exists(f) for f in (trace, steps, count)):
        # kept by an earlier run with the same options: same bytes
        with open(count) as f:
            real = int(f.read())
        print("reusing   %-6s %10d events (%s)" % (variant, real, trace),
              flush=True)
        return {"variant": variant, "events": real, "trace": trace,
                "steps": steps, "report": base + ".yaml"}
    rc, wall, cpu, _, err = run(argv)
    if rc != 0:
        sys.exit("bench: msync-gen failed (%d): %s" % (rc, err.decode()))
    # "msync-gen: N events, ..." on the first summary line
    real = events
    for line in err.decode().splitlines():
        if line.startswith("msync-gen:") and " events" in line:
            real = int(line.split()[1])
            break
    with open(count, "w") as f:
        f.write("%d\n" % real)
    print("generated %-6s %10d events in %6.1f s cpu (%s, %s)" % (
        variant, real, cpu, fmt_bytes(os.path.getsize(trace)),
        fmt_bytes(os.path.getsize(steps))), flush=True)
    return {"variant": variant, "events": real, "trace": trace,
            "steps": steps, "report": base + ".yaml"}


def fmt_events(n):
    """10000420 -> "10M", 200339 -> "200k": a size as MSR_BENCH_EVENTS
    names it."""
    return "%dM" % round(n / 1e6) if n >= 1e6 else "%dk" % round(n / 1e3)


def fmt_bytes(n):
    return "%.1f MiB" % (n / 1048576.0)


def commands(replay, t):
    return [
        ("floor", [["zstd", "-q", "-dc", t["trace"]],
                   ["zstd", "-q", "-dc", t["steps"]]]),
        ("stat", [[replay, "stat", t["trace"]]]),
        ("no-tso", [[replay, "check", t["trace"], "--steps", t["steps"],
                     "--no-tso", "--quiet", "-o", t["report"]]]),
        ("check", [[replay, "check", t["trace"], "--steps", t["steps"],
                    "--quiet", "-o", t["report"]]]),
    ]


def parse_memlat(text):
    """msr-memlat's line ("1 MiB 9.3 ns, 4 MiB 144.3 ns") as [(size, ns)]:
    [("1 MiB", 9.3), ("4 MiB", 144.3)]; [] for anything else."""
    out = []
    for part in text.strip().split(", "):
        words = part.split()
        if len(words) != 4 or words[3] != "ns":
            return []
        try:
            out.append((words[0] + " " + words[1], float(words[2])))
        except ValueError:
            return []
    return out


def probe_memory(memlat):
    """One msr-memlat run, parsed; [] when there is no probe or it fails."""
    if not memlat:
        return []
    p = subprocess.run([memlat], capture_output=True, text=True)
    return parse_memlat(p.stdout) if p.returncode == 0 else []


def memory_figures(figs):
    """One probe's figures for a round's line ("" without a probe)."""
    return (", memory " + ", ".join("%s %.0f ns" % f for f in figs)
            if figs else "")


def memory_line(probes):
    """The probes of all rounds in one line: each size's median latency and
    its range over the rounds ("" when there were none)."""
    probes = [p for p in probes if p]
    if not probes or any(len(p) != len(probes[0]) for p in probes):
        return ""
    parts = []
    for i, (size, _) in enumerate(probes[0]):
        ns = [p[i][1] for p in probes]
        parts.append("%s %.0f ns (%.0f-%.0f)" % (
            size, statistics.median(ns), min(ns), max(ns)))
    return ("memory latency before each round (median, range): " +
            ", ".join(parts))


def round_ratios(traces, results, r):
    """Round r's check / floor in wall time, trace by trace, for the line
    after the round, to read beside the probe taken before it ("" when no
    trace has both runs of round r)."""
    parts = []
    for t in traces:
        key = (t["variant"], t["events"])
        floor = results.get(key + ("floor",), [])
        check = results.get(key + ("check",), [])
        if len(floor) > r and len(check) > r and floor[r][0]:
            parts.append("%s %s %.2f" % (t["variant"], fmt_events(t["events"]),
                                         check[r][0] / floor[r][0]))
    return ("  check / floor in wall time: " + ", ".join(parts)
            if parts else "")


def measure(replay, traces, repeat, memlat=None, probes=None):
    """results[(variant, events, name)] = list of (wall, cpu, rss_kib).
    With `memlat`, the memory probe runs before each round and its figures
    are appended to `probes`."""
    results = {}
    for r in range(repeat):
        figs = probe_memory(memlat)
        if probes is not None:
            probes.append(figs)
        # each round's latency beside it, to read against its ratios
        print("round %d/%d%s" % (r + 1, repeat, memory_figures(figs)),
              flush=True)
        for t in traces:
            # every second round backwards: a command that tends to run
            # faster or slower right after another one biases no ratio
            cmds = commands(replay, t)
            for name, argvs in (cmds[::-1] if r % 2 else cmds):
                wall = cpu = 0.0
                rss = 0
                for argv in argvs:
                    rc, w, c, m, err = run(argv)
                    # check's exit 1 is a report with violations
                    if rc != 0 and not (rc == 1 and argv[1] == "check"):
                        print("bench: warning: %s exit %d: %s" % (
                            " ".join(argv), rc, err.decode().strip()),
                            flush=True)
                    wall, cpu, rss = wall + w, cpu + c, max(rss, m)
                key = (t["variant"], t["events"], name)
                results.setdefault(key, []).append((wall, cpu, rss))
        line = round_ratios(traces, results, r)
        if line:
            print(line, flush=True)
    return results


def paired(num, den, field):
    """The median over rounds of num[r] / den[r] (field 0 wall, 1 cpu), and
    its range: the two runs of a round are minutes apart at most, so a
    slow spell of a shared machine mostly cancels out of each ratio."""
    ratios = [a[field] / b[field] for a, b in zip(num, den) if b[field]]
    if not ratios:
        return 0.0, 0.0, 0.0
    return statistics.median(ratios), min(ratios), max(ratios)


def smallest_sizes(traces):
    """Each shape's smallest size: x_size and the 2x target are taken
    against it, in whatever order MSR_BENCH_EVENTS lists the sizes (and
    so runs them)."""
    smallest = {}
    for t in traces:
        v = t["variant"]
        smallest[v] = min(smallest.get(v, t["events"]), t["events"])
    return smallest


def report(traces, results, repeat):
    print()
    print("medians of %d rounds; cpu = user+sys of the process; "
          "ev/s = events per cpu second" % repeat)
    print("%-7s %10s %-7s %8s %8s %10s %9s %7s %8s %7s" % (
        "shape", "events", "command", "wall_s", "cpu_s", "ev/s",
        "rss_MiB", "x_floor", "xw_floor", "x_size"))
    smallest = smallest_sizes(traces)
    for t in traces:
        v, n = t["variant"], t["events"]
        floor = results[(v, n, "floor")]
        for name in ("floor", "stat", "no-tso", "check"):
            rows = results[(v, n, name)]
            wall = statistics.median(w for w, _, _ in rows)
            cpu = statistics.median(c for _, c, _ in rows)
            rss = max(m for _, _, m in rows) / 1024.0
            base = results.get((v, smallest[v], name))
            scale = ""
            if base and n != smallest[v]:
                scale = "%.2f" % paired(rows, base, 1)[0]
            print("%-7s %10d %-7s %8.2f %8.2f %10.0f %9.1f %7.2f %8.2f %7s" % (
                v, n, name, wall, cpu, n / cpu if cpu else 0, rss,
                paired(rows, floor, 1)[0], paired(rows, floor, 0)[0], scale))
    print()
    print("x_floor = cpu / cpu(floor) of the same trace; xw_floor = wall / "
          "wall(floor); x_size = cpu / "
          "cpu at the smallest size of the shape (events ratio: %s); each "
          "the median of the rounds' own ratios" %
          ", ".join("%s %.2f" % (t["variant"],
                                  t["events"] / smallest[t["variant"]])
                    for t in traces if t["events"] != smallest[t["variant"]]))
    print()
    for line in targets(traces, results, smallest):
        print(line)


def rate_budget(cpus, results):
    """What the 15M events per CPU second target leaves the replay on this
    machine: a check decompresses the same inputs as the floor, so it can
    run no faster than the floor, and whatever CPU the floor takes an
    event comes off the 67 ns the target allows. `cpus`: each trace with
    the median CPU seconds of its check."""
    floor_rates, budgets, used = [], [], []
    for t, check in cpus:
        floor = statistics.median(
            c for _, c, _ in results[(t["variant"], t["events"], "floor")])
        if not floor:
            continue
        floor_rates.append((t, t["events"] / floor))
        budgets.append(max(0.0, 1e9 / 15e6 - floor * 1e9 / t["events"]))
        used.append(max(0.0, (check - floor) * 1e9 / t["events"]))
    if not floor_rates:
        return ("  the floor took under 10 ms of CPU: no budget for the "
                "15M target")
    line = ("  the 15M target against the floor: zstd alone decompresses "
            "%s events per CPU second; that leaves the replay %.0f to %.0f "
            "ns of CPU an event, where it takes %.0f to %.0f" % (
                ", ".join("%s %s %.1fM" % (t["variant"],
                                           fmt_events(t["events"]), r / 1e6)
                          for t, r in floor_rates),
                min(budgets), max(budgets), min(used), max(used)))
    short = [t for t, r in floor_rates if r < 15e6]
    if short:
        line += ("; below 15M for %s, where no replay that decompresses its "
                 "inputs can meet it" % ", ".join(
                     "%s %s" % (t["variant"], fmt_events(t["events"]))
                     for t in short))
    return line


def targets(traces, results, smallest):
    """One line per target of the benchmark's brief: met or not, and the
    figures it was judged on (ratios: median and range over rounds)."""
    def verdict(ok):
        return "met    " if ok else "NOT met"

    def rng(m, lo, hi, meets):
        """The median and range; '*' when a round fell on the other side
        of the bound than the median."""
        mark = "" if meets(lo) == meets(m) == meets(hi) else "*"
        return "%.2f (%.2f-%.2f)%s" % (m, lo, hi, mark)

    def within3(x):
        return x <= 3.0

    def within2(x):
        return 1.8 <= x <= 2.2

    lines = ["targets:" if min(t["events"] for t in traces) >= 10e6 else
             "targets (stated for 10M to 50M events; below that a process's "
             "fixed costs weigh on every ratio):"]
    walls = [(t, paired(results[(t["variant"], t["events"], "check")],
                        results[(t["variant"], t["events"], "floor")], 0))
             for t in traces]
    lines.append("  %s check wall <= 3x the floor: %s" % (
        verdict(all(within3(r[0]) for _, r in walls)),
        ", ".join("%s %s %s" % (t["variant"], fmt_events(t["events"]),
                                 rng(*r, within3)) for t, r in walls)))
    # GNU time counts CPU time in 10 ms steps: a tiny trace's check may
    # read 0, which gives no rate (and no verdict) rather than an error
    cpus = [(t, statistics.median(
        c for _, c, _ in results[(t["variant"], t["events"], "check")]))
        for t in traces]
    rates = [(t, t["events"] / c if c else None) for t, c in cpus]
    rate_met = all(r is not None and r >= 15e6 for _, r in rates)
    lines.append("  %s check >= 15M events per CPU second: %s" % (
        verdict(rate_met),
        ", ".join("%s %s %s" % (t["variant"], fmt_events(t["events"]),
                                "%.1fM" % (r / 1e6) if r is not None else
                                "(under 10 ms of CPU: no rate)")
                  for t, r in rates)))
    first = traces[0]["variant"]
    sizes = sorted(t["events"] for t in traces if t["variant"] == first)
    rss = {n: max(m for _, _, m in results[(first, n, "check")]) / 1024.0
           for n in sizes}
    big, small = sizes[-1], sizes[0]
    lines.append("  %s peak RSS <= 128 MiB at the largest size: %s %s "
                 "%.1f MiB" % (verdict(rss[big] <= 128), first,
                               fmt_events(big), rss[big]))
    if big != small:
        lines.append("  %s the same RSS (+-10 %%) at %s and %s: %.1f / "
                     "%.1f MiB" % (verdict(abs(rss[small] / rss[big] - 1)
                                           <= 0.10), fmt_events(small),
                                   fmt_events(big), rss[small], rss[big]))
    doubles = [(t, paired(results[(t["variant"], t["events"], "check")],
                          results[(t["variant"], smallest[t["variant"]],
                                   "check")], 1))
               for t in traces
               if abs(t["events"] / smallest[t["variant"]] - 2) < 0.1]
    if doubles:
        lines.append("  %s 2x events = 1.8 to 2.2x the CPU time: %s" % (
            verdict(all(within2(r[0]) for _, r in doubles)),
            ", ".join("%s %s" % (t["variant"], rng(*r, within2))
                      for t, r in doubles)))
    if not rate_met:
        lines.append(rate_budget(cpus, results))
    if any("*" in line for line in lines):
        lines.append("  * some rounds fell on the other side of the bound "
                     "than the median: more rounds (MSR_BENCH_REPEAT) would "
                     "settle it")
    return lines


def cpu_model(cpuinfo="/proc/cpuinfo",
              cache="/sys/devices/system/cpu/cpu0/cache"):
    """The CPU's model name and its L2 (per core) and L3 sizes, as far as
    Linux tells them: the ratios to the floor differ between machines, and
    a replay's tables spill out of the L2 into the L3, so a result is read
    together with this line."""
    model, fam, sizes = "unknown CPU", {}, {}
    try:
        with open(cpuinfo) as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "":
                    break  # the first processor is enough
                if key in ("model name", "cpu family", "model"):
                    fam[key] = value.strip()
    except OSError:
        pass
    if "model name" in fam:
        model = fam["model name"]
    if "cpu family" in fam and "model" in fam:
        model += " (family %s model %s)" % (fam["cpu family"], fam["model"])
    try:
        for idx in sorted(os.listdir(cache)):
            try:
                with open(os.path.join(cache, idx, "level")) as f:
                    level = f.read().strip()
                with open(os.path.join(cache, idx, "size")) as f:
                    sizes[level] = f.read().strip()
            except OSError:
                continue  # not a cache index (uevent), or one without a size
    except OSError:
        pass
    if "2" in sizes:
        model += ", L2 %s per core" % sizes["2"]
    if "3" in sizes:
        model += ", L3 %s" % sizes["3"]
    return model


def settings(env=None, thp="/sys/kernel/mm/transparent_hugepage/enabled"):
    """The system and environment settings that move the figures: whether
    transparent huge pages may back the large tables, and GLIBC_TUNABLES
    (glibc.malloc.hugetlb=1 puts the whole heap on them)."""
    env = os.environ if env is None else env
    mode = "unknown"
    try:
        with open(thp) as f:
            text = f.read()
        # "always [madvise] never": the bracketed word is the mode
        if "[" in text and "]" in text:
            mode = text[text.index("[") + 1:text.index("]")]
    except OSError:
        pass
    return "transparent huge pages %s, GLIBC_TUNABLES %s" % (
        mode, env.get("GLIBC_TUNABLES") or "unset")


def check_variant(name):
    """Exit with a message unless `name` is a shape of VARIANTS."""
    if name not in VARIANTS:
        sys.exit("bench: unknown variant %s: expected one of %s" %
                 (name, " ".join(VARIANTS)))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--shape-options":
        # one shape's generator options, for screen.sh
        check_variant(sys.argv[2])
        print(" ".join(VARIANTS[sys.argv[2]]))
        return
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: bench.py MSYNC_GEN MSYNC_REPLAY [MSR_MEMLAT]\n"
                 "       bench.py --shape-options SHAPE")
    gen, replay = sys.argv[1], sys.argv[2]
    memlat = sys.argv[3] if len(sys.argv) == 4 else None
    sizes, variants, repeat = options_from_env(os.environ)
    work = os.environ.get("MSR_BENCH_DIR", "/tmp/msr-bench")
    if not os.access(TIME, os.X_OK):
        sys.exit("bench: %s (GNU time) is needed to measure peak RSS" % TIME)
    if not shutil.which("zstd"):
        sys.exit("bench: zstd(1) is needed for the floor measurement")
    os.makedirs(work, exist_ok=True)
    print("machine: %s, %s, %d cpus, load average %.2f %.2f %.2f" % (
        os.uname().machine, cpu_model(), os.cpu_count(), *os.getloadavg()),
        flush=True)
    print("settings: %s" % settings(), flush=True)
    try:
        traces = []
        for v in variants:
            for n in (sizes if v == variants[0] else sorted(sizes)[:2]):
                traces.append(generate(gen, work, v, n))
        probes = []
        results = measure(replay, traces, repeat, memlat, probes)
        report(traces, results, repeat)
        print("load average at the end %.2f %.2f %.2f" % os.getloadavg())
        line = memory_line(probes)
        if line:
            print(line)
    finally:
        if os.environ.get("MSR_BENCH_KEEP") != "1":
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
