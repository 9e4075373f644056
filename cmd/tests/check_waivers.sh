#!/bin/bash
# msync-replay check end to end (TAP): waivers (used, unused, by fingerprint
# and by kind + address range, bad waiver configurations), repeats merged
# into one entry with a count, summary.first, and context after violations.
. "$(dirname "$0")/trace-lib.sh"
ENG="$MSR_SOURCE_ROOT/testdata/engine"

yget() { # file dotted.path -> value (python3 + PyYAML)
	python3 - "$1" "$2" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[int(k)] if isinstance(d, list) else d.get(k)
print("null" if d is None else (str(d).lower() if isinstance(d, bool) else d))
PY
}

ylen() { # file dotted.path -> length of the list there
	python3 - "$1" "$2" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[int(k)] if isinstance(d, list) else d.get(k)
print(len(d))
PY
}

expect_rc() { # description expected-rc command...
	local desc=$1 want=$2 rc
	shift 2
	"$@" >stdout.txt 2>stderr.txt
	rc=$?
	[ "$rc" -eq "$want" ]
	ok $? "$desc (exit $rc)"
	[ "$rc" -eq "$want" ] || sed 's/^/#   /' stderr.txt
}

LV="$ENG/v_load_value.trace"
LVS="$ENG/v_load_value.steps"

# ---- waivers ---------------------------------------------------------------
expect_rc "unwaived load-value" 1 "$MSR" check "$LV" --steps "$LVS" --no-tso -o base.yaml
FP=$(yget base.yaml violations.0.fingerprint)

printf 'waivers:\n  - fingerprint: "%s"\n    reason: known RTL bug 17\n' "$FP" >fp.yaml
expect_rc "waiver by fingerprint: exit 0" 0 "$MSR" check "$LV" --steps "$LVS" --no-tso -c fp.yaml -o w.yaml
[ "$(yget w.yaml summary.violations)" = 0 ] && [ "$(yget w.yaml summary.waived)" = 1 ] &&
	[ "$(ylen w.yaml violations)" = 0 ]
ok $? "waived violation counted as waived, not as a violation"
[ "$(yget w.yaml waived.0.id)" = W1 ] && [ "$(yget w.yaml waived.0.kind)" = load-value ] &&
	[ "$(yget w.yaml waived.0.fingerprint)" = "$FP" ] && [ "$(yget w.yaml waived.0.strand)" = 0 ] &&
	[ "$(yget w.yaml waived.0.iseq)" = 1 ] && [ "$(yget w.yaml waived.0.pa)" = 0x000000d000 ] &&
	[ "$(yget w.yaml waived.0.reason)" = "known RTL bug 17" ] && [ "$(yget w.yaml waived.0.waiver)" = fp.yaml:2 ]
ok $? "waived section lists id, kind, fingerprint, strand, iseq, pa, reason and where"
[ "$(ylen w.yaml unused_waivers)" = 0 ] && ! grep -q warning stderr.txt
ok $? "a used waiver is not reported as unused"
grep -q "^msync-replay: 1 violation waived by the configuration$" stderr.txt
ok $? "stderr summary mentions the waived violation"
[ "$(yget w.yaml config.waivers)" = 1 ]; ok $? "config echoes the number of waivers"

printf 'waivers:\n  - kind: load-value\n    pa: 0xd000:0xd007\n    strand: 0\n    reason: scratch\n' >kr.yaml
expect_rc "waiver by kind + range + strand: exit 0" 0 "$MSR" check "$LV" --steps "$LVS" --no-tso -c kr.yaml -o k.yaml
[ "$(yget k.yaml summary.waived)" = 1 ] && [ "$(yget k.yaml waived.0.reason)" = scratch ]
ok $? "kind + range waiver matched"
printf 'waivers:\n  - kind: load-value\n    pa: "0xd000:"\n    strand: 1\n    reason: other strand\n' >ks.yaml
expect_rc "kind + range waiver of another strand does not match" 1 "$MSR" check "$LV" --steps "$LVS" --no-tso -c ks.yaml -o ks.out.yaml
[ "$(yget ks.out.yaml summary.waived)" = 0 ] && [ "$(ylen ks.out.yaml unused_waivers)" = 1 ] &&
	[ "$(yget ks.out.yaml unused_waivers.0.kind)" = load-value ] &&
	[ "$(yget ks.out.yaml unused_waivers.0.strand)" = 1 ] &&
	[ "$(yget ks.out.yaml unused_waivers.0.reason)" = "other strand" ]
