#!/bin/bash
# msync-replay check end to end (TAP): options, filters, exit codes, the
# stderr summary, partial reports and atomic report writing, on the
# hand-written scenarios of testdata/engine.
. "$(dirname "$0")/trace-lib.sh"
ENG="$MSR_SOURCE_ROOT/testdata/engine"

yget() { # file dotted.path -> value (python3 + PyYAML)
	python3 - "$1" "$2" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[int(k)] if isinstance(d, list) else d.get(k)
print("null" if d is None else (str(d).lower() if isinstance(d, bool) else d))
PY
}

expect_rc() { # description expected-rc command...
	local desc=$1 want=$2 rc
	shift 2
	"$@" >stdout.txt 2>stderr.txt
	rc=$?
	[ "$rc" -eq "$want" ]
	ok $? "$desc (exit $rc)"
	[ "$rc" -eq "$want" ] || sed 's/^/#   /' stderr.txt
}

LV="$ENG/v_load_value.trace"
LVS="$ENG/v_load_value.steps"

expect_rc "--help" 0 "$MSR" check --help
grep -q -- "--strand LIST" stdout.txt && grep -q "Filters only hide violations" stdout.txt
ok $? "--help lists the filters and says they only hide violations"
expect_rc "no TRACE is a usage error" 2 "$MSR" check
grep -q "missing TRACE argument" stderr.txt; ok $? "names the missing argument"
expect_rc "unknown option" 2 "$MSR" check --frobnicate "$LV"
expect_rc "--context out of range" 2 "$MSR" check --context 65 "$LV"
expect_rc "--strand malformed" 2 "$MSR" check --strand 3-x "$LV"
expect_rc "--cycles reversed" 2 "$MSR" check --cycles 9:1 "$LV"

printf 'system:\n  cores: 4\n  colour: 1\n' >bad.yaml
expect_rc "bad config" 2 "$MSR" check --config bad.yaml -o r.yaml "$LV"
grep -q "bad.yaml:3:3: unknown key 'colour' in section system" stderr.txt
ok $? "config error names file:line:col and the key"
[ ! -e r.yaml ]; ok $? "no report for an unusable configuration"
expect_rc "bad config is 2 even with --bisect" 2 "$MSR" check --bisect --config bad.yaml -o r.yaml "$LV"

expect_rc "missing trace" 2 "$MSR" check -o miss.yaml nonexistent.trace
[ "$(yget miss.yaml summary.complete)" = false ]
ok $? "missing trace still gets a report with complete: false"
grep -q "nonexistent.trace" stderr.txt; ok $? "the error names the trace"
expect_rc "--bisect turns unusable input into 125" 125 "$MSR" check --bisect -o m2.yaml nonexistent.trace

expect_rc "load-value scenario" 1 "$MSR" check "$LV" --steps "$LVS" -o lv.yaml --no-tso
grep -Eq '^msync-replay: 1 violation \(load-value\) on strand 0 at cycle [0-9]+, event [0-9]+; report: lv.yaml$' stderr.txt
ok $? "first summary line names kind, strand, cycle, event and report"
[ "$(wc -l <stderr.txt)" -le 5 ]; ok $? "at most five summary lines"
expect_rc "--no-huge-pages" 1 "$MSR" check --no-huge-pages "$LV" --steps "$LVS" -o nh.yaml --no-tso
diff <(grep -v -e elapsed_seconds -e events_per_second lv.yaml) \
	<(grep -v -e elapsed_seconds -e events_per_second nh.yaml) >/dev/null &&
	! grep -q "huge" stderr.txt
ok $? "--no-huge-pages: the same report, no warning"
expect_rc "--quiet" 1 "$MSR" check -q "$LV" --steps "$LVS" -o q.yaml
[ ! -s stderr.txt ]; ok $? "--quiet prints nothing when the input is usable"
printf 'garbage' >garbage.trace
expect_rc "--quiet, unusable input" 2 "$MSR" check -q garbage.trace -o g.yaml
[ "$(wc -l <stderr.txt)" = 1 ] && grep -q "^msync-replay: garbage.trace offset=0: unknown message code=0x67$" stderr.txt
ok $? "--quiet prints the error line only"

