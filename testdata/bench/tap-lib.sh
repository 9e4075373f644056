# tap-lib.sh - what the TAP tests of the benchmark tools share: a work
# directory removed at exit, `ok STATUS DESCRIPTION`, and `tap_end` for the
# plan and the exit status. Sourced by the *_test.sh scripts here.
set -u
# the interpreter itself, not a version manager's shim (see meson.build)
if [ -n "${MSR_PYTHON:-}" ]; then
	python3() { "$MSR_PYTHON" "$@"; }
fi
work=$(mktemp -d /tmp/msr-bench-test.XXXXXX) || exit 2
trap 'rm -rf "$work"' EXIT
n=0 fail=0
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}
tap_end() {
	echo "1..$n"
	exit $fail
}
