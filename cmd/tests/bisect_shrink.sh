#!/bin/bash
# bisect_shrink.sh - end-to-end tests of `msync-replay slice --shrink` (TAP):
# for every fault kind msync-gen injects, a 200K-event trace with the fault;
# the shrunk slice must reproduce a kind the generator's expectation accepts
# on the expected strand (check run again here, independently of slice's own
# re-check), never hold more events than the plain slice, and be a fixpoint:
# shrinking its own output again removes nothing. The shrunk stale-l1 case
# has under 40 events.
. "$(dirname "$0")/trace-lib.sh"
GEN="$MSR_BUILD_ROOT/testdata/gen/msync-gen"
SHOW_ON_FAIL=err.txt

events_of() { # TRACE: number of events
	"$MSR" dump "$1" | grep -vc '^#'
}

for kind in stale-l1 store-order bad-bypass store-data load-value lost-inv \
	    atomic-break membar; do
	inject=$kind
	# seed 7 has no first chance for a bare load-value: name the instruction
	[ "$kind" = load-value ] && inject=load-value@2000
	"$GEN" -q -o $kind.trace.zst --steps $kind.steps --expect $kind.expect.yaml \
		--events 200000 --inject $inject --seed 7
	accept=$(sed -n 's/^  accept: \[\(.*\)\]/\1/p' $kind.expect.yaml | tr -d ' ')
	estrand=$(sed -n 's/^  strand: //p' $kind.expect.yaml | head -1)
	orig=$(events_of $kind.trace.zst)
	"$MSR" slice -q $kind.trace.zst --steps $kind.steps --violation V1 -o $kind.plain \
		2>err.txt
	"$MSR" slice --shrink --shrink-time 30 $kind.trace.zst --steps $kind.steps \
		--violation V1 -o $kind.out 2>err.txt
	rc=$?
	plain=$(events_of $kind.plain/nas.trace.zst)
	shrunk=$(events_of $kind.out/nas.trace.zst)
	rkind=$(sed -n 's/^Reproduced: \([a-z-]*\) on strand \([0-9-]*\),.*/\1/p' $kind.out/README.txt)
	rstrand=$(sed -n 's/^Reproduced: \([a-z-]*\) on strand \([0-9-]*\),.*/\2/p' $kind.out/README.txt)
	[ "$rc" -eq 0 ] && [ "$orig" -ge 200000 ] && [ "$shrunk" -gt 0 ] &&
		[ "$shrunk" -le "$plain" ] && [[ ",$accept," == *",$rkind,"* ]] &&
		[ "$rstrand" = "$estrand" ]
	ok $? "$kind: $orig -> $plain (slice) -> $shrunk (shrunk) events, $rkind on strand $rstrand"
	echo "# $kind: $orig -> $plain -> $shrunk events; $(grep -m1 -- '--shrink: ' err.txt)"
	grep -q "^--shrink left out whole instructions: [0-9]* -> $shrunk events" $kind.out/README.txt &&
		grep -q 'no single instruction can be left out any more' $kind.out/README.txt
	ok $? "$kind: README.txt gives the sizes before and after, fixpoint reached"

	# check on the shrunk slice, independently of slice's own re-check
	"$MSR" check -q $kind.out/nas.trace.zst --steps $kind.out/steps.log \
		--image $kind.out/image.mem -o $kind.check.yaml >/dev/null 2>&1
	rc=$?
	grep -q "^  kind: $rkind\$" $kind.check.yaml && grep -q "^  strand: $rstrand\$" $kind.check.yaml &&
		[ "$rc" -eq 1 ]
	ok $? "$kind: check on the shrunk slice reports $rkind on strand $rstrand"

	# fixpoint: shrinking the shrunk slice removes nothing
	fp=$(sed -n 's/^  fingerprint in the slice \([0-9a-f]*\)\.$/\1/p' $kind.out/README.txt)
	"$MSR" slice -q --shrink --shrink-time 30 $kind.out/nas.trace.zst \
		--steps $kind.out/steps.log --image $kind.out/image.mem --fingerprint "$fp" \
		-o $kind.again 2>err.txt
	rc=$?
	again=$(events_of $kind.again/nas.trace.zst)
	[ "$rc" -eq 0 ] && [ "$again" -eq "$shrunk" ] &&
		grep -q "^--shrink left out whole instructions: $shrunk -> $shrunk events" $kind.again/README.txt
	ok $? "$kind: shrinking the shrunk slice again keeps all $shrunk events"
	[ "$kind" = stale-l1 ] && { [ "$shrunk" -lt 40 ]; ok $? "stale-l1: shrunk to under 40 events ($shrunk)"; }
done

# a hand-written store-buffering case (checker/tests/traces/sb_membar_bad):
# strand 0's other instructions go with their step lines, leaving the
# classic four (st; st, membar, ld), and the event map follows
T="$MSR_SOURCE_ROOT/checker/tests/traces"
"$MSR" slice -q --shrink "$T/sb_membar_bad.trace" --steps "$T/sb_membar_bad.steps" \
	--violation V1 -o sb 2>err.txt
rc=$?
steps=$(grep -vc '^#' sb/steps.log)
s0=$(grep -c '^0 ' sb/steps.log)
mapped=$(sed -n '/^Event map/,$p' sb/README.txt | grep -c '^[0-9]')
[ "$rc" -eq 0 ] && [ "$(events_of sb/nas.trace.zst)" -eq 12 ] && [ "$steps" -eq 4 ] &&
	[ "$s0" -eq 1 ] && [ "$mapped" -eq 12 ] &&
	grep -q '^  strand 0: 2 instruction(s) removed' sb/README.txt &&
	grep -q '^Reproduced: tso-membar on strand 8, slice iseq 3,' sb/README.txt
ok $? "sb_membar_bad: shrunk to 12 events and 4 step lines, event map of 12"

# --shrink-time bounds the search; an out-of-range value is a usage error
"$MSR" slice -q --shrink --shrink-time 0 membar.trace.zst --steps membar.steps \
	--violation V1 -o bad 2>err.txt
[ $? -eq 2 ]
ok $? "--shrink-time 0 is a usage error"

finish
