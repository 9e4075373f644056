#!/bin/bash
# msync-replay check on several traces (TAP): a clean trace, one with
# violations and a truncated one, replayed in parallel (-j2) and serially
# (-j1), must give the same reports as single runs, the right summary table
# and exit code; --list parsing and the several-trace usage errors.
. "$(dirname "$0")/trace-lib.sh"
ENG="$MSR_SOURCE_ROOT/testdata/engine"

expect_rc() { # description expected-rc command...
	local desc=$1 want=$2 rc
	shift 2
	"$@" >stdout.txt 2>stderr.txt
	rc=$?
	[ "$rc" -eq "$want" ]
	ok $? "$desc (exit $rc)"
	[ "$rc" -eq "$want" ] || sed 's/^/#   /' stderr.txt
}

# reports without the wall-clock lines
stable() { grep -v -e elapsed_seconds -e events_per_second "$1"; }

same_report() { # description expected actual
	if [ -f "$3" ] && cmp -s <(stable "$2") <(stable "$3"); then
		ok 0 "$1"
	else
		ok 1 "$1"
		diff <(stable "$2") <(stable "$3") 2>&1 | head -10 | sed 's/^/# /'
	fi
}

cp "$ENG/clean_load_store.trace" clean.trace
cp "$ENG/clean_load_store.steps" clean.steps
cp "$ENG/v_load_value.trace" bad.trace
cp "$ENG/v_load_value.steps" bad.steps
"$MSR" encode -o full.bin clean.trace
head -c $(($(stat -c %s full.bin) - 5)) full.bin >trunc.trace
cp clean.steps trunc.steps
rm full.bin

mkdir single
expect_rc "single clean run" 0 "$MSR" check -q clean.trace -s clean.steps -o single/clean.trace.yaml
expect_rc "single run with violations" 1 "$MSR" check -q bad.trace -s bad.steps -o single/bad.trace.yaml
expect_rc "single truncated run" 2 "$MSR" check -q trunc.trace -s trunc.steps -o single/trunc.trace.yaml

expect_rc "-j2 --no-huge-pages passes it to each replay" 1 \
	"$MSR" check -j2 -o nohuge --no-huge-pages --steps-suffix .steps clean.trace bad.trace
same_report "-j2 --no-huge-pages: clean report equals the single run's" \
	single/clean.trace.yaml nohuge/clean.trace.yaml
same_report "-j2 --no-huge-pages: violations report equals the single run's" \
	single/bad.trace.yaml nohuge/bad.trace.yaml

for j in 2 1; do
	expect_rc "-j$j on clean, violations, truncated: unusable wins" 2 \
		"$MSR" check -j$j -o par$j --steps-suffix .steps clean.trace bad.trace trunc.trace
	cp stdout.txt table$j.txt
	for t in clean bad trunc; do
		same_report "-j$j: $t report equals the single run's" \
			single/$t.trace.yaml par$j/$t.trace.yaml
	done
	awk 'NR == 1 && $1 == "trace" && $2 == "exit" && $3 == "violations" { h = 1 }
	     $1 == "clean.trace" && $2 == 0 && $3 == 0 && $4 == "-" && $5 == "par'$j'/clean.trace.yaml" { c = 1 }
	     $1 == "bad.trace" && $2 == 1 && $3 == 1 && $4 == "load-value" { b = 1 }
	     $1 == "trunc.trace" && $2 == 2 { t = 1 }
	     END { exit !(h && c && b && t && NR == 4) }' table$j.txt
	ok $? "-j$j: summary table has a header and one row per trace in input order"
	[ "$(sed -n 2p table$j.txt | cut -c1-11)" = "clean.trace" ] &&
		[ "$(sed -n 4p table$j.txt | cut -c1-11)" = "trunc.trace" ]
	ok $? "-j$j: rows follow the command line order"
done
[ "$(wc -l <stderr.txt)" = 1 ] && grep -q "^msync-replay: trunc.trace offset=" stderr.txt
ok $? "the quiet replays print only the unusable trace's error line"
cmp -s table1.txt <(sed 's/par2/par1/' table2.txt)
ok $? "-j1 and -j2 print the same table"
! grep -q "^msync-replay: \[" stderr.txt
ok $? "no progress lines when stderr is not a terminal"

