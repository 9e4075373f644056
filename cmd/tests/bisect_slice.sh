#!/bin/bash
# bisect_slice.sh - end-to-end tests of `msync-replay slice` (TAP): for every
# fault kind msync-gen injects, a 200K-event trace is generated and checked;
# the slice of its first violation must reproduce the same kind on the same
# strand (check run again here, independently of slice's own re-check) and
# hold at most 1% of the original events (or 2000, whichever is larger).
# Also: --fingerprint, --report, README/image contents, and usage errors.
. "$(dirname "$0")/trace-lib.sh"
GEN="$MSR_BUILD_ROOT/testdata/gen/msync-gen"
SHOW_ON_FAIL=err.txt

# yaml_field FILE KEY: first "  KEY: value" of the first violation
yaml_field() {
	sed -n '/^violations:/,$p' "$1" | grep -m1 "^  $2:" | sed 's/^[^:]*: *//; s/"//g'
}

events_of() { # TRACE: number of events
	"$MSR" dump "$1" | grep -vc '^#'
}

for kind in load-value store-data bad-bypass store-order lost-inv stale-l1 \
	    atomic-break membar; do
	"$GEN" -q -o $kind.trace.zst --steps $kind.steps --image $kind.img \
		--expect $kind.expect.yaml --events 200000 --inject $kind@2000 --seed 7
	"$MSR" check -q $kind.trace.zst --steps $kind.steps --image $kind.img \
		-o $kind.report.yaml >/dev/null 2>&1
	vkind=$(yaml_field $kind.report.yaml kind)
	vstrand=$(yaml_field $kind.report.yaml strand)
	"$MSR" slice -q $kind.trace.zst --steps $kind.steps --image $kind.img \
		--violation V1 -o $kind.out 2>err.txt
	ok $? "$kind: slice of V1 ($vkind) exits 0"
	orig=$(events_of $kind.trace.zst)
	sliced=$(events_of $kind.out/nas.trace.zst)
	limit=$((orig / 100 > 2000 ? orig / 100 : 2000))
	[ "$orig" -ge 200000 ] && [ "$sliced" -gt 0 ] && [ "$sliced" -le "$limit" ]
	ok $? "$kind: $orig events -> $sliced (limit $limit)"
	echo "# $kind: $orig -> $sliced events"
	"$MSR" check -q $kind.out/nas.trace.zst --steps $kind.out/steps.log \
		--image $kind.out/image.mem -o $kind.slice-report.yaml >/dev/null 2>&1
	rc=$?
	grep -q "^  kind: $vkind\$" $kind.slice-report.yaml &&
		grep -q "^  strand: $vstrand\$" $kind.slice-report.yaml && [ "$rc" -eq 1 ]
	ok $? "$kind: check on the slice reports $vkind on strand $vstrand"
done

# the helper threads that decompress TRACE and LOG change nothing
zstd -q -c store-order.steps >so.steps.zst
"$MSR" slice -q store-order.trace.zst --steps so.steps.zst --image store-order.img \
	--violation V1 -o so.ahead 2>err.txt
r1=$?
"$MSR" slice -q --single-thread store-order.trace.zst --steps so.steps.zst \
	--image store-order.img --violation V1 -o so.single 2>err.txt
r2=$?
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ -s so.ahead/nas.trace.zst ] && diff -r so.ahead so.single >/dev/null
ok $? "store-order: the same slice from a zstd log with and without --single-thread"
"$MSR" slice -q --no-huge-pages store-order.trace.zst --steps so.steps.zst \
	--image store-order.img --violation V1 -o so.small 2>err.txt
[ $? -eq 0 ] && diff -r so.ahead so.small >/dev/null && [ ! -s err.txt ]
ok $? "store-order: the same slice with --no-huge-pages"

# --shrink never makes a slice bigger, and what it keeps still reproduces
for kind in load-value stale-l1; do
	"$MSR" slice -q --shrink --shrink-time 20 $kind.trace.zst --steps $kind.steps \
		--image $kind.img --violation V1 -o $kind.shrunk 2>err.txt
	rc=$?
	before=$(events_of $kind.out/nas.trace.zst)
	after=$(events_of $kind.shrunk/nas.trace.zst)
	[ "$rc" -eq 0 ] && [ "$after" -le "$before" ] && grep -q '^Reproduced: ' $kind.shrunk/README.txt
	ok $? "$kind: --shrink reproduces in $after events (without: $before)"
done

# seed 1: the load-value slice keeps two strands besides the load's own;
# --shrink finds that neither is needed
"$GEN" -q -o lv1.trace.zst --steps lv1.steps --image lv1.img --events 200000 \
	--inject load-value@2000 --seed 1
