#!/usr/bin/env python3
"""Run `msync-replay check` on one testdata/engine scenario and compare the
report with NAME.expected.yaml.

A scenario is NAME.trace (canonical text), an optional NAME.steps (ISS step
log) and NAME.expected.yaml holding:
  args:       extra check options (optional)
  summary:    summary fields that must match exactly (e.g. complete, loads)
  violations: the violations in the order found; only the fields given are
              compared (kind, strand, iseq, pa, expected, observed, ...), so
              timings, events and messages may change freely.
The expected exit code follows from them: 2 when complete is false, else 1
when violations are expected, else 0. Every report is also checked for the
invariants of its layout (ids, fingerprints, quoting of hex values).

usage: compare.py MSYNC_REPLAY SCENARIO_DIR NAME
"""
import os
import re
import subprocess
import sys
import tempfile

import yaml


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_layout(rep):
    for key in ("tool", "inputs", "config", "summary", "violations"):
        if key not in rep:
            fail("report lacks section %r" % key)
    if rep["tool"].get("name") != "msync-replay":
        fail("tool.name is %r" % rep["tool"].get("name"))
    s = rep["summary"]
    if not isinstance(s.get("complete"), bool):
        fail("summary.complete is not a boolean")
    for i, v in enumerate(rep["violations"] or []):
        if v.get("id") != "V%d" % (i + 1):
            fail("violation %d has id %r" % (i + 1, v.get("id")))
        fp = v.get("fingerprint")
        if not isinstance(fp, str) or not re.fullmatch(r"[0-9a-f]{16}", fp):
            fail("violation %d fingerprint %r is not 16 hex digits" % (i + 1, fp))
        for k in ("pa", "pc", "expected", "observed"):
            if k in v and not (isinstance(v[k], str) and v[k].startswith("0x")):
                fail("violation %d field %s=%r is not a quoted hex string" % (i + 1, k, v[k]))
        if not isinstance(v.get("context", []), list):
            fail("violation %d context is not a list" % (i + 1))


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    binary, sdir, name = sys.argv[1:]
    base = os.path.join(sdir, name)
    with open(base + ".expected.yaml") as f:
        exp = yaml.safe_load(f)
    exp_viol = exp.get("violations") or []
    exp_sum = exp.get("summary") or {}
    if exp_sum.get("complete", True) is False:
        want_rc = 2
    else:
        want_rc = 1 if exp_viol else 0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.yaml")
        cmd = [binary, "check", base + ".trace", "-o", out, "--no-progress"]
        if os.path.exists(base + ".steps"):
            cmd += ["--steps", base + ".steps"]
        cmd += [str(a) for a in exp.get("args") or []]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(proc.stderr)
        if not os.path.exists(out):
            fail("no report written (exit %d)" % proc.returncode)
        with open(out) as f:
            text = f.read()
        rep = yaml.safe_load(text)
    check_layout(rep)
    problems = []
    if proc.returncode != want_rc:
        problems.append("exit code %d, expected %d" % (proc.returncode, want_rc))
    for k, v in exp_sum.items():
        if rep["summary"].get(k) != v:
            problems.append("summary.%s = %r, expected %r" % (k, rep["summary"].get(k), v))
    got = rep["violations"] or []
    for i in range(max(len(got), len(exp_viol))):
        g = got[i] if i < len(got) else None
        e = exp_viol[i] if i < len(exp_viol) else None
        if g is None:
            problems.append("V%d missing: expected %r" % (i + 1, e))
        elif e is None:
            problems.append("V%d unexpected: %s strand=%s iseq=%s pa=%s: %s" % (
                i + 1, g.get("kind"), g.get("strand"), g.get("iseq"), g.get("pa"),
                g.get("message")))
        else:
            for k, v in e.items():
                if g.get(k) != v:
                    problems.append("V%d %s = %r, expected %r (%s)" % (
                        i + 1, k, g.get(k), v, g.get("message")))
    if problems:
        print("report:\n" + text)
        fail("; ".join(problems))
    print("ok: %s (%d violations)" % (name, len(got)))


if __name__ == "__main__":
    main()
