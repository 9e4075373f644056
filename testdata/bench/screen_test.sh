#!/bin/bash
# screen.sh (TAP), on small traces: one build against itself gives the same
# counts (cachegrind is deterministic); a "build" that does less (the same
# binary with --no-tso) shows fewer instructions and misses and is caught
# reporting differently; a wrapper script counts as its binary; a failing
# check is caught.
# usage: screen_test.sh SCREEN_SH MSYNC_GEN MSYNC_REPLAY
. "$(dirname "$0")/tap-lib.sh"
screen=$1 gen=$2 msr=$(realpath "$3")
export MSR_SCREEN_EVENTS=20000 MSR_SCREEN_SHAPES="random deep" MSR_SCREEN_L2=1048576,8,64

bash "$screen" "$gen" "$msr" "$msr" "$work/corpus" >"$work/same.txt" 2>&1
ok $? "one build against itself: exit 0"
grep -qx 'reports: identical apart from timings' "$work/same.txt"
ok $? "says the reports are identical"
[ "$(grep -c ' 1\.000$' "$work/same.txt")" -eq 6 ] &&
	[ "$(grep -Ec ' [0-9]+ +[0-9]+ +[0-9.]+$' "$work/same.txt")" -eq 6 ]
ok $? "three counts for each of two shapes, all new/old 1.000"
[ -s "$work/corpus/deep-20000.trace.zst" ] && [ -s "$work/corpus/random-20000.steps.zst" ]
ok $? "keeps the traces in the work directory given"

MSR_SCREEN_NEW_OPTS=--no-tso bash "$screen" "$gen" "$msr" "$msr" "$work/corpus" \
	>"$work/no-tso.txt" 2>&1
[ $? -eq 1 ]; ok $? "a build with other reports: exit 1"
grep -qx 'random: reports DIFFER (exit 0 vs 0)' "$work/no-tso.txt" &&
	grep -qx 'deep: reports DIFFER (exit 0 vs 0)' "$work/no-tso.txt"
ok $? "names each shape whose reports differ, with both exit codes"
awk '$2 == "instructions" && $5 + 0 < 0.95 { n++ } END { exit n != 2 }' "$work/no-tso.txt"
ok $? "counts fewer instructions without the TSO pass on both shapes"

printf '#!/bin/sh\nexec "%s" "$@"\n' "$msr" >"$work/wrapper"
printf '#!/bin/sh\nexec "%s" "$@" --config "%s"\n' "$msr" "$work/none.yaml" >"$work/broken"
chmod +x "$work/wrapper" "$work/broken"
MSR_SCREEN_SHAPES=random bash "$screen" "$gen" "$msr" "$work/wrapper" "$work/corpus" \
	>"$work/wrapper.txt" 2>&1 && [ "$(grep -c ' 1\.000$' "$work/wrapper.txt")" -eq 3 ]
ok $? "a script that execs the binary counts as the binary"
MSR_SCREEN_SHAPES=random bash "$screen" "$gen" "$msr" "$work/broken" "$work/corpus" \
	>"$work/broken.txt" 2>&1
[ $? -eq 1 ] && grep -q '^screen: check of the new build failed on random (exit 2):$' \
	"$work/broken.txt"
ok $? "a check that fails: exit 1, naming the build and the shape"

bash "$screen" "$gen" "$msr" >/dev/null 2>&1
[ $? -eq 2 ]; ok $? "missing arguments: usage error"
tap_end