"$MSR" slice -q lv1.trace.zst --steps lv1.steps --image lv1.img --violation V1 -o lv1.out
"$MSR" slice -q --shrink lv1.trace.zst --steps lv1.steps --image lv1.img --violation V1 \
	-o lv1.shrunk 2>err.txt
rc=$?
before=$(events_of lv1.out/nas.trace.zst)
after=$(events_of lv1.shrunk/nas.trace.zst)
[ "$rc" -eq 0 ] && [ "$after" -lt "$before" ] && grep -q '^--shrink left out strand' lv1.shrunk/README.txt
ok $? "seed 1 load-value: --shrink leaves strands out, $before -> $after events"

# the same violation named by fingerprint, and by id through the report
fp=$(yaml_field stale-l1.report.yaml fingerprint)
"$MSR" slice -q stale-l1.trace.zst --steps stale-l1.steps --image stale-l1.img \
	--fingerprint "$fp" -o by-fp 2>err.txt
ok $? "--fingerprint $fp slices the same violation"
cmp -s by-fp/nas.trace.zst stale-l1.out/nas.trace.zst
ok $? "--fingerprint and --violation give the same slice"
"$MSR" slice -q stale-l1.trace.zst --steps stale-l1.steps --image stale-l1.img \
	--report stale-l1.report.yaml --violation V1 -o by-report 2>err.txt &&
	cmp -s by-report/nas.trace.zst stale-l1.out/nas.trace.zst
ok $? "--report R.yaml --violation V1 gives the same slice"

grep -q '^Reproduced: tso-' stale-l1.out/README.txt &&
	grep -q '^Event map: slice event index -> original event index' stale-l1.out/README.txt
ok $? "README.txt says what was reproduced and maps events back"
n_map=$(sed -n '/^Event map/,$p' stale-l1.out/README.txt | tail -n +2 | wc -l)
[ "$n_map" -eq "$(events_of stale-l1.out/nas.trace.zst)" ]
ok $? "README.txt maps every slice event"
grep -q '^@[0-9a-f]* [0-9a-f]\{16\}$' stale-l1.out/image.mem
ok $? "image.mem holds doublewords of the kept blocks"

"$MSR" slice -q stale-l1.trace.zst --steps stale-l1.steps --violation V99 -o none 2>err.txt
[ $? -eq 2 ] && grep -q 'no violation id=V99' err.txt
ok $? "a violation that does not exist exits 2 and says so"
"$MSR" slice stale-l1.trace.zst --violation V1 -o none 2>err.txt
[ $? -eq 2 ] && grep -q 'no violation id=V1' err.txt
ok $? "without --steps the events alone show no violation here: exit 2"
"$MSR" slice stale-l1.trace.zst -o none 2>err.txt
[ $? -eq 2 ] && grep -q -- '--violation' err.txt
ok $? "a missing --violation/--fingerprint is a usage error"

# Every hand-written engine scenario with a violation: the slice of V1
# reproduces it; a surplus step line (step-log-long) lies beyond the last
# kept instruction, so that slice is refused with exit 1 and a reason.
ENG="$MSR_SOURCE_ROOT/testdata/engine"
for tr in "$ENG"/v_*.trace "$ENG"/tso_*.trace; do
	sc=$(basename "$tr" .trace)
	st="$ENG/$sc.steps"
	rm -rf eng.out
	if [ -f "$st" ]; then
		"$MSR" slice -q "$tr" --steps "$st" --violation V1 -o eng.out 2>err.txt
	else
		"$MSR" slice -q "$tr" --violation V1 -o eng.out 2>err.txt
	fi
	rc=$?
	if [ "$sc" = v_step_log_long ]; then
		[ "$rc" -eq 1 ] && grep -q 'refused: does not reproduce step-log-long' err.txt &&
			grep -q '^NOT reproduced' eng.out/README.txt
		ok $? "$sc: the slice is refused (exit 1) and says why"
	else
		[ "$rc" -eq 0 ] && grep -q '^Reproduced: ' eng.out/README.txt
		ok $? "$sc: slice of V1 reproduces it"
	fi
done
"$MSR" slice stale-l1.trace.zst --steps stale-l1.steps --violation V1 \
	--fingerprint 0123456789abcdef -o none 2>err.txt
[ $? -eq 2 ]
ok $? "--violation and --fingerprint together are a usage error"
"$MSR" slice - --steps stale-l1.steps --violation V1 -o none < stale-l1.trace.zst 2>err.txt
[ $? -eq 2 ] && grep -q 'not standard input' err.txt
ok $? "TRACE from standard input is refused (it is read several times)"
"$MSR" slice --help | grep -q '^usage: msync-replay slice'
ok $? "--help prints the usage"

finish
