#!/bin/bash
# exactness.sh - do two msync-replay builds report alike? A change meant only
# to be faster must not change a report. Generates a corpus with msync-gen
# (every --inject kind, the benchmark shapes, litmus programs, non-memory
# messages and register deltas, pops, DMA, images; binary, hex-text and
# canonical-text inputs), runs `check` of both builds on each trace with
# several option sets, and compares the YAML report (without its timing
# fields), the JUnit file, stderr and the exit code.
#
#   testdata/bench/exactness.sh GEN OLD NEW [WORKDIR]
#
# GEN is msync-gen, OLD and NEW two msync-replay binaries. WORKDIR (default:
# a temporary directory, removed at the end) keeps the corpus when given, and
# a corpus already there is reused: the generator is deterministic. Prints
# one line per differing run and "N runs, M differ"; exits 1 if any differ.
# MSR_EXACT_QUICK=1 uses a small corpus (in WORKDIR/quick) and two option
# sets: a few seconds; the test suite checks the script that way.
set -u
. "$(dirname "$0")/two-builds.sh"
two_builds_args exactness "$@"
# the quick corpus has the full one's names: it keeps to a folder of its own
[ "${MSR_EXACT_QUICK:-}" = 1 ] && work=$work/quick && mkdir -p "$work"
cd "$work" || exit 2

# name: generator options (all with --steps and --image)
corpus=(
	"clean:--seed 1 --events 300000"
	"stale-l1:--seed 2 --events 200000 --inject stale-l1:0.002"
	"store-order:--seed 3 --events 200000 --inject store-order:0.002"
	"bad-bypass:--seed 4 --events 200000 --inject bad-bypass:0.002"
	"store-data:--seed 5 --events 200000 --inject store-data:0.002"
	"load-value:--seed 6 --events 200000 --inject load-value:0.002"
	"lost-inv:--seed 7 --events 200000 --inject lost-inv:0.002"
	"atomic-break:--seed 8 --events 200000 --inject atomic-break:0.002"
	"membar:--seed 9 --events 200000 --inject membar:0.002"
	"mixed:--seed 10 --events 400000 --inject store-order:0.001 --inject load-value:0.001 --inject lost-inv:0.001 --inject stale-l1:0.001"
	"hot:--seed 11 --events 300000 --hot-lines 4 --hot-rate 0.9 --mix ld=30,st=30,cas=10,swap=5,ldstub=5,membar=5,nop=15"
	"large:--seed 12 --events 300000 --footprint 16M --hot-rate 0.05"
	"deep:--seed 13 --events 300000 --stb-depth 32 --mix ld=20,st=70,stblk=4,stbi=2,nop=4"
	"deep-faults:--seed 14 --events 300000 --stb-depth 32 --inject store-order:0.002 --inject lost-inv:0.002"
	"other:--seed 15 --events 200000 --other-rate 0.05 --inject load-value:0.002"
	"pops:--seed 16 --events 200000 --pop-rate 0.1 --inject bad-bypass:0.002"
	"dma:--seed 17 --events 200000 --dma-rate 0.02 --evict-rate 0.01 --slam-rate 0.005 --check-rate 0.01"
	"allops:--seed 18 --events 200000 --mix ld=10,ldd=5,ldq=5,ldblk=5,ldio=5,st=10,stblk=5,stbi=5,cas=5,swap=5,ldstub=5,membar=5,nop=5,prefetch=5 --inject load-value:0.002 --inject atomic-break:0.002"
	"small:--seed 19 --events 20000 --cores 2 --threads 4 --inject store-order:0.01"
	"litmus-sb:--seed 20 --program litmus:SB --events 50000"
	"litmus-iriw:--seed 21 --program litmus:IRIW --events 50000 --inject stale-l1:0.01"
	"litmus-mp:--seed 22 --program litmus:MP --events 50000 --inject membar:0.01"
)
optsets=(
	""
	"--context 64"
	"--context-before 1 --context-after 64 --max-violations 10"
	"--no-tso"
	"--single-thread"
	"--strand 0-7 --pa 0:0xffff"
)

if [ "${MSR_EXACT_QUICK:-}" = 1 ]; then
	corpus=(
		"clean:--seed 1 --events 20000"
		"mixed:--seed 10 --events 40000 --inject store-order:0.003 --inject load-value:0.003 --inject lost-inv:0.003"
	)
	optsets=("" "--single-thread --context 64")
fi

unjunit() { sed 's/time="[^"]*"//g' "$1" 2>/dev/null; }

for entry in "${corpus[@]}"; do
	name=${entry%%:*}
	[ -s "$name.trace.zst" ] && continue
	# shellcheck disable=SC2086 # the options are words
	"$gen" -q -o "$name.trace.zst" --steps "$name.steps.zst" \
		--image "$name.image" ${entry#*:} ||
		{ echo "exactness: msync-gen failed for $name" >&2; exit 2; }
done
# the other input forms, from the first traces with violations
[ -s text.trace ] || "$old" dump mixed.trace.zst -o text.trace || exit 2
[ -s text.steps.zst ] || cp mixed.steps.zst text.steps.zst
[ -s text.image ] || cp mixed.image text.image
[ -s hex.trace.zst ] || "$old" encode --hex text.trace -o hex.trace.zst || exit 2
[ -s hex.steps.zst ] || cp mixed.steps.zst hex.steps.zst
[ -s hex.image ] || cp mixed.image hex.image

names=()
for entry in "${corpus[@]}"; do names+=("${entry%%:*}.trace.zst"); done
names+=(text.trace hex.trace.zst)

runs=0 differ=0
for t in "${names[@]}"; do
	base=${t%%.*}
	for o in "${optsets[@]}"; do
		for side in old new; do
			bin=$old
			[ $side = new ] && bin=$new
			# nothing left from the run before: a run that writes no
			# report must not be compared with an older one
			rm -f r.* "$side".*
			# the same output names for both: stderr and the report name them
			# shellcheck disable=SC2086 # the options are words
			"$bin" check "$t" --steps "$base.steps.zst" --image "$base.image" \
				-o r.yaml --junit r.xml $o 2>r.err
			echo $? >"$side.rc"
			for f in yaml xml err; do
				[ -e "r.$f" ] && mv "r.$f" "$side.$f"
			done
		done
		runs=$((runs + 1))
		# a file one side did not write reads as empty
		if ! cmp -s old.rc new.rc || ! cmp -s <(untimed old.yaml) <(untimed new.yaml) ||
			! cmp -s <(unjunit old.xml) <(unjunit new.xml) ||
			! cmp -s old.err new.err; then
			differ=$((differ + 1))
			echo "DIFFER: $t ${o:-(default options)} (exit $(cat old.rc) / $(cat new.rc))"
		fi
	done
done
rm -f old.* new.* r.*
echo "$runs runs, $differ differ"
[ "$differ" -eq 0 ]
