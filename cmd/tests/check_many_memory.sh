#!/bin/bash
# The automatic memory limit under check -j (TAP): the replays running at
# once hold it together. Run inside a memory cgroup of 512 MiB (automatic
# limit 384 MiB, an even share of -j2 192 MiB), a replay that needs about
# 265 MiB (about 320 with AddressSanitizer) finishes beside a small one,
# as it does alone; two of them are over the limit together, and one stops
# with a message before the kernel's OOM killer ends either. Needs a
# memory cgroup (v1 or v2) this user may create; skipped otherwise.
. "$(dirname "$0")/trace-lib.sh"
ENG="$MSR_SOURCE_ROOT/testdata/engine"

# The directory of a new child of this process's memory cgroup, or nothing.
# Swap is turned off in it where that can be set: swapped-out pages are not
# resident, and the sizes here must be.
make_cgroup() {
	local line path dir
	line=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup)
	if [ -n "$line" ]; then
		path=${line#*:*:}
		dir=/sys/fs/cgroup/memory${path%/}/msr-test-$$
		mkdir "$dir" 2>/dev/null &&
			echo $((512 << 20)) >"$dir/memory.limit_in_bytes" 2>/dev/null &&
			{ echo 0 >"$dir/memory.swappiness" 2>/dev/null || true; }
	else
		line=$(grep '^0::' /proc/self/cgroup) || return 1
		path=${line#0::}
		dir=/sys/fs/cgroup${path%/}/msr-test-$$
		mkdir "$dir" 2>/dev/null &&
			echo $((512 << 20)) >"$dir/memory.max" 2>/dev/null &&
			{ echo 0 >"$dir/memory.swap.max" 2>/dev/null || true; }
	fi || { rmdir "$dir" 2>/dev/null; return 1; }
	echo "$dir"
}

CG=$(make_cgroup)
if [ -z "$CG" ]; then
	echo "1..0 # SKIP no memory cgroup can be made here"
	exit 0
fi
trap 'rmdir "$CG" 2>/dev/null; rm -rf "$WORK"' EXIT

in_cgroup() { # command... (run inside the cgroup)
	bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
}

expect_rc() { # description expected-rc command...
	local desc=$1 want=$2 rc
	shift 2
	in_cgroup "$@" >stdout.txt 2>stderr.txt
	rc=$?
	[ "$rc" -eq "$want" ]
	ok $? "$desc (exit $rc)"
	[ "$rc" -eq "$want" ] || sed 's/^/#   /' stdout.txt stderr.txt
}

cp "$ENG/clean_load_store.trace" clean.trace
cp "$ENG/clean_load_store.steps" clean.steps
# 320,000 MEM_SLAMs a page apart: about 265 MiB resident
spray_trace 320000 spray.bin
zstd -q spray.bin -o spray.trace.zst

expect_rc "alone: the large replay fits the automatic limit" 0 \
	"$MSR" check -o alone.yaml spray.trace.zst
expect_rc "-j2 beside a small replay: it may use more than an even share" 0 \
	"$MSR" check -j2 -o beside clean.trace spray.trace.zst
grep -q "^spray.trace.zst  *0  *0 " stdout.txt && grep -q "^clean.trace  *0 " stdout.txt
ok $? "both replays are clean"

# Two of them are over the limit together only while both are alive,
# which timing alone does not ensure on a busy machine (one may finish
# before the other has grown): each reads its trace from a pipe that is
# closed only once a replay has ended (or a minute has passed).
mkdir two.in && mkfifo two.in/spray.trace two.in/spray2.trace || exit 1
feed() { # FIFO
	{
		cat spray.bin
		for _ in $(seq 600); do
			ls two/*.yaml >/dev/null 2>&1 && break
			sleep 0.1
		done
	} >"$1" 2>/dev/null &
}
feed two.in/spray.trace
feed1=$!
feed two.in/spray2.trace
feed2=$!
expect_rc "-j2 with two large replays: over the limit together" 2 \
	"$MSR" check -j2 -o two two.in/spray.trace two.in/spray2.trace
kill "$feed1" "$feed2" 2>/dev/null
wait
! grep -q "signal" stdout.txt
ok $? "no replay was killed"
grep -q "stopped: memory-limit" two/spray.trace.yaml two/spray2.trace.yaml
ok $? "a replay stopped with a partial report"
grep -q "MiB with the replays running beside it, over the automatic limit of 384 MiB they share; run fewer at once (-j)" stderr.txt
ok $? "its message names the sum and the shared limit"
sed 's/^/# /' stdout.txt

finish