# --progress: a line per ended replay, in the order they end, with the
# running counts; the last one says all are done. With -j1 they end in the
# order they start: the largest input (trace and step log) first, here
# clean (1410 + 160 bytes), trunc (343 + 160), bad (304 + 64)
expect_rc "--progress" 2 "$MSR" check -j1 --progress -o prog --steps-suffix .steps \
	clean.trace bad.trace trunc.trace
grep "^msync-replay: \[" stderr.txt >progress.txt
[ "$(sed -n 1p progress.txt)" = "msync-replay: [1/3] clean.trace: clean (exit 0); 0 with violations, 0 unusable, 0 running" ] &&
	[ "$(sed -n 2p progress.txt)" = "msync-replay: [2/3] trunc.trace: unusable (exit 2); 0 with violations, 1 unusable, 0 running" ] &&
	[ "$(sed -n 3p progress.txt)" = "msync-replay: [3/3] bad.trace: violations (exit 1); 1 with violations, 1 unusable, 0 running" ] &&
	[ "$(wc -l <progress.txt)" -eq 3 ]
ok $? "--progress: one line per replay with what it found and the totals so far"

# The start order: a pipe first (its writer may be waiting), then the
# files from the largest down, equal sizes in input order; the table
# keeps the input order
{ cat clean.trace; for _ in $(seq 100); do echo "# padding: the largest file"; done; } >big.trace
cp bad.trace bad2.trace
mkfifo pipe.trace
cat clean.trace >pipe.trace &
expect_rc "-j1 with a pipe and files of different sizes" 0 \
	"$MSR" check -j1 --progress -o ord bad.trace bad2.trace big.trace pipe.trace