expect_rc "--strand hides other strands" 0 "$MSR" check "$LV" --steps "$LVS" -o s.yaml --strand 1-3
[ "$(yget s.yaml summary.filtered_out)" = 1 ] && [ "$(yget s.yaml summary.violations)" = 0 ]
ok $? "hidden violations are counted as filtered_out"
[ "$(yget s.yaml config.filters.strands)" = 1-3 ]; ok $? "the filter is echoed in config"
expect_rc "--strand shows the own strand" 1 "$MSR" check "$LV" --steps "$LVS" -o s.yaml --strand 0,5
expect_rc "--cycles outside" 0 "$MSR" check "$LV" --steps "$LVS" -o c.yaml --cycles 100:
expect_rc "--pa inside" 1 "$MSR" check "$LV" --steps "$LVS" -o p.yaml --pa 0xd004:0xd004
expect_rc "--pa outside" 0 "$MSR" check "$LV" --steps "$LVS" -o p.yaml --pa :0xcfff

expect_rc "report to stdout" 1 "$MSR" check "$LV" --steps "$LVS"
[ "$(yget stdout.txt violations.0.kind)" = load-value ]; ok $? "stdout report is YAML"
grep -q "report: stdout" stderr.txt; ok $? "summary says the report went to stdout"

expect_rc "trace on stdin" 1 sh -c '"$0" check - --steps "$1" -o si.yaml <"$2"' "$MSR" "$LVS" "$LV"
[ "$(yget si.yaml inputs.0.path)" = - ]; ok $? "stdin is listed as '-'"
expect_rc "step log on stdin" 1 sh -c '"$0" check "$2" --steps - -o si.yaml <"$1"' "$MSR" "$LVS" "$LV"
expect_rc "not both on stdin" 2 "$MSR" check - --steps -

# Two wrong loads: the cap, fail-fast and fingerprints
{ cat "$LV"; grep -v '^#' "$LV" | sed 's/d000/d008/g; s/ts=1\b/ts=2/'; } >two.trace
{ cat "$LVS"; echo "0 0x104 ld pa=0xd008 size=8 ld=3333333333333333"; } >two.steps
expect_rc "two violations" 1 "$MSR" check two.trace --steps two.steps -o t.yaml
[ "$(yget t.yaml summary.violations)" = 2 ] && [ "$(yget t.yaml violations.1.id)" = V2 ]
ok $? "both violations listed, numbered V1, V2"
expect_rc "--max-violations 1" 1 "$MSR" check two.trace --steps two.steps -o m.yaml --max-violations 1
[ "$(yget m.yaml summary.violations)" = 2 ] && [ "$(yget m.yaml summary.listed)" = 1 ]
ok $? "--max-violations lists one and counts both"
expect_rc "--fail-fast" 1 "$MSR" check two.trace --steps two.steps -o f.yaml --fail-fast
[ "$(yget f.yaml summary.violations)" = 1 ] && [ "$(yget f.yaml summary.stopped)" = fail-fast ] &&
	[ "$(yget f.yaml summary.complete)" = false ]
ok $? "--fail-fast stops at the first violation and says so"
[ "$(yget t.yaml violations.0.fingerprint)" = "$(yget m.yaml violations.0.fingerprint)" ] &&
	[ "$(yget t.yaml violations.0.fingerprint)" != "$(yget t.yaml violations.1.fingerprint)" ]
ok $? "fingerprints are stable across runs and distinct per violation"

printf 'report:\n  context: 2\n' >ctx.yaml
expect_rc "context from the config" 1 "$MSR" check two.trace --steps two.steps -o x.yaml --config ctx.yaml
[ "$(yget x.yaml config.context)" = 2 ] &&
	python3 -c 'import sys,yaml; d=yaml.safe_load(open("x.yaml")); sys.exit(0 if all(0 < len(v["context"]) <= 2 for v in d["violations"]) else 1)'