ok $? "unused kind waiver listed in unused_waivers"
grep -q "^msync-replay: warning: 1 unused waiver in ks.yaml (line 2); see unused_waivers in the report$" stderr.txt
ok $? "unused waiver warned about on stderr"
printf 'waivers:\n  - kind: mem-check\n    pa: ":"\n    reason: x\n  - fingerprint: "0000000000000000"\n    reason: stale\n' >un.yaml
expect_rc "unused waivers of another kind / fingerprint" 1 "$MSR" check "$LV" --steps "$LVS" --no-tso -c un.yaml -o un.out.yaml
[ "$(ylen un.out.yaml unused_waivers)" = 2 ] && [ "$(yget un.out.yaml unused_waivers.1.fingerprint)" = 0000000000000000 ] &&
	grep -q "warning: 2 unused waivers in un.yaml (lines 2, 5)" stderr.txt
ok $? "both unused waivers listed and warned about"
[ "$(wc -l <stderr.txt)" -le 5 ]; ok $? "summary still at most five lines"

# Two wrong loads: waive one by range, the other stays
{ cat "$LV"; grep -v '^#' "$LV" | sed 's/d000/d008/g; s/ts=1\b/ts=2/'; } >two.trace
{ cat "$LVS"; echo "0 0x104 ld pa=0xd008 size=8 ld=3333333333333333"; } >two.steps
printf 'waivers:\n  - {kind: load-value, pa: "0xd008:0xd00f", reason: second one}\n' >second.yaml
expect_rc "one of two waived: still exit 1" 1 "$MSR" check two.trace --steps two.steps -c second.yaml -o two.yaml
[ "$(yget two.yaml summary.violations)" = 1 ] && [ "$(yget two.yaml summary.waived)" = 1 ] &&
	[ "$(yget two.yaml violations.0.pa)" = 0x000000d000 ] && [ "$(yget two.yaml waived.0.pa)" = 0x000000d008 ] &&
	[ "$(yget two.yaml violations.0.id)" = V1 ]
ok $? "the other violation is listed as V1, the waived one under waived"
expect_rc "waiver with --strand hiding its violation" 0 "$MSR" check "$LV" --steps "$LVS" --no-tso -c fp.yaml --strand 1 -o h.yaml
[ "$(yget h.yaml summary.filtered_out)" = 1 ] && [ "$(ylen h.yaml unused_waivers)" = 0 ]
ok $? "a waiver whose violation a filter hides still counts as used"
expect_rc "--fail-fast ignores waived violations" 1 "$MSR" check two.trace --steps two.steps -c fp.yaml --fail-fast -o ff.yaml
[ "$(yget ff.yaml summary.waived)" = 1 ] && [ "$(yget ff.yaml violations.0.pa)" = 0x000000d008 ]
ok $? "--fail-fast stops at the first unwaived violation"

# Bad waiver configurations: exit 2, file:line:col, no report
bad() { # description yaml expected-stderr-part
	printf "$2" >bad.yaml
	expect_rc "$1" 2 "$MSR" check "$LV" -c bad.yaml -o bad.out.yaml
	grep -qF -- "$3" stderr.txt && [ ! -e bad.out.yaml ]
	ok $? "$1: names '$3' and writes no report"
}
bad "waiver without reason" 'waivers:\n  - fingerprint: "0123456789abcdef"\n' \
	"bad.yaml:2:5: waiver without reason"
