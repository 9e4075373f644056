# trace-lib.sh - helpers for the command-line end-to-end tests (TAP).
# Sourced by the *.sh tests here; needs MSR_SOURCE_ROOT and MSR_BUILD_ROOT.
set -u
MSR="$MSR_BUILD_ROOT/cmd/msync-replay"
DATA="$MSR_SOURCE_ROOT/testdata/trace"
WORK=$(mktemp -d /tmp/msr-trace-cli.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
ntest=0
nfail=0
# a failed test shows the first SHOW_LINES lines of SHOW_ON_FAIL, if it exists
SHOW_ON_FAIL=
SHOW_LINES=5

# the interpreter itself, not a version manager's shim (see meson.build)
if [ -n "${MSR_PYTHON:-}" ]; then
	python3() { "$MSR_PYTHON" "$@"; }
fi

ok() { # condition-status description
	ntest=$((ntest + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $ntest - $2"
	else
		echo "not ok $ntest - $2"
		nfail=$((nfail + 1))
		if [ -n "$SHOW_ON_FAIL" ] && [ -f "$SHOW_ON_FAIL" ]; then
			head -n "$SHOW_LINES" "$SHOW_ON_FAIL" | sed 's/^/# /'
		fi
	fi
}

same() { # description expected-file actual-file
	if cmp -s "$2" "$3"; then
		ok 0 "$1"
	else
		ok 1 "$1"
		diff "$2" "$3" | head -20 | sed 's/^/# /'
	fi
}

# expect_fail description expected-stderr command...: exit 2, exact stderr
expect_fail() {
	local desc=$1 want=$2 rc
	shift 2
	"$@" >/dev/null 2>stderr.txt
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(cat stderr.txt)" = "$want" ]; then
		ok 0 "$desc"
	else
		ok 1 "$desc"
		echo "# exit $rc, stderr:"
		sed 's/^/#   /' stderr.txt
		echo "# wanted:"
		printf '%s\n' "$want" | sed 's/^/#   /'
	fi
}

# catches_stop PID: true once PID has handlers for both SIGINT and SIGTERM
# (bits 2 and 15 of SigCgt), so a stop sent now is caught, not fatal
catches_stop() {
	local cgt
	cgt=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$cgt" ] && (( (0x$cgt & 0x4002) == 0x4002 ))
}

# wait_catching PID: wait up to 10 s for catches_stop PID
wait_catching() {
	for _ in $(seq 200); do
		catches_stop "$1" && return 0
		sleep 0.05
	done
	return 1
}

# spray_trace N OUT: a binary trace of N MEM_SLAMs a 4 KiB page apart (each
# touches fresh memory); zstd when OUT ends in .zst
spray_trace() {
	awk -v n="$1" 'BEGIN { print "# msync-text 1"; for (i = 0; i < n; i++)
		printf "MEM_SLAM  pa=0x%010x data=0x%016x bmask=0xff ts=%d\n", i * 4096, i, i }' |
		"$MSR" encode - -o "$2" 2>/dev/null
}

finish() {
	echo "1..$ntest"
	[ "$nfail" -eq 0 ]
}