ok $? "context holds at most report.context events"
expect_rc "--context overrides the config" 1 "$MSR" check two.trace --steps two.steps -o y.yaml --config ctx.yaml --context 0
[ "$(yget y.yaml config.context)" = 0 ]; ok $? "--context 0 takes precedence"

zstd -q -c two.trace >two.trace.zst && zstd -q -c two.steps >two.steps.zst
expect_rc "zstd trace and step log" 1 "$MSR" check two.trace.zst --steps two.steps.zst -o z.yaml
[ "$(yget z.yaml violations.1.observed)" = 0x3333333333333333 ]; ok $? "same findings from compressed inputs"

mkdir out && echo old >out/r.yaml
expect_rc "report replaces an existing file" 1 "$MSR" check "$LV" --steps "$LVS" -o out/r.yaml
[ "$(ls -A out)" = r.yaml ] && [ "$(yget out/r.yaml tool.name)" = msync-replay ]
ok $? "written through a temporary file renamed into place"
expect_rc "unwritable report directory" 2 "$MSR" check "$LV" --steps "$LVS" -o /nonexistent/r.yaml
grep -q "^msync-replay: /nonexistent/r.yaml: cannot create a temporary file" stderr.txt &&
	grep -q "report: not written" stderr.txt
ok $? "says why and that no report was written"

grep -q "^msync-replay: 1 violation hidden by --strand/--cycles/--pa$" <(
	"$MSR" check "$LV" --steps "$LVS" -o h.yaml --strand 1 2>&1 >/dev/null)
ok $? "the summary says how many violations the filters hid"

# Initial memory from an image (--image, or memory: in the config, relative
# to the config file) instead of learning it from the first observation
grep -v MEM_SLAM "$LV" >noslam.trace
expect_rc "without an image memory is learned" 0 "$MSR" check noslam.trace --steps "$LVS" -o n.yaml
[ "$(yget n.yaml summary.learned_bytes)" = 8 ]; ok $? "the first observation is learned"
printf '@d000\n1111111111111111\n' >mem.img
expect_rc "--image" 1 "$MSR" check noslam.trace --steps "$LVS" -o i.yaml --image mem.img
[ "$(yget i.yaml violations.0.expected)" = 0x1111111111111111 ]; ok $? "the image value is expected"
mkdir cfgdir && cp mem.img cfgdir/ && printf 'memory:\n  - mem.img\n' >cfgdir/c.yaml
expect_rc "memory: in the config" 1 "$MSR" check noslam.trace --steps "$LVS" -o j.yaml --config cfgdir/c.yaml
[ "$(yget j.yaml inputs.3.role)" = image ] && [ "$(yget j.yaml config.memory.0)" = cfgdir/mem.img ]
ok $? "config images are resolved next to the config and listed as inputs"
expect_rc "missing image" 2 "$MSR" check noslam.trace -o k.yaml --image nope.img
[ "$(yget k.yaml summary.complete)" = false ]; ok $? "a missing image still gets a report"

# A step log whose lines for strand 0 come only after too many lines of other
# strands: the lookahead limit stops the run with a clear error
{ echo "# msync-steps 1"; for i in 1 2 3 4 5; do echo "1 0x0 nop"; done; echo "0 0x0 nop"; } >far.steps
printf 'limits:\n  step_lookahead: 4\n' >look.yaml
printf '# msync-text 1\nSSTEP tnum=0\n' >one.trace
expect_rc "step lookahead exceeded" 2 "$MSR" check one.trace --steps far.steps --config look.yaml -o l.yaml
grep -q "far.steps:6: step-log lookahead limit exceeded" stderr.txt; ok $? "names the step log line and the limit"
[ "$(yget l.yaml summary.complete)" = false ]; ok $? "and still writes a report"
expect_rc "within the default lookahead" 1 "$MSR" check one.trace --steps far.steps -o l2.yaml --no-tso
[ "$(yget l2.yaml violations.0.kind)" = step-log-long ]; ok $? "the other strand's lines are left over"

