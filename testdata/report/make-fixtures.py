#!/usr/bin/env python3
# make-fixtures.py - writes the crafted report pairs of testdata/report that
# the diff tests compare (base, new_*, repeat_*, partial, capped, clean).
# Each violation has the fingerprint msync-replay computes for its kind,
# strand, iseq and pa (FNV-1a 64 + fmix64, see docs/check.md), so the
# fixtures look like real reports. The broken ones (not_a_report.yaml,
# bad_fingerprint.yaml, broken.yaml) are written by hand.
# Usage: python3 make-fixtures.py testdata/report
import sys

M = (1 << 64) - 1
def fp(kind,strand,iseq,pa):
    h=0xcbf29ce484222325
    for b in f"{kind}:{strand}:{iseq}:0x{pa:010x}".encode():
        h^=b; h=(h*0x100000001b3)&M
    k=h
    k^=k>>33; k=(k*0xff51afd7ed558ccd)&M; k^=k>>33; k=(k*0xc4ceb9fe1a85ec53)&M; k^=k>>33
    return f"{k:016x}"
V={
 'A':("load-value",13,5,0x102000,"strand 13 (core 1, thread 5) loaded 0x2222222222222222 from 0x102000 at cycle 812345, but the ISS saw 0x1111111111111111"),
 'B':("tso-coherence",8,3,0xe400,"strand 8 read 0xe400 from an older store after a newer one: \"co\" order broken & reported"),
 'C':("mem-check",-1,0,0x40,"MEM_CHECK at 0x40 found 0x00 where memory holds 0xff"),
 'D':("store-data",2,17,0x2008,"strand 2 stored 0x33 to 0x2008 but the ISS stored 0x44"),
 'E':("leftover",4,9,0x3000,"strand 4 load at 0x3000 was issued but never executed"),
}
def report(name, items, complete=True, total=None):
    out=["---","tool:","  name: msync-replay","  version: \"0.1.0\"","inputs:","- role: trace",f"  path: \"runs/{name}.trace.zst\"","  size: 4096","config:","  cores: 8","  threads_per_core: 8","  tso: true","summary:","  events: 1000","  steps: 200"]
    n=sum(c for _,c in items)
    kinds={}
    for k,c in items: kinds[V[k][0]]=kinds.get(V[k][0],0)+c
    out.append(f"  violations: {total if total is not None else n}")
    out.append(f"  listed: {n}")
    out.append("  per_kind:")
    for k,c in kinds.items(): out.append(f"    {k}: {c}")
    out.append(f"  complete: {'true' if complete else 'false'}")
    out.append("  elapsed_seconds: 0.012")
    out.append("violations:" if items else "violations: []")
    for i,(k,c) in enumerate(items):
        kind,strand,iseq,pa,msg=V[k]
        out.append(f"- id: V{i+1}")
        out.append(f"  kind: {kind}")
        out.append(f"  fingerprint: \"{fp(kind,strand,iseq,pa)}\"")
        if strand>=0:
            out.append(f"  strand: {strand}"); out.append(f"  core: {strand//8}")
        out.append(f"  iseq: {iseq}")
        out.append("  pc: \"0x100\"")
        out.append(f"  pa: \"0x{pa:010x}\"")
        out.append("  size: 8")
        out.append(f"  ts: {100+10*i}")
        out.append(f"  event: {7*i+3}")
        if c!=1: out.append(f"  count: {c}")
        out.append("  expected_from: {strand: 1, iseq: 2, sseq: 1, co: 4, ts: 90, event: 1}")
        msg=msg.replace('"','\\"')
        out.append(f"  message: \"{msg}\"")
        out.append("  context:")
        out.append(f"  - \"event={7*i+2} offset=0 LD_ISSUE tnum={max(strand,0)} pa=0x{pa:010x} size=3 itype=LOAD ts=99\"")
        out.append(f"  - \"event={7*i+3} offset=17 LD_DATA tnum={max(strand,0)} pa=0x{pa:010x} dsrc=L2 ts=100\"")
    out.append("...")
    open(f"{sys.argv[1]}/{name}.yaml","w").write("\n".join(out)+"\n")
one=lambda s:[(k,1) for k in s]
report("base",one("ABC"))
report("new_added",one("ABCD"))
report("new_fixed",one("AC"))
report("new_reordered",one("CBA"))
report("new_mixed",one("BDCE"))
report("repeat_base",one("AAB"))
report("repeat_new",one("AAAB"))
report("repeat_count",[('A',3),('B',1)])
report("repeat_fewer",one("AB"))
report("partial",one("A"),complete=False)
report("capped",one("AB"),total=5)
report("clean",[])
report("repeat_six",one("AAAAAA"))
