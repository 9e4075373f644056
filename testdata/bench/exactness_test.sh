#!/bin/bash
# exactness.sh (TAP), on its quick corpus: one build against itself agrees;
# a "build" that reports differently (the same binary with less context) is
# caught and named.
# usage: exactness_test.sh EXACTNESS_SH MSYNC_GEN MSYNC_REPLAY
. "$(dirname "$0")/tap-lib.sh"
exact=$1 gen=$2 msr=$(realpath "$3")
export MSR_EXACT_QUICK=1

bash "$exact" "$gen" "$msr" "$msr" "$work/corpus" >"$work/same.txt" 2>&1
ok $? "one build against itself: exit 0"
grep -qx '8 runs, 0 differ' "$work/same.txt"
ok $? "counts the runs: 4 traces (binary, text, hex) x 2 option sets"
[ -s "$work/corpus/quick/mixed.trace.zst" ] && [ -s "$work/corpus/quick/text.trace" ] &&
	[ -s "$work/corpus/quick/hex.trace.zst" ]
ok $? "keeps the quick corpus in its own folder of the work directory given"

printf '#!/bin/sh\nexec "%s" "$@" --context 1\n' "$msr" >"$work/less-context"
chmod +x "$work/less-context"
bash "$exact" "$gen" "$msr" "$work/less-context" "$work/corpus" >"$work/differ.txt" 2>&1
[ $? -eq 1 ]; ok $? "a build with other reports: exit 1"
grep -q '^DIFFER: mixed.trace.zst (default options) (exit 1 / 1)$' "$work/differ.txt" &&
	grep -Eq '^8 runs, [1-8] differ$' "$work/differ.txt"
ok $? "names the differing runs and counts them"

bash "$exact" "$gen" "$msr" >/dev/null 2>&1
[ $? -eq 2 ]; ok $? "missing arguments: usage error"
tap_end