printf '# msync-steps 1\n0 0x100 ld pa=0xd000 size=8 ld=11\n' >bad.steps
expect_rc "malformed step log" 2 "$MSR" check "$LV" --steps bad.steps -o b.yaml
grep -q "bad.steps:2:29: value length does not match size: ld= has 2 hex digits, expected 16 for size=8" stderr.txt
ok $? "step-log error names file:line:col and the field"
[ "$(yget b.yaml summary.complete)" = false ] && [ "$(yget b.yaml summary.events)" -ge 1 ]
ok $? "and the report covers the events replayed before it"

# A trace still arriving: one step written to the FIFO `live`, which stays
# open until hold_live_end, however long a busy machine takes to start the
# replay and deliver a signal to it.
mkfifo live
hold_live() {
	( printf '# msync-text 1\nSSTEP tnum=0\n'; exec sleep 60 ) >live &
	writer=$!
}
hold_live_end() {
	kill "$writer" 2>/dev/null
	wait "$writer" 2>/dev/null
}

# SIGINT while the trace is still arriving: a partial report, exit 2
hold_live
"$MSR" check live -o int.yaml 2>stderr.txt &
pid=$!
wait_catching "$pid"
kill -INT "$pid"
wait "$pid"
rc=$?
hold_live_end
[ "$rc" -eq 2 ] && [ "$(yget int.yaml summary.stopped)" = interrupted ] &&
	[ "$(yget int.yaml summary.complete)" = false ]
ok $? "SIGINT writes a partial report (stopped: interrupted) and exits 2"

# SIGTERM does the same as SIGINT
hold_live
"$MSR" check live -o term.yaml 2>stderr.txt &
pid=$!
wait_catching "$pid"
kill -TERM "$pid"
wait "$pid"
rc=$?
hold_live_end
[ "$rc" -eq 2 ] && [ "$(yget term.yaml summary.stopped)" = interrupted ] &&
	[ "$(yget term.yaml summary.complete)" = false ]
ok $? "SIGTERM writes a partial report (stopped: interrupted) and exits 2"

# SIGINT while a zstd trace is still arriving, with its decompression ahead
# in a helper thread that waits on the pipe: the replay's wait for the next
# block is interrupted as a read would be, and the report is written at once
# (the process itself ends when the pipe's writer writes or closes). The
# cut is past the first block, which the replay reads before the helper.
python3 - >slams.txt <<'PY'
import random
r = random.Random(7)
print("# msync-text 1")
for i in range(200000):
    print("MEM_SLAM pa=0x%010x data=0x%016x bmask=0xff ts=%d"
          % (0x100000 + 8 * r.randrange(1 << 16), r.getrandbits(64), i))
PY
"$MSR" encode slams.txt -o slams.zst --level 1 >/dev/null
size=$(stat -c %s slams.zst)
( head -c $((size * 3 / 4)) slams.zst; sleep 10 ) >live &
writer=$!
"$MSR" check live -o zint.yaml 2>stderr.txt &
pid=$!
wait_catching "$pid"
sleep 1
kill -INT "$pid"
for _ in $(seq 60); do [ -e zint.yaml ] && break; sleep 0.05; done
[ -e zint.yaml ] && [ "$(yget zint.yaml summary.stopped)" = interrupted ] &&
	[ "$(yget zint.yaml summary.events)" -gt 10000 ] && [ "$size" -gt 300000 ]
ok $? "SIGINT during a zstd stream decompressed ahead: report within 3 s"
kill "$writer" 2>/dev/null
wait "$pid"
rc=$?
[ "$rc" -eq 2 ]
ok $? "and exits 2 once the pipe closes"
wait "$writer" 2>/dev/null

# The memory limit: the guard looks every 16384 events. A limit of 1 MiB,
# below what any process holds, stops a replay at the first look whatever
# the memory layout; the trace touches a fresh 4 KiB page with every event
spray_trace 40000 spray.trace.zst
expect_rc "--max-memory 1 on a trace that grows past it" 2 \
	"$MSR" check spray.trace.zst --max-memory 1 -o spray.yaml
