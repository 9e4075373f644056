#!/bin/bash
# threads-check.sh - check with its threads against check --single-thread
# (TAP): the same report, JUnit, stderr and exit code on a generated trace
# with injected faults, with options that change what the second thread
# reports, and on the trace or step log cut short or overwritten at spread
# offsets. The trace decompresses to several MiB, so that the errors are
# found by the decompression helpers, past the block the replay reads
# itself when it opens the trace.
#
#   testdata/gen/threads-check.sh [BUILD_DIR]        (default: build)
set -u
build=${1:-build}
gen=$(realpath "$build/testdata/gen/msync-gen")
replay=$(realpath "$build/cmd/msync-replay")
work=$(mktemp -d "${TMPDIR:-/tmp}/msync-threads.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work" || exit 2
n=0
fail=0
ok() { # status description
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}

untimed() { grep -Ev '^ *(elapsed_seconds|events_per_second):' "$1"; }

# both_ways description trace steps [options...]
both_ways() {
	local desc=$1 trace=$2 steps=$3 a b
	shift 3
	"$replay" check "$trace" --steps "$steps" -o r.yaml --junit r.xml "$@" 2>r.err
	a=$?
	mv r.yaml mt.yaml; mv r.xml mt.xml; mv r.err mt.err
	"$replay" check "$trace" --steps "$steps" -o r.yaml --junit r.xml --single-thread "$@" 2>r.err
	b=$?
	[ "$a" -eq "$b" ] && cmp -s <(untimed mt.yaml) <(untimed r.yaml) &&
		cmp -s <(sed 's/time="[^"]*"//g' mt.xml) <(sed 's/time="[^"]*"//g' r.xml) &&
		cmp -s mt.err r.err
	ok $? "$desc (exit $a / $b, $(grep -m1 '^  events:' r.yaml | tr -s ' '))"
}

"$gen" -o t.zst --steps s.zst --seed 5 --events 400000 --inject store-order:0.002 \
	--inject load-value:0.002 --inject lost-inv:0.001 >/dev/null 2>&1 ||
	{ echo "Bail out! msync-gen failed"; exit 2; }
raw=$(zstd -dc t.zst | wc -c)
[ "$raw" -gt $((4 << 20)) ]
ok $? "the trace decompresses to $raw bytes, several helper blocks"

both_ways "whole trace" t.zst s.zst
both_ways "--context 64" t.zst s.zst --context 64
both_ways "--max-violations 3 --context-before 0" t.zst s.zst --max-violations 3 --context-before 0
both_ways "--strand 0-7 --pa 0:0xffff" t.zst s.zst --strand 0-7 --pa 0:0xffff
both_ways "--no-tso" t.zst s.zst --no-tso

size=$(stat -c %s t.zst)
ssize=$(stat -c %s s.zst)
for k in 3 6 9; do
	head -c $((size * k / 10)) t.zst >cut.zst
	both_ways "trace cut at $((k * 10)) %" cut.zst s.zst
	head -c $((ssize * k / 10)) s.zst >scut.zst
	both_ways "step log cut at $((k * 10)) %" t.zst scut.zst
	cp t.zst bad.zst
	printf '\377\377\377\377' | dd of=bad.zst bs=1 seek=$((size * k / 10)) conv=notrunc 2>/dev/null
	both_ways "trace overwritten at $((k * 10)) %" bad.zst s.zst
done
echo "1..$n"
exit $fail