kill $! 2>/dev/null
[ "$(grep "^msync-replay: \[" stderr.txt | cut -d' ' -f3 | tr '\n' ' ')" = \
	"pipe.trace: big.trace: bad.trace: bad2.trace: " ]
ok $? "start order: the pipe, the largest file, then equal sizes as given"
[ "$(sed -n '2,5p' stdout.txt | cut -d' ' -f1 | tr '\n' ' ')" = \
	"bad.trace bad2.trace big.trace pipe.trace " ]
ok $? "the table keeps the input order"
rm pipe.trace
expect_rc "--progress -j2" 2 "$MSR" check -j2 --progress -o prog --steps-suffix .steps \
	clean.trace bad.trace trunc.trace
[ "$(grep -c "^msync-replay: \[[123]/3\] " stderr.txt)" -eq 3 ] &&
	grep -q "^msync-replay: \[3/3\] .*; 1 with violations, 1 unusable, 0 running$" stderr.txt
ok $? "--progress -j2: three lines, the last with every total"
expect_rc "--no-progress after --progress" 2 "$MSR" check -j2 --progress --no-progress -o prog \
	--steps-suffix .steps clean.trace bad.trace trunc.trace
! grep -q "^msync-replay: \[" stderr.txt; ok $? "--no-progress: none"

expect_rc "violations but nothing unusable: exit 1" 1 \
	"$MSR" check -j2 -o v --steps-suffix .steps clean.trace bad.trace
expect_rc "one trace with -j: still a table, exit 0" 0 \
	"$MSR" check -j1 -o c --steps-suffix .steps clean.trace
grep -q "^clean.trace " stdout.txt && [ -f c/clean.trace.yaml ]
ok $? "one trace with -j: row and report written"
expect_rc "--bisect: unusable trace gives 125" 125 \
	"$MSR" check --bisect -j2 -o b --steps-suffix .steps clean.trace trunc.trace

cat >list.txt <<'L'
# trace          steps        report
clean.trace      clean.steps  l/clean.yaml
bad.trace        bad.steps    # report derived from -o
  trunc.trace    -            l/trunc-nosteps.yaml
L
mkdir l
expect_rc "--list with steps, reports and comments" 2 "$MSR" check --list list.txt -o l
same_report "--list: listed report path" single/clean.trace.yaml l/clean.yaml
same_report "--list: derived report path" single/bad.trace.yaml l/bad.trace.yaml
[ -f l/trunc-nosteps.yaml ] && ! grep -q "role: steps" l/trunc-nosteps.yaml
ok $? "--list: STEPS '-' runs without a step log"

printf 'clean.trace clean.steps a.yaml\n\nbad.trace bad.steps b.yaml extra\n' >bad-list.txt
expect_rc "--list: too many fields" 2 "$MSR" check --list bad-list.txt
grep -q "bad-list.txt:3:28: more fields than expected; a line is TRACE \[STEPS \[REPORT\]\]" stderr.txt
ok $? "--list error names the file, line and column"
printf 'clean.trace "clean steps\n' >quote-list.txt
expect_rc "--list: unterminated quote" 2 "$MSR" check --list quote-list.txt -o e
grep -q "quote-list.txt:1:13: a quoted field has no closing quote" stderr.txt
ok $? "names the column of the open quote"

# paths with blanks are quoted; '#' inside a field is part of the path
mkdir "seed 7" "run#3"
cp clean.trace clean.steps "seed 7/"
cp bad.trace bad.steps "run#3/"
cat >quoted-list.txt <<'L'
"seed 7/clean.trace"  "seed 7/clean.steps"  "q/seed 7.yaml"  # quoted
run#3/bad.trace       run#3/bad.steps       # derived: q/bad.trace.yaml
L
mkdir q
"$MSR" check -q "seed 7/clean.trace" -s "seed 7/clean.steps" -o single/seed7.yaml
"$MSR" check -q run#3/bad.trace -s run#3/bad.steps -o single/run3.yaml
expect_rc "--list with quoted paths and '#' in a path" 1 \
	"$MSR" check --list quoted-list.txt -o q
same_report "--list: quoted trace, steps and report" single/seed7.yaml "q/seed 7.yaml"
same_report "--list: '#' inside a path is not a comment" single/run3.yaml q/bad.trace.yaml
grep -q '^"seed 7/clean.trace"  *0  *0  *-  *"q/seed 7.yaml"$' stdout.txt &&
	grep -q '^run#3/bad.trace  *1  *1  *load-value  *q/bad.trace.yaml$' stdout.txt
ok $? "the table quotes the paths that hold blanks, as a list would"
expect_rc "--progress with quoted paths" 1 "$MSR" check -j1 --progress --list quoted-list.txt -o q
grep -q '^msync-replay: \[[12]/2\] "seed 7/clean.trace": clean (exit 0);' stderr.txt &&
	grep -q '^msync-replay: \[[12]/2\] run#3/bad.trace: violations (exit 1);' stderr.txt
ok $? "--progress quotes them the same way"

# a list saved on Windows: a UTF-8 byte-order mark, CR LF line ends
mkdir bom
printf '\357\273\277clean.trace clean.steps bom/clean.yaml\r\n' >bom-list.txt
expect_rc "--list: a byte-order mark and CR LF" 0 "$MSR" check --list bom-list.txt
same_report "--list: the BOM is not part of the first trace's path" single/clean.trace.yaml bom/clean.yaml

# --list - reads the list from standard input, e.g. from find(1)
printf 'clean.trace clean.steps\nbad.trace bad.steps\n' |
	"$MSR" check --list - -o stdin-out >stdout.txt 2>stderr.txt
ok $(($? != 1)) "--list -: the list from standard input (exit 1: violations)"
same_report "--list -: first trace" single/clean.trace.yaml stdin-out/clean.trace.yaml
same_report "--list -: second trace" single/bad.trace.yaml stdin-out/bad.trace.yaml
printf 'clean.trace\n"x\n' | "$MSR" check --list - -o e >stdout.txt 2>stderr.txt
ok $(($? != 2)) "--list -: a bad line is a usage error"
grep -q "standard input:2:1: a quoted field" stderr.txt
ok $? "--list -: the message names standard input and the line"
printf '# nothing\n\n' >empty-list.txt
expect_rc "--list without traces" 2 "$MSR" check --list empty-list.txt -o e
grep -q "empty-list.txt: no traces" stderr.txt; ok $? "says the list is empty"
printf 'clean.trace\n-\n' >stdin-list.txt
expect_rc "--list: standard input as a trace" 2 "$MSR" check --list stdin-list.txt -o e
grep -q "stdin-list.txt:2:" stderr.txt; ok $? "names the line of the '-' trace"
expect_rc "--list: missing file" 2 "$MSR" check --list no-such-list.txt
grep -q "no-such-list.txt" stderr.txt; ok $? "names the missing list"

expect_rc "several traces need report paths" 2 "$MSR" check clean.trace bad.trace
grep -q "need -o DIR" stderr.txt; ok $? "says -o DIR is needed"
expect_rc "--steps cannot be shared" 2 "$MSR" check -o x -s clean.steps clean.trace bad.trace
expect_rc "--junit - with several traces" 2 "$MSR" check -o x --junit - clean.trace bad.trace
grep -q "standard output holds the table" stderr.txt; ok $? "says stdout holds the table"

# --junit FILE: one document, a testsuite per trace in input order, each
# the single run's; the totals summed; nothing left of the replays' own
junit_check() { # merged.xml single-dir-or-- trace:class...  (python3)
	python3 - "$@" <<'PY'
import sys, re, xml.etree.ElementTree as ET
merged, single, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
root = ET.parse(merged).getroot()
suites = root.findall("testsuite")
assert [s.get("name") for s in suites] == [p.rsplit(":", 1)[0] for p in pairs], \
    [s.get("name") for s in suites]
for k in ("tests", "failures", "errors", "skipped"):
    assert int(root.get(k)) == sum(int(s.get(k)) for s in suites), k
for s, p in zip(suites, pairs):
    cls = p.rsplit(":", 1)[1]
    assert {c.get("classname") for c in s.iter("testcase")} == {cls}, (p, cls)
    if single == "--":
        continue
    base = p.rsplit(":", 1)[0].rsplit("/", 1)[-1]
    one = ET.parse(f"{single}/{base}.xml").getroot().find("testsuite")
    s.tail = one.tail = None
    strip = lambda e: re.sub(r' time="[0-9.]+"', "", ET.tostring(e, "unicode"))
    for c in one.iter("testcase"):
        c.set("classname", cls)
    assert strip(s) == strip(one), p
PY
}
for t in clean bad trunc; do
	"$MSR" check -q $t.trace -s $t.steps -o single/$t.x.yaml --junit single/$t.trace.xml
done
expect_rc "--junit with several traces" 2 "$MSR" check -j2 -o ju --steps-suffix .steps \
	--junit ju.xml clean.trace bad.trace trunc.trace
xmllint --noout ju.xml && junit_check ju.xml single clean.trace:msync-replay.clean_trace \
	bad.trace:msync-replay.bad_trace trunc.trace:msync-replay.trunc_trace
ok $? "--junit: a testsuite per trace in input order, each the single run's, totals summed"
[ -z "$(find . -name '.msync-replay-junit-*')" ]; ok $? "--junit: the replays' documents are removed"
mkdir -p jd/s1 jd/s2
cp clean.trace jd/s1/nas.trace; cp clean.steps jd/s1/steps
cp bad.trace jd/s2/nas.trace; cp bad.steps jd/s2/steps
expect_rc "--junit, traces with one file name" 1 "$MSR" check -j2 -o jd/out --steps-name steps \
	--junit jd/all.xml jd/s1/nas.trace jd/s2/nas.trace
junit_check jd/all.xml -- jd/s1/nas.trace:msync-replay.s1.nas_trace \
	jd/s2/nas.trace:msync-replay.s2.nas_trace
ok $? "--junit: same file names get their directories in the class name"
grep -q '<failure type="load-value"' jd/all.xml; ok $? "--junit: the failure is in the merged document"
expect_rc "--junit in a missing directory" 2 "$MSR" check -j2 -o jm --junit no-dir/all.xml \
	clean.trace bad.trace
grep -q "^msync-replay: check: --junit no-dir/all.xml: cannot create a working directory beside it: No such file or directory" stderr.txt &&
	[ ! -e jm ] || [ -z "$(ls jm)" ]
ok $? "--junit in a missing directory: a usage error before any replay"
mkdir d1 d2
cp clean.trace d1/; cp clean.trace d2/
cp clean.trace d1/clean.trace.copy; cp clean.steps d1/clean.steps
# farm dumps are all called nas.trace: same basenames get the directories
# that tell them apart, at one depth for all; distinct basenames stay flat
mkdir -p deep/a/run deep/b/run
cp bad.trace deep/a/run/clean.trace; cp clean.trace deep/b/run/clean.trace
expect_rc "same basenames: reports under their directories" 0 \
	"$MSR" check -o x d1/clean.trace d2/clean.trace ./deep/a/run/clean.trace deep/b/./run/clean.trace bad.trace
report_of() { # description trace report
	grep -q "^  path: \"$2\"$" "$3"
	ok $? "$1"
}
report_of "d1/clean.trace -> x/d1/clean.trace.yaml" d1/clean.trace x/d1/clean.trace.yaml
report_of "d2/clean.trace -> x/d2/clean.trace.yaml" d2/clean.trace x/d2/clean.trace.yaml
report_of "./deep/a/run/clean.trace -> x/a/run/clean.trace.yaml" ./deep/a/run/clean.trace x/a/run/clean.trace.yaml
report_of "deep/b/./run/clean.trace -> x/b/run/clean.trace.yaml" deep/b/./run/clean.trace x/b/run/clean.trace.yaml
report_of "a unique basename, at the same depth: x/bad.trace.yaml" bad.trace x/bad.trace.yaml
grep -q "^deep/b/./run/clean.trace  *0  *0  *-  *x/b/run/clean.trace.yaml$" stdout.txt
ok $? "the table names the derived report"
expect_rc "distinct basenames stay flat" 0 "$MSR" check -o flat d1/clean.trace d1/clean.trace.copy
[ -f flat/clean.trace.yaml ] && [ -f flat/clean.trace.copy.yaml ] && [ ! -e flat/d1 ]
ok $? "DIR/<basename>.yaml"
expect_rc "the same trace twice" 2 "$MSR" check -o x d1/clean.trace ./d1/clean.trace
grep -q "d1/clean.trace and ./d1/clean.trace would both write report x/d1/clean.trace.yaml" stderr.txt
ok $? "names the clash"
expect_rc "a derived report never leaves DIR" 2 "$MSR" check -o x ../clean.trace clean.trace
grep -q "would both write report x/clean.trace.yaml" stderr.txt; ok $? "no .. in a report path"
expect_rc "nor does one of a path ending in .." 2 "$MSR" check -o x/y ../.. d1/clean.trace d2/clean.trace
grep -q '^\.\./\.\. .* x/y/\.\.\.yaml$' stdout.txt && [ -f x/y/d1/clean.trace.yaml ] && [ ! -e x/...yaml ]
ok $? "only the basename of such a path, while the others go two deep"
printf 'd2/clean.trace - x/clean.trace.yaml\n' >clash-list.txt
expect_rc "a listed report equal to a derived one" 2 \
	"$MSR" check --list clash-list.txt -o x clean.trace
grep -q "d2/clean.trace and clean.trace would both write report x/clean.trace.yaml" stderr.txt
ok $? "names that clash"
# --steps-name: the step log beside each trace under one name, as a farm
# keeps seedN/nas.trace.zst and seedN/steps.log.zst
mkdir -p farm/s1 farm/s2
cp clean.trace farm/s1/nas.trace; cp clean.steps farm/s1/steps.log
cp bad.trace farm/s2/nas.trace; cp bad.steps farm/s2/steps.log
expect_rc "--steps-name: each trace with the log beside it" 1 \
	"$MSR" check -j2 -o fr --steps-name steps.log farm/s1/nas.trace farm/s2/nas.trace
same_report_paths() { # description expected actual: equal but for input paths
	[ -f "$3" ] && cmp -s <(stable "$2" | grep -v "^  path: ") <(stable "$3" | grep -v "^  path: ")
	ok $? "$1"
}
same_report_paths "--steps-name: s1 as the single run with its log" single/clean.trace.yaml fr/s1/nas.trace.yaml
same_report_paths "--steps-name: s2 as the single run with its log" single/bad.trace.yaml fr/s2/nas.trace.yaml
grep -q '^  path: "farm/s2/steps.log"$' fr/s2/nas.trace.yaml; ok $? "the report names the log beside the trace"
expect_rc "--steps-name alone selects several-trace mode" 0 \
	"$MSR" check --steps-name steps.log -o one-dir farm/s1/nas.trace
[ -f one-dir/nas.trace.yaml ]; ok $? "and writes DIR/<basename>.yaml"
expect_rc "--steps-name with a '/'" 2 "$MSR" check --steps-name a/b -o x farm/s1/nas.trace farm/s2/nas.trace
expect_rc "--steps-name and --steps-suffix" 2 \
	"$MSR" check --steps-name steps.log --steps-suffix .steps -o x farm/s1/nas.trace farm/s2/nas.trace
grep -q "not both" stderr.txt; ok $? "says to pick one"
expect_rc "-j 0 is a usage error" 2 "$MSR" check -j0 -o x clean.trace bad.trace
expect_rc "all clean: exit 0" 0 "$MSR" check -j2 -o allclean --steps-suffix .steps clean.trace d1/clean.trace.copy
expect_rc "options reach every replay" 1 "$MSR" check -j2 -o f --steps-suffix .steps --no-tso --strand=0 --max-violations 1 clean.trace bad.trace
"$MSR" check -q --no-tso --strand=0 --max-violations 1 bad.trace -s bad.steps -o fsingle.yaml
same_report "passed-on options give the single run's report" fsingle.yaml f/bad.trace.yaml
grep -q "tso: false" f/bad.trace.yaml; ok $? "--no-tso reached the child"
expect_rc "--help shows the several-trace options" 0 "$MSR" check -j2 --help
grep -q -- "--list FILE" stdout.txt && grep -q -- "--steps-suffix" stdout.txt
ok $? "--help lists --list and --steps-suffix"

# one trace without -j/--list stays the single-trace check, however the
# options are spelt: no table, the report where -o says
expect_rc "-qo FILE TRACE is a single run" 0 "$MSR" check -qo one.yaml clean.trace -s clean.steps
[ -f one.yaml ] && [ ! -s stdout.txt ]; ok $? "-qo: report in the file, no table"
expect_rc "--out FILE TRACE --ste LOG is a single run" 0 "$MSR" check -q --out one2.yaml clean.trace --ste clean.steps
[ -f one2.yaml ] && [ ! -s stdout.txt ]; ok $? "abbreviated options: report in the file, no table"
expect_rc "-qj1 in a cluster means several-trace mode" 0 "$MSR" check -qj1 -o cl --steps-suffix .steps clean.trace
grep -q "^clean.trace  *0" stdout.txt; ok $? "-qj1: table printed"

# a replay killed by a signal: the others finish, its row says so. The test
# holds the FIFO open for writing (fd 3, not passed on), so the replay of
# hang.trace opens it and then blocks reading; the child to kill is the one
# with hang.trace among its open files, which tells it from the clean one
# whatever the order they start and end in.
mkfifo hang.trace
exec 3<>hang.trace
rm -rf k
mkdir kj
"$MSR" check -j2 -o k --junit kj/all.xml clean.trace hang.trace >killed.txt 2>/dev/null 3>&- &
parent=$!
child=
for _ in $(seq 400); do
	if [ -f k/clean.trace.yaml ]; then
		for kid in $(pgrep -P "$parent"); do
			if ls -l "/proc/$kid/fd" 2>/dev/null | grep -q '/hang\.trace$'; then
				child=$kid
			fi
		done
		[ -n "$child" ] && break
	fi
	sleep 0.05
done
killed=1
# what a replay killed while writing its JUnit document would leave
for d in kj/.msync-replay-junit-*; do : >"$d/.2.xml.tmp"; done
[ -n "$child" ] && kill -9 "$child" && killed=0
ok $killed "found and killed the blocked replay"
exec 3>&-
# not killed: give the replay an end of file rather than hang the test
[ "$killed" -eq 0 ] || timeout 10 sh -c ': >hang.trace'
wait $parent
rc=$?
[ "$rc" -eq 2 ]; ok $? "a killed replay makes the run unusable (exit $rc)"
grep -q "^hang.trace  *signal 9  *-  *-  *(not written)" killed.txt &&
	grep -q "^clean.trace  *0  *0  *-  *k/clean.trace.yaml" killed.txt
ok $? "the other trace's row is intact, the killed one says signal 9"
[ "$(ls -A kj)" = all.xml ] && xmllint --noout kj/all.xml &&
	junit_check kj/all.xml -- clean.trace:msync-replay.clean_trace hang.trace:msync-replay.hang_trace &&
	grep -q '<error type="no-report" message="the replay was killed by signal 9">' kj/all.xml
ok $? "--junit: the killed replay's testsuite says so; nothing is left beside the document"
sed 's/^/# /' killed.txt

# SIGTERM to the parent: passed on to the running replay (partial report),
# nothing more is started, the table is still printed
rm -rf t
"$MSR" check -j1 -o t --junit t.xml hang.trace clean.trace >term.txt 2>/dev/null &
parent=$!
child=
for _ in $(seq 100); do
	# wait until the replay catches SIGTERM
	child=$(pgrep -P "$parent") && [ -n "$child" ] && catches_stop "$child" && break
	sleep 0.05
done
kill -TERM "$parent"
# a stop that lands just before the replay blocks on the FIFO would leave it
# waiting for a writer: after 30 s give it one rather than hang the test
( sleep 30; timeout 5 sh -c ': >hang.trace' ) >/dev/null 2>&1 &
watchdog=$!
wait $parent
rc=$?
pkill -P "$watchdog"
kill "$watchdog" 2>/dev/null
[ "$rc" -eq 2 ]; ok $? "SIGTERM: exit 2 ($rc)"
grep -q "^hang.trace  *2  *0  *-  *t/hang.trace.yaml" term.txt &&
	grep -q "^clean.trace  *not run  *-" term.txt &&
	grep -q "stopped: interrupted" t/hang.trace.yaml
ok $? "SIGTERM: the running replay wrote a partial report, the next was not run"
junit_check t.xml -- hang.trace:msync-replay.hang_trace clean.trace:msync-replay.clean_trace &&
	grep -q '<error type="unusable-input"' t.xml &&
	grep -q '<error type="no-report" message="not run: the run was stopped before this replay started">' t.xml
ok $? "SIGTERM: the JUnit document has the partial replay and the one not run"
sed 's/^/# /' term.txt

# --max-memory reaches every replay: under 1 MiB a trace of 20000 events
# stops at the guard's first look (16384 events), the short clean one
# finishes
spray_trace 20000 spray.trace
expect_rc "--max-memory with -j: the replay over it is unusable" 2 \
	"$MSR" check -j2 -o mm --max-memory 1 clean.trace spray.trace
grep -q "^spray.trace  *2  *0  *-  *mm/spray.trace.yaml" stdout.txt &&
	grep -q "^clean.trace  *0 " stdout.txt &&
	grep -q "stopped: memory-limit" mm/spray.trace.yaml
ok $? "its report says stopped: memory-limit, the other replay is clean"

echo x >k/clean.trace.yaml
expect_rc "a bad configuration fails every replay" 2 \
	"$MSR" check -j2 -o k -c no-such.yaml clean.trace bad.trace
grep -q "^clean.trace  *2  *-  *-  *(not written)" stdout.txt
ok $? "an earlier report is not shown for a replay that wrote none"
expect_rc "--junit when no replay writes a report" 2 \
	"$MSR" check -j2 -o k -c no-such.yaml --junit k.xml clean.trace bad.trace
xmllint --noout k.xml && junit_check k.xml -- clean.trace:msync-replay.clean_trace \
	bad.trace:msync-replay.bad_trace &&
	[ "$(grep -c '<error type="no-report" message="the replay ended with exit status 2 and wrote no report (its error is on stderr)">' k.xml)" -eq 2 ]
ok $? "--junit: a replay without a report is a testsuite with an error saying so"

echo "1..$ntest"
[ "$nfail" -eq 0 ]
