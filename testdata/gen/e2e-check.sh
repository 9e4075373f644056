#!/bin/sh
# e2e-check.sh - replay msync-gen traces through `msync-replay check` and
# compare the verdict with what the generator says must be found.
#
#   testdata/gen/e2e-check.sh [BUILD_DIR]        (default: build)
#
# MSYNC_GEN / MSYNC_REPLAY override the binaries, E2E_EVENTS the run size
# (default 50000 events per trace), E2E_SEEDS the number of seeds per
# random-program shape (default 20, spread over the default, hot-line and
# large-footprint shapes).
# Clean runs (random mixes, litmus tests) must exit 0 with no violation.
# Fault runs must exit 1 and report, for every fault listed in the sidecar
# (--expect), a violation of the sidecar's `kind` on the same strand,
# instruction (iseq) and address, and nothing at any other instruction.
# Output is TAP (one line per case, plan at the end); exits 1 when any case
# failed. Runs in a temporary directory; needs only sh and awk.
set -u

build=${1:-build}
gen=${MSYNC_GEN:-$build/testdata/gen/msync-gen}
replay=${MSYNC_REPLAY:-$build/cmd/msync-replay}
events=${E2E_EVENTS:-50000}
seeds=${E2E_SEEDS:-20}
for b in "$gen" "$replay"; do
	if [ ! -x "$b" ]; then
		echo "e2e-check: $b not built (run ninja -C $build)" >&2
		exit 2
	fi
done
gen=$(cd "$(dirname "$gen")" && pwd)/$(basename "$gen")
replay=$(cd "$(dirname "$replay")" && pwd)/$(basename "$replay")
work=$(mktemp -d "${TMPDIR:-/tmp}/msync-e2e.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work" || exit 2

pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok $((pass + fail)) - $1"; }
ko() { fail=$((fail + 1)); echo "not ok $((pass + fail)) - $1: $2"; }

# The checker must know the system shape the generator used.
config_for() {
	cores=8
	threads=8
	while [ $# -gt 0 ]; do
		case $1 in
		--cores) cores=$2; shift ;;
		--threads) threads=$2; shift ;;
		esac
		shift
	done
	printf 'system:\n  cores: %s\n  threads_per_core: %s\n' \
		"$cores" "$threads" >cfg.yaml
}

# clean NAME GEN-OPTIONS...: no violation expected
clean() {
	name=$1
	shift
	config_for "$@"
	if ! "$gen" -q -o t.trace --steps t.steps --image t.img "$@" 2>gen.err; then
		ko "$name" "msync-gen failed: $(head -1 gen.err)"
		return
	fi
	"$replay" check t.trace --steps t.steps --image t.img --config cfg.yaml \
		-o r.yaml >/dev/null 2>check.err
	rc=$?
	if [ $rc -eq 0 ]; then
		ok "$name"
	else
		ko "$name" "exit $rc: $(head -1 check.err)"
	fi
}

