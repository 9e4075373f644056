#!/bin/bash
# compare.py (TAP): two runs of one build on the demo dump agree; a "build"
# that reports differently (here: the same binary with --no-tso) is caught.
# usage: compare_test.sh COMPARE_PY MSYNC_REPLAY DEMO_DIR MSR_MEMLAT
. "$(dirname "$0")/tap-lib.sh"
compare=$1 msr=$2 demo=$3 memlat=$4

python3 "$compare" "$msr" "$msr" "$demo/nas.trace.zst" "$demo/steps.log.zst" \
	--rounds 2 >"$work/same.txt" 2>&1
ok $? "one build against itself: exit 0"
grep -q '^reports: identical apart from timings (exit 1)$' "$work/same.txt"
ok $? "says the reports are identical and names check's exit code"
grep -Eq '^new/old CPU: [0-9.]+ \(95 % interval [0-9.]+ to [0-9.]+, 2 rounds\)$' "$work/same.txt" &&
	grep -Eq '^new/old user: [0-9.]+ \(95 % interval [0-9.]+ to [0-9.]+, 2 rounds\)$' "$work/same.txt" &&
	grep -Eq '^new/old wall: [0-9.]+ \(95 % interval [0-9.]+ to [0-9.]+, 2 rounds\)$' "$work/same.txt"
ok $? "prints the CPU, user and wall ratios with their intervals"
[ "$(grep -c '^round ' "$work/same.txt")" -eq 2 ]
ok $? "runs the rounds asked for"

printf '#!/bin/sh\nexec "%s" "$@" --no-tso\n' "$msr" >"$work/no-tso"
chmod +x "$work/no-tso"
python3 "$compare" "$msr" "$work/no-tso" "$demo/nas.trace.zst" "$demo/steps.log.zst" \
	--rounds 2 >"$work/differ.txt" 2>&1
[ $? -eq 1 ]; ok $? "a build with another report: exit 1"
grep -q '^reports: DIFFER (exit 1 vs 0)$' "$work/differ.txt"
ok $? "says they differ, with both exit codes"

MSR_COMPARE_NEW_OPTS=--no-tso python3 "$compare" "$msr" "$msr" "$demo/nas.trace.zst" \
	"$demo/steps.log.zst" --rounds 2 >"$work/opts.txt" 2>&1
[ $? -eq 1 ] && grep -q "^new  $msr --no-tso: median" "$work/opts.txt"
ok $? "MSR_COMPARE_NEW_OPTS: options for one side only, named in the output"

start=$(date +%s.%N)
python3 "$compare" "$msr" "$msr" "$demo/nas.trace.zst" --rounds 2 --pause 0.5 \
	>"$work/pause.txt" 2>&1
rc=$?
python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) >= 2.0 else 1)" \
	"$start" "$(date +%s.%N)" && [ $rc -eq 0 ] && [ "$(grep -c '^round ' "$work/pause.txt")" -eq 2 ]
ok $? "--pause 0.5: half a second before each of the four runs"
python3 "$compare" "$msr" "$msr" "$demo/nas.trace.zst" --pause x >"$work/badpause.txt" 2>&1
[ $? -ne 0 ] && grep -q "usage: compare.py" "$work/badpause.txt"
ok $? "--pause that is not a number: usage error"

python3 "$compare" "$msr" "$msr" "$demo/nas.trace.zst" --rounds 2 --memlat "$memlat" \
	>"$work/memlat.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^round [12]/2: .* s wall, memory 1 MiB [0-9]+ ns, 4 MiB [0-9]+ ns, 16 MiB [0-9]+ ns$' "$work/memlat.txt")" -eq 2 ] &&
	grep -Eq '^memory latency before each round \(median, range\): 1 MiB [0-9]+ ns \([0-9]+-[0-9]+\), 4 MiB ' "$work/memlat.txt" &&
	! grep -q '^memory' "$work/same.txt"
ok $? "--memlat: the probe's figures on every round's line and their medians at the end (and none without it)"
python3 "$compare" "$msr" "$msr" "$demo/nas.trace.zst" --memlat "$work/none" >"$work/nomemlat.txt" 2>&1
[ $? -ne 0 ] && grep -q "^compare: cannot run the memory probe $work/none" "$work/nomemlat.txt" &&
	! grep -q '^round ' "$work/nomemlat.txt"
ok $? "--memlat with a probe that does not exist: a message before any run"

python3 "$compare" "$msr" "$msr" >/dev/null 2>&1
[ $? -ne 0 ]; ok $? "missing arguments: usage error"
python3 "$compare" "$msr" "$work/none" "$demo/nas.trace.zst" --rounds 2 >"$work/none.txt" 2>&1
[ $? -ne 0 ] && grep -q "^compare: cannot run $work/none" "$work/none.txt"
ok $? "a binary that does not exist: a message, not a traceback"
python3 "$compare" "$msr" "$msr" "$work/absent.zst" --rounds 2 >"$work/absent.txt" 2>&1
[ $? -ne 0 ] && grep -q "^compare: $msr check $work/absent.zst .* exited 2 (unusable input or usage error): " "$work/absent.txt" &&
	! grep -q '^round ' "$work/absent.txt"
ok $? "a trace that cannot be read: check's message, no timings"
tap_end
