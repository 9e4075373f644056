#!/bin/bash
# bisect_tracediff.sh - end-to-end tests of `msync-replay tracediff` (TAP) on
# the fixtures of testdata/bisect: exit codes, the strand and event named at
# the first difference, untouched strands reported equal, --ts, --format yaml,
# the --window limit, and a binary/zstd input compared with its text form.
. "$(dirname "$0")/trace-lib.sh"
DATA="$MSR_SOURCE_ROOT/testdata/bisect"
SHOW_ON_FAIL=out.txt
SHOW_LINES=20

td() { # expected-rc args...: run tracediff into out.txt, check the exit code
	local want=$1 rc
	shift
	"$MSR" tracediff "$@" >out.txt 2>err.txt
	rc=$?
	[ "$rc" -eq "$want" ]
}

td 0 "$DATA/base.txt" "$DATA/base.txt"
ok $? "identical traces exit 0"
grep -qx 'strand 3: equal (10 events)' out.txt && grep -qx 'strand 9: equal (7 events)' out.txt \
	&& grep -qx 'global: equal (1 events)' out.txt
ok $? "identical traces: every stream reported equal with its event count"

td 1 "$DATA/base.txt" "$DATA/commit_moved.txt"
ok $? "a moved ST_COMMIT exits 1"
grep -qx 'strand 3: differs at strand event 5 (A event 8, B event 13; A has 10 events, B 10)' out.txt
ok $? "the moved ST_COMMIT: strand 3, strand event 5, A event 8 vs B event 13"
grep -q '^  >        5  A          8  ST_COMMIT tnum=3 ' out.txt &&
	grep -q '^  >        5  B         13  LD_ISSUE  tnum=3 ' out.txt
ok $? "the first difference shows both sides' canonical text"
grep -q '^           4  A          5  SSTEP     tnum=3' out.txt
ok $? "context before the difference is shown"
grep -qx 'strand 9: equal (7 events)' out.txt && grep -qx 'global: equal (1 events)' out.txt
ok $? "unrelated strand and the global stream reported equal"

td 0 "$DATA/base.txt" "$DATA/ts_only.txt"
ok $? "ts-only difference exits 0 without --ts"
td 1 --ts "$DATA/base.txt" "$DATA/ts_only.txt"
ok $? "ts-only difference exits 1 with --ts"
grep -qx 'global: differs at strand event 0 (A event 10, B event 10; A has 1 events, B 1)' out.txt
ok $? "--ts: the global stream (EVICT) differs too"

td 1 --format yaml "$DATA/base.txt" "$DATA/commit_moved.txt"
ok $? "--format yaml exits 1 on a difference"
python3 - out.txt <<'PY'
import sys
t = open(sys.argv[1]).read()
# Minimal structural check without third-party modules.
need = ["equal: false", "- strand: 3", "    position: 5", "      event: 13",
        "- strand: 9", "- stream: global"]
sys.exit(0 if all(n in t for n in need) else 1)
PY
ok $? "--format yaml names strand 3 position 5 and the B event"

head -n 12 "$DATA/base.txt" > short.txt
td 1 "$DATA/base.txt" short.txt
ok $? "a trace that ends early differs"
grep -q '^  >        [0-9]*  B          -  (end of trace)' out.txt
ok $? "the missing side is shown as end of trace"

"$MSR" encode "$DATA/base.txt" -o base.trace.zst 2>err.txt
td 0 "$DATA/base.txt" base.trace.zst
ok $? "text form and zstd binary form of the same trace are equal"

td 2 --window 1 "$DATA/base.txt" "$DATA/commit_moved.txt"
grep -q 'raise --window' err.txt
ok $? "a window too small for the drift exits 2 and says how to fix it"

td 2 "$DATA/base.txt" does-not-exist.trace
ok $? "an unreadable input exits 2"
td 2 "$DATA/base.txt"
ok $? "a missing argument exits 2"
td 2 - -
ok $? "A and B both standard input is a usage error"
td 0 "$DATA/base.txt" - < "$DATA/base.txt"
ok $? "B from standard input"
td 0 --help
grep -q '^usage: msync-replay tracediff' out.txt
ok $? "--help prints the usage"

finish
