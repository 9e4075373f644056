#!/bin/sh
# engine_gen_agreement.sh - the engine against msync-gen (TAP): clean
# generated traces replay without any engine violation, and every injected
# engine-level fault is reported with the kind the generator expects.
# Needs MSR_BUILD_ROOT (set by meson for tests).
set -u
GEN="$MSR_BUILD_ROOT/testdata/gen/msync-gen"
MSR="$MSR_BUILD_ROOT/cmd/msync-replay"
WORK=$(mktemp -d /tmp/msr-engine-gen.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
ntest=0

ok() { # status description
	ntest=$((ntest + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $ntest - $2"
	else
		echo "not ok $ntest - $2"
	fi
}

gen() { # seed extra-args...
	seed=$1
	shift
	"$GEN" -q -o t.trace --steps t.steps --image t.img --expect t.exp \
		--seed "$seed" --events 30000 "$@"
}

replay() {
	"$MSR" check t.trace --steps t.steps --image t.img -o r.yaml \
		--no-tso --no-progress --quiet >/dev/null 2>&1
}

for seed in 1 2 3; do
	gen "$seed" --pop-rate 0.05 --evict-rate 0.01 --dma-rate 0.005 \
		--slam-rate 0.002 --other-rate 0.05
	replay
	rc=$?
	ok "$rc" "clean trace seed=$seed replays without engine violations"
	[ "$rc" -eq 0 ] || grep -m 5 "message:" r.yaml | sed 's/^/# /'
done

for spec in load-value:load-value store-data:store-data \
	    bad-bypass:load-value lost-inv:leftover; do
	fault=${spec%%:*}
	kind=${spec#*:}
	gen 4 --inject "$fault:0.002"
	want=$(grep -c "fault: $fault" t.exp)
	replay
	rc=$?
	got=$(grep -c "kind: $kind\$" r.yaml)
	[ "$rc" -eq 1 ] && [ "$want" -gt 0 ] && [ "$got" -ge "$want" ]
	ok $? "fault $fault: $want injected, $got $kind reported"
done

echo "1..$ntest"