grep -q "spray.trace.zst: memory limit reached after 16384 events: [0-9]* MiB resident, the limit is 1 MiB (--max-memory or limits.max_memory)" stderr.txt
ok $? "the message says where it stopped, how much was resident and which limit"
[ "$(yget spray.yaml summary.complete)" = false ] &&
	[ "$(yget spray.yaml summary.stopped)" = memory-limit ] &&
	[ "$(yget spray.yaml summary.events)" = 16384 ] &&
	yget spray.yaml summary.error | grep -q "memory limit reached"
ok $? "partial report: complete false, stopped memory-limit, the error, 16384 events"
expect_rc "the same trace within --max-memory 4096" 0 \
	"$MSR" check spray.trace.zst --max-memory 4096 -o spray.yaml
[ "$(yget spray.yaml summary.events)" = 40000 ] &&
	[ "$(yget spray.yaml summary.complete)" = true ]
ok $? "replayed to its end"
expect_rc "and within the automatic limit" 0 "$MSR" check spray.trace.zst -o spray.yaml
expect_rc "--bisect: the memory limit is unusable input (125)" 125 \
	"$MSR" check spray.trace.zst --max-memory 1 --bisect -o spray.yaml
printf 'limits:\n  max_memory: 1\n' >mem1.yaml
expect_rc "limits.max_memory in the configuration" 2 \
	"$MSR" check spray.trace.zst -c mem1.yaml -o spray.yaml
grep -q "limit is 1 MiB" stderr.txt; ok $? "names the configured limit"
expect_rc "--max-memory overrides the configuration" 0 \
	"$MSR" check spray.trace.zst -c mem1.yaml --max-memory 4096 -o spray.yaml
expect_rc "--max-memory malformed" 2 "$MSR" check spray.trace.zst --max-memory 1G
grep -q -- "--max-memory=1G: expected MiB" stderr.txt; ok $? "says what it expects"
# --progress: at least one line once half a second has passed (the pause
# in the input makes sure), with the resident size the guard read
(awk 'BEGIN { print "# msync-text 1"; for (i = 0; i < 70000; i++) print "SSTEP tnum=0" }'
	sleep 1
	awk 'BEGIN { for (i = 0; i < 70000; i++) print "SSTEP tnum=1" }') |
	"$MSR" check --progress - -o progress.yaml 2>stderr.txt
tr '\r' '\n' <stderr.txt | grep -q "^msync-replay: 140000 events, [0-9.]* MB read, [0-9]* events/s, [0-9]* MiB$"
ok $? "--progress: events, MB read, events/s and MiB resident, the last line at the end"
expect_rc "slice under limits.max_memory" 2 \
	"$MSR" slice spray.trace.zst --config mem1.yaml --violation V1 -o spray-slice
grep -q "memory limit reached after 16384 events.*limit is 1 MiB (--max-memory or limits.max_memory)" stderr.txt
ok $? "slice stops with the same message"
expect_rc "slice --max-memory 1" 2 \
	"$MSR" slice spray.trace.zst --max-memory 1 --violation V1 -o spray-slice
grep -q "memory limit reached after 16384 events.*limit is 1 MiB" stderr.txt
ok $? "slice --max-memory: the same stop"
# within the limit the replay reaches the end, where slice finds no violation
expect_rc "slice --max-memory overrides the configuration" 2 \
	"$MSR" slice spray.trace.zst --config mem1.yaml --max-memory 4096 --violation V1 -o spray-slice
grep -q "no violation id=V1 in the trace (it shows 0)" stderr.txt
ok $? "and replays the whole trace"
expect_rc "slice --max-memory malformed" 2 \
	"$MSR" slice spray.trace.zst --max-memory lots --violation V1 -o spray-slice
grep -q -- "--max-memory=lots: expected MiB" stderr.txt; ok $? "says what it expects"

# kill -9 cannot be caught: the previous report stays whole, no half-written
# file takes its place
printf 'previous report\n' >kept.yaml
hold_live
"$MSR" check live -o kept.yaml 2>stderr.txt &
pid=$!
wait_catching "$pid"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
hold_live_end
[ "$(cat kept.yaml)" = "previous report" ]
ok $? "kill -9 leaves the previous report untouched"

finish