# Print "kind|accept,..|strand|iseq|pa" for each sidecar fault.
side_faults() {
	awk '
	/^faults:/ { on = 1; next }
	/^summary:/ { on = 0 }
	!on { next }
	/^- id:/ { if (k != "") print k "|" a "|" s "|" i "|" p; k = a = s = i = p = "" }
	/^  kind:/ { k = $2 }
	/^  accept:/ { a = $0; sub(/^  accept: *\[/, "", a); sub(/\].*/, "", a); gsub(/ /, "", a) }
	/^  strand:/ { s = $2 }
	/^  iseq:/ { i = $2 }
	/^  pa:/ { p = $2; gsub(/"/, "", p) }
	END { if (k != "") print k "|" a "|" s "|" i "|" p }
	' "$1"
}

# Print "kind strand iseq pa" for each reported violation.
report_violations() {
	awk '
	/^violations:/ { on = 1; next }
	!on { next }
	/^- id:/ { if (k != "") print k, s, i, p; k = s = i = p = "" }
	/^  kind:/ { k = $2 }
	/^  strand:/ { s = $2 }
	/^  iseq:/ { i = $2 }
	/^  pa:/ { p = $2; gsub(/"/, "", p) }
	END { if (k != "") print k, s, i, p }
	' "$1"
}

# faulty NAME GEN-OPTIONS...: every sidecar fault must be reported with its
# kind, and nothing else
faulty() {
	name=$1
	shift
	config_for "$@"
	if ! "$gen" -q -o t.trace --steps t.steps --image t.img --expect e.yaml \
		"$@" 2>gen.err; then
		ko "$name" "msync-gen failed: $(head -1 gen.err)"
		return
	fi
	"$replay" check t.trace --steps t.steps --image t.img --config cfg.yaml \
		-o r.yaml >/dev/null 2>check.err
	rc=$?
	if [ $rc -ne 1 ]; then
		ko "$name" "expected exit 1, got $rc: $(head -1 check.err)"
		return
	fi
	report_violations r.yaml >viol.txt
	side_faults e.yaml >want.txt
	if [ ! -s want.txt ]; then
		ko "$name" "no fault was injected"
		return
	fi
	# a fault is found by a violation of its kind at its instruction; a
	# violation at no fault's instruction is a false alarm
	missing=$(awk -F'|' '
	NR == FNR { v[NR] = $0; n = NR; next }
	{
		found = 0
		for (j = 1; j <= n; j++) {
			split(v[j], f, " ")
			if (f[2] != $3 || f[3] != $4 || f[4] != $5)
				continue
			hit[j] = 1
			if (f[1] == $1)
				found = 1
		}
		if (!found)
			printf "%s strand=%s iseq=%s pa=%s; ", $1, $3, $4, $5
	}
	END {
		for (j = 1; j <= n; j++)
			if (!(j in hit))
				printf "unexpected %s; ", v[j]
	}' viol.txt want.txt)
	if [ -z "$missing" ]; then
		ok "$name ($(wc -l <want.txt | tr -d ' ') faults found)"
	else
		ko "$name" "$missing"
	fi
}

# Random programs over many seeds, in three shapes: the default mix, a few
# hot lines everybody fights over, and a large footprint (mostly L1 and L2
# misses, evictions of lines in use).
seed=1
while [ "$seed" -le "$seeds" ]; do
	case $((seed % 3)) in
	1) clean "random seed=$seed" --seed "$seed" --events "$events" ;;
	2) clean "random hot lines seed=$seed" --seed "$seed" \
		--events "$events" --hot-lines 2 --hot-rate 0.9 ;;
	0) clean "random 16M footprint seed=$seed" --seed "$seed" \
		--events "$events" --footprint 16M --hot-rate 0.1 ;;
	esac
	seed=$((seed + 1))
done
clean "random, other messages seed=101" --seed 101 --events "$events" \
	--other-rate 0.01
clean "random, no L2 misses seed=5" --seed 5 --events "$events" \
	--l2-absent 0 --evict-rate 0
clean "random 4x4 stb=2 seed=6" --seed 6 --events "$events" --cores 4 \
	--threads 4 --stb-depth 2 --hot-lines 4 --hot-rate 0.8
clean "loads and stores on one hot line (bypass from committed stores) seed=1" \
	--seed 1 --events "$events" --hot-lines 1 --hot-rate 0.9 \
	--mix ld=6,st=6,ldd=2,membar=1
clean "random atomics and blocks seed=7" --seed 7 --events "$events" \
	--mix ld=4,st=4,ldblk=1,stblk=1,stbi=1,ldq=1,cas=2,swap=1,ldstub=1,membar=1
clean "block-init stores on L2 misses (l2hit=0 zeroing) seed=8" --seed 8 \
	--events "$events" --l2-absent 0.5 --evict-rate 0.01 \
	--mix ld=4,ldd=1,ldblk=1,st=2,stbi=2
for t in SB MP LB IRIW WRC 2+2W R S; do
	clean "litmus $t" --program "litmus:$t" --events "$events"
done
for k in load-value store-data bad-bypass store-order lost-inv stale-l1 \
	atomic-break membar; do
	faulty "inject $k" --seed 11 --events "$events" --inject "$k@2000"
done
faulty "inject all kinds, 2x4 system" --seed 13 --events "$events" \
	--cores 2 --threads 4 --inject stale-l1@500 --inject membar@1500 \
	--inject atomic-break@2500 --inject lost-inv@3500
faulty "inject all kinds at rates" --seed 12 --events $((events * 3)) \
	--inject load-value:0.001 --inject store-data:0.001 \
	--inject stale-l1:0.0005 --inject store-order:0.0005 \
	--inject bad-bypass:0.0005 --inject lost-inv:0.0005 \
	--inject atomic-break:0.0005 --inject membar:0.0005

echo "1..$((pass + fail))"
echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