bad "bad fingerprint" 'waivers:\n  - fingerprint: "12345"\n    reason: x\n' \
	"bad.yaml:2:18: waiver fingerprint='12345': expected 16 hex digits"
bad "unknown waiver key" 'waivers:\n  - kind: load-value\n    pa: ":"\n    because: x\n' \
	"bad.yaml:4:5: unknown key 'because' in a waiver"
bad "unknown kind" 'waivers:\n  - {kind: load-values, pa: ":", reason: x}\n' \
	"bad.yaml:2:12: waiver kind='load-values' is not a violation kind"
bad "kind without pa" 'waivers:\n  - {kind: load-value, reason: x}\n' \
	"bad.yaml:2:5: waiver with kind needs pa"
bad "bad range" 'waivers:\n  - {kind: load-value, pa: "0x10:0x8", reason: x}\n' \
	"bad.yaml:2:28: waiver pa='0x10:0x8': expected LO:HI"

# ---- merged repeats and summary.first --------------------------------------
cat >rep.trace <<'T'
# msync-text 1
MEM_SLAM pa=0x000000d300 data=0x1111111111111111 bmask=0xff ts=1
LD_DATA   tnum=0 pa=0x000000d300 dsrc=L2 ts=10
LD_DATA   tnum=1 pa=0x000000e000 dsrc=L2 ts=11
LD_DATA   tnum=0 pa=0x000000d300 dsrc=L2 ts=12
SSTEP tnum=2
MEM_SLAM pa=0x000000d300 data=0x2222222222222222 bmask=0xff ts=13
LD_DATA   tnum=0 pa=0x000000d300 dsrc=L2 ts=14
SSTEP tnum=0
T
expect_rc "repeated violations" 1 "$MSR" check rep.trace --no-tso -o rep.yaml
[ "$(yget rep.yaml summary.violations)" = 4 ] && [ "$(yget rep.yaml summary.listed)" = 2 ] &&
	[ "$(yget rep.yaml summary.per_kind.unmatched-ld-data)" = 4 ]
ok $? "all occurrences counted, one entry per fingerprint listed"
[ "$(yget rep.yaml violations.0.count)" = 3 ] && [ "$(yget rep.yaml violations.0.event)" = 1 ] &&
	[ "$(yget rep.yaml violations.0.last_event)" = 6 ] && [ "$(yget rep.yaml violations.1.count)" = 1 ] &&
	[ "$(yget rep.yaml violations.1.last_event)" = 2 ]
ok $? "the repeats are merged with count and last_event"
[ "$(yget rep.yaml summary.first.id)" = V1 ] && [ "$(yget rep.yaml summary.first.kind)" = unmatched-ld-data ] &&
	[ "$(yget rep.yaml summary.first.strand)" = 0 ] && [ "$(yget rep.yaml summary.first.iseq)" = 1 ] &&
	[ "$(yget rep.yaml summary.first.event)" = 1 ]
ok $? "summary.first names the lowest-event violation"
grep -q "^msync-replay: 4 violations (unmatched-ld-data), first on strand 0 at cycle 10, event 1; report: rep.yaml$" stderr.txt
ok $? "the stderr summary names the first violation"
expect_rc "--max-violations 1 with repeats" 1 "$MSR" check rep.trace --no-tso --max-violations 1 -o rep1.yaml
[ "$(yget rep1.yaml summary.listed)" = 1 ] && [ "$(yget rep1.yaml violations.0.count)" = 3 ] &&
	[ "$(yget rep1.yaml summary.violations)" = 4 ]
ok $? "the cap limits entries; repeats of a listed entry are still merged"
expect_rc "clean run" 0 "$MSR" check "$ENG/clean_load_store.trace" --steps "$ENG/clean_load_store.steps" -o clean.yaml
[ "$(yget clean.yaml summary.first)" = null ]; ok $? "no summary.first without violations"

