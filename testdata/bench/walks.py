#!/usr/bin/env python3
"""walks.py - traces that make a replay walk its in-flight state, timed.

Usage: walks.py [-n N] [-d DIR] BIN [BIN2]

Writes five text traces (and a step log) whose events each find their
entry behind N entries that stay in flight, then times `check
--single-thread` of each with BIN (and BIN2, checking that both wrote the
same report apart from timing fields). A replay that walks those entries
at every event takes time quadratic in N; one that does not, linear. The
traces, with N = 60000 (the default):

  acks     N stores that never commit, then 200,000 acknowledgements
  lddata   N loads of one block issued, then their N LD_DATAs
  stcommit N stores to one block issued, then their N commits and acks
  invs     N commits to one line awaiting cores 1 and 2, core 2
           answering each at once and core 1 never, then 100,000 more
           answers of core 2
  io       a load of one I/O address, N of another, then N steps naming
           a third

Exit status: 0, or 1 when two builds' reports differ, 2 on a usage error
or when a build exits with neither 0 nor 1.
"""
import argparse
import os
import re
import subprocess
import sys
import time

TIMING = re.compile(r'^\s*(elapsed_seconds|events_per_second):.*$', re.M)


def write_traces(d, n):
    """The five traces in directory d; returns [(name, trace, steps)]."""
    out = []

    def trace(name, lines, steps=None):
        path = os.path.join(d, name + '.trace')
        with open(path, 'w') as f:
            f.write('# msync-text 1\n')
            f.writelines(lines)
        spath = None
        if steps is not None:
            spath = os.path.join(d, name + '.steps')
            with open(spath, 'w') as f:
                f.write('# msync-steps 1\n')
                f.writelines(steps)
        out.append((name, path, spath))

    def st_issue(pa, ts):
        return (f'ST_ISSUE tnum=0 pa=0x{pa:010x} data=0x0000000000000001 '
                f'bmask=0xff itype=STORE ts={ts}\n')

    def st_commit(pa, invvec, ts):
        return (f'ST_COMMIT tnum=0 pa=0x{pa:010x} bmask=0xff '
                f'invvec=0x{invvec:08x} l2hit=1 ts={ts}\n')

    def ld_issue(pa, ts):
        return f'LD_ISSUE tnum=0 pa=0x{pa:010x} size=3 itype=LOAD ts={ts}\n'

    trace('acks', [st_issue(0x100000 + 8 * i, i) for i in range(n)] +
          [f'ST_ACK tnum=0 rmo=0 ts={n + j}\n' for j in range(200000)])
    trace('lddata', [ld_issue(0x2000, i) for i in range(n)] +
          [f'LD_DATA tnum=0 pa=0x0000002000 dsrc=L2 ts={n + i}\n'
           for i in range(n)])
    trace('stcommit', [st_issue(0x2000, i) for i in range(n)] +
          [x for i in range(n) for x in
           (st_commit(0x2000, 0, n + i), f'ST_ACK tnum=0 rmo=0 ts={n + i}\n')])
    trace('invs', [x for i in range(n) for x in
                   (st_issue(0x2000, i), st_commit(0x2000, 0x6, i),
                    f'ST_INV cid=2 tnum=0 pa=0x0000002000 ts={i}\n')] +
          [f'ST_INV cid=2 tnum=0 pa=0x0000002000 ts={n + j}\n'
           for j in range(100000)])
    a, b, c = 0x8000000100, 0x8000000200, 0x8000000300
    trace('io', [ld_issue(a, 0)] + [ld_issue(b, 1 + i) for i in range(n)] +
          ['SSTEP tnum=0\n'] * n,
          [f'0 {0x1000 + 4 * j:x} ld pa={c:x} size=8\n' for j in range(n)])
    return out


def run(binary, trace, steps, report):
    cmd = [binary, 'check', trace, '--single-thread', '-o', report]
    if steps:
        cmd += ['--steps', steps]
    t0 = time.monotonic()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode
    return time.monotonic() - t0, rc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('-n', type=int, default=60000,
                    help='entries left in flight (default 60000)')
    ap.add_argument('-d', default='/tmp/msr-walks',
                    help='work directory (default /tmp/msr-walks)')
    ap.add_argument('bins', nargs='+', metavar='BIN')
    a = ap.parse_args()
    if len(a.bins) > 2 or a.n < 1:
        ap.error('one or two binaries, and N >= 1')
    os.makedirs(a.d, exist_ok=True)
    status = 0
    print(f'{"trace":10s}' + ''.join(f'{"build " + str(i + 1) + " s":>12s}'
                                    for i in range(len(a.bins))))
    for name, trace, steps in write_traces(a.d, a.n):
        secs, reports = [], []
        for i, b in enumerate(a.bins):
            rep = os.path.join(a.d, f'{name}.{i + 1}.yaml')
            s, rc = run(b, trace, steps, rep)
            if rc not in (0, 1):
                print(f'{name}: {b} exited {rc}', file=sys.stderr)
                return 2
            secs.append(s)
            with open(rep) as f:
                reports.append((rc, TIMING.sub('', f.read())))
        same = len(reports) < 2 or reports[0] == reports[1]
        if not same:
            status = 1
        print(f'{name:10s}' + ''.join(f'{s:12.2f}' for s in secs) +
              ('' if same else '   reports differ'))
    return status


if __name__ == '__main__':
    sys.exit(main())
