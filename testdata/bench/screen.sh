#!/bin/bash
# screen.sh - a deterministic first look at a change meant to be faster:
# instructions and simulated level-2 cache misses of two msync-replay
# builds, from cachegrind. Unlike times on a shared machine these do not
# vary between runs, so a change that moves neither is unlikely to be
# faster, and one that cuts misses is worth timing with compare.py.
#
#   testdata/bench/screen.sh GEN OLD NEW [WORKDIR]
#
# GEN is msync-gen, OLD and NEW two msync-replay binaries (not built with
# sanitizers: valgrind cannot run those), or scripts that exec one (valgrind
# follows the exec and counts the binary). It generates clean traces with step
# logs in the benchmark's shapes (reused from WORKDIR when given: the
# generator is deterministic; the shapes' options come from bench.py, so
# python3 is needed besides valgrind), runs `check --single-thread` of both builds on
# each under `valgrind --tool=cachegrind` with the last-level cache modelled
# as the L2, and prints per shape the instructions and the L2 read and write
# misses of each build and new/old. Exits 1 if a check fails (exit 2 or
# more) or the two builds' reports differ (apart from timings), like
# compare.py.
#
# Environment:
#   MSR_SCREEN_EVENTS  events per trace (default 1000000: about a minute a run)
#   MSR_SCREEN_SHAPES  shapes (default "random hot large deep faulty")
#   MSR_SCREEN_L2      the modelled cache as size,ways,line (default: this
#                      machine's L2 from sysfs, else 1048576,8,64)
#   MSR_SCREEN_OLD_OPTS, MSR_SCREEN_NEW_OPTS
#                      check options for one side only (split on spaces),
#                      as with compare.py
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/two-builds.sh"
two_builds_args screen "$@"
if ! command -v valgrind >/dev/null; then
	echo "screen: needs valgrind" >&2
	exit 2
fi
cd "$work" || exit 2

events=${MSR_SCREEN_EVENTS:-1000000}
shapes=${MSR_SCREEN_SHAPES:-random hot large deep faulty}

l2_of_machine() {
	local d
	for d in /sys/devices/system/cpu/cpu0/cache/index*; do
		[ "$(cat "$d/level" 2>/dev/null)" = 2 ] || continue
		local size ways line
		size=$(cat "$d/size") ways=$(cat "$d/ways_of_associativity")
		line=$(cat "$d/coherency_line_size")
		case $size in
		*K) size=$((${size%K} * 1024)) ;;
		*M) size=$((${size%M} * 1048576)) ;;
		esac
		echo "$size,$ways,$line"
		return
	done
	echo 1048576,8,64
}
l2=${MSR_SCREEN_L2:-$(l2_of_machine)}

# the shapes of bench.py, with their generator options
shape_opts() {
	python3 "$here/bench.py" --shape-options "$1" 2>/dev/null
}

# cachegrind's summary (its stderr) -> "instructions l2_read_misses l2_write_misses"
counts() {
	awk 'function nums(what,   l, f, n, i, k) { # the numbers after `what`
		l = $0; sub(".*" what, "", l); gsub(",", "", l)
		n = split(l, f, /[^0-9]+/); k = 0
		for (i = 1; i <= n; i++) if (f[i] != "") v[++k] = f[i]
		return k
	     }
	     / I +refs:/ { if (nums("refs:")) ir = v[1] }
	     / LLd misses:/ { if (nums("misses:") == 3) { rd = v[2]; wr = v[3] } }
	     END { if (ir == "" || rd == "") exit 1; print ir, rd, wr }' "$1"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a ? b / a : 0 }'; }

echo "L2 modelled as $l2 (size,ways,line); $events events a trace; check --single-thread"
printf '%-7s %-12s %15s %15s %7s\n' shape count old new new/old
status=0
declare -A rc_of # exit code of each side's check on the current shape
for shape in $shapes; do
	opts=$(shape_opts "$shape") || { echo "screen: unknown shape $shape" >&2; exit 2; }
	base=$shape-$events
	if [ ! -s "$base.trace.zst" ] || [ ! -s "$base.steps.zst" ]; then
		# shellcheck disable=SC2086 # opts are words
		"$gen" -o "$base.trace.zst" --steps "$base.steps.zst" --events "$events" \
			--seed 11 $opts >"$base.gen.txt" 2>&1 ||
			{ echo "screen: msync-gen failed for $shape:" >&2; cat "$base.gen.txt" >&2; exit 2; }
	fi
	for side in old new; do
		bin=$old side_opts=${MSR_SCREEN_OLD_OPTS:-}
		[ $side = new ] && bin=$new side_opts=${MSR_SCREEN_NEW_OPTS:-}
		# shellcheck disable=SC2086 # side_opts are words
		valgrind --tool=cachegrind --cache-sim=yes --LL="$l2" --trace-children=yes \
			--cachegrind-out-file=/dev/null "$bin" check "$base.trace.zst" \
			--steps "$base.steps.zst" --single-thread $side_opts -q \
			-o "$base.$side.yaml" >/dev/null 2>"$base.$side.vg"
		rc=$?
		rc_of[$side]=$rc
		if [ $rc -ge 2 ]; then # 0 clean, 1 violations, 2 and up an error
			echo "screen: check of the $side build failed on $shape (exit $rc):" >&2
			grep -v '^==' "$base.$side.vg" | tail -n 3 >&2
			status=1
		fi
		if ! counts "$base.$side.vg" >"$base.$side.counts"; then
			echo "screen: no cachegrind summary for $side on $shape:" >&2
			tail -n 5 "$base.$side.vg" >&2
			exit 1
		fi
	done
	read -r oi orr ow <"$base.old.counts"
	read -r ni nr nw <"$base.new.counts"
	printf '%-7s %-12s %15s %15s %7s\n' "$shape" instructions "$oi" "$ni" "$(ratio "$oi" "$ni")"
	printf '%-7s %-12s %15s %15s %7s\n' "" L2-read-miss "$orr" "$nr" "$(ratio "$orr" "$nr")"
	printf '%-7s %-12s %15s %15s %7s\n' "" L2-write-miss "$ow" "$nw" "$(ratio "$ow" "$nw")"
	if [ "${rc_of[old]}" != "${rc_of[new]}" ] ||
		! cmp -s <(untimed "$base.old.yaml") <(untimed "$base.new.yaml"); then
		echo "$shape: reports DIFFER (exit ${rc_of[old]} vs ${rc_of[new]})"
		status=1
	fi
done
[ $status = 0 ] && echo "reports: identical apart from timings"
exit $status