# ---- context after -----------------------------------------------------------
expect_rc "--context-after 2" 1 "$MSR" check rep.trace --no-tso --context-after 2 -o ca.yaml
[ "$(ylen ca.yaml violations.0.context_after)" = 2 ] &&
	yget ca.yaml violations.0.context_after.0 | grep -q "^event=3 offset=[0-9]* LD_DATA tnum=0 pa=0x000000d300" &&
	yget ca.yaml violations.0.context_after.1 | grep -q "^event=5 offset=[0-9]* MEM_SLAM pa=0x000000d300"
ok $? "context_after holds the next events of the same strand or block, oldest first"
[ "$(ylen ca.yaml violations.1.context_after)" = 0 ] && [ "$(yget ca.yaml config.context_after)" = 2 ] &&
	[ "$(yget ca.yaml config.context)" = 8 ]
ok $? "nothing touched strand 1 afterwards; config echoes both sides"
expect_rc "default context" 1 "$MSR" check rep.trace --no-tso -o cd.yaml
[ "$(ylen cd.yaml violations.0.context_after)" = 4 ] && [ "$(ylen cd.yaml violations.0.context)" = 2 ]
ok $? "default: up to 8 before (through its own event) and 8 after, up to the end of the trace"
expect_rc "--context 1" 1 "$MSR" check rep.trace --no-tso --context 1 -o c1.yaml
[ "$(ylen c1.yaml violations.0.context_after)" = 1 ] && [ "$(ylen c1.yaml violations.0.context)" = 1 ] &&
	yget c1.yaml violations.0.context.0 | grep -q "^event=1 "
ok $? "--context N sets both sides"
expect_rc "--context-before 0 --context 3" 1 "$MSR" check rep.trace --no-tso --context 3 --context-before 0 -o c2.yaml
[ "$(ylen c2.yaml violations.0.context_after)" = 3 ] && [ "$(ylen c2.yaml violations.0.context)" = 0 ]
ok $? "--context-before overrides one side of --context"
printf 'report:\n  context_after: 1\n' >cafter.yaml
expect_rc "report.context_after in the config" 1 "$MSR" check rep.trace --no-tso -c cafter.yaml -o c3.yaml
[ "$(ylen c3.yaml violations.0.context_after)" = 1 ]; ok $? "config sets the after side"
expect_rc "--context-after out of range" 2 "$MSR" check --context-after 65 rep.trace

# The demo dump: a TSO violation the TSO pass finds after its event
DEMO="$MSR_SOURCE_ROOT/testdata/demo"
expect_rc "demo" 1 "$MSR" check "$DEMO/nas.trace.zst" --steps "$DEMO/steps.log.zst" -o demo.yaml
python3 - demo.yaml <<'PY'
import sys, yaml
v = yaml.safe_load(open(sys.argv[1]))["violations"][0]
after = [int(l.split()[0].split("=")[1]) for l in v["context_after"]]
before = [int(l.split()[0].split("=")[1]) for l in v["context"]]
assert len(after) == 8 and len(before) == 8, (len(before), len(after))
assert all(e > v["event"] for e in after) and after == sorted(after), after
assert max(before) == v["event"] and before == sorted(before), before
PY
ok $? "TSO violation: 8 events before through its own, 8 after, in order"
printf 'waivers:\n  - {fingerprint: "%s", reason: demo fault}\n' "$(yget demo.yaml violations.0.fingerprint)" >demo-w.yaml
expect_rc "demo with its TSO violation waived" 0 "$MSR" check "$DEMO/nas.trace.zst" --steps "$DEMO/steps.log.zst" -c demo-w.yaml -o demo-w.yaml.out
[ "$(yget demo-w.yaml.out waived.0.kind)" = "$(yget demo.yaml violations.0.kind)" ]
ok $? "the waived TSO violation is listed under waived"

finish
