#!/bin/bash
# msync-replay check for CI and bisecting, end to end (TAP): the --bisect
# exit codes on truncated and corrupt traces and unreadable step logs (125,
# and 2 without --bisect), and the --junit file, validated by xmllint and
# read back with python3's xml.etree.
. "$(dirname "$0")/trace-lib.sh"
ENG="$MSR_SOURCE_ROOT/testdata/engine"
LV="$ENG/v_load_value.trace"
LVS="$ENG/v_load_value.steps"

rc_of() { # command... -> prints the exit code; output in stdout.txt/stderr.txt
	"$@" >stdout.txt 2>stderr.txt
	echo $?
}

is_rc() { # description expected-rc actual-rc
	[ "$3" -eq "$2" ]
	ok $? "$1 (exit $3)"
	[ "$3" -eq "$2" ] || sed 's/^/#   /' stderr.txt
}

yget() { # file dotted.path -> value (python3 + PyYAML)
	python3 - "$1" "$2" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[int(k)] if isinstance(d, list) else d.get(k)
print("null" if d is None else (str(d).lower() if isinstance(d, bool) else d))
PY
}

# Inputs: the load-value scenario as raw binary and as zstd, and cut copies.
"$MSR" encode "$LV" -o lv.bin && "$MSR" encode "$LV" -o lv.trace.zst
ok $? "encode the scenario as raw binary and zstd"
head -c -3 lv.bin >cut.bin
head -c -4 lv.trace.zst >cut.trace.zst
{ head -c 20 lv.bin; printf '\377\377\377\377'; tail -c +21 lv.bin; } >corrupt.bin
zstd -q -c "$LVS" | head -c 20 >cut.steps.zst

# --- exit codes: 0 / 1 / 2 / 125 ----------------------------------------------
is_rc "--bisect, clean run" 0 "$(rc_of "$MSR" check --bisect -q "$ENG/clean_load_store.trace" --steps "$ENG/clean_load_store.steps" -o clean.yaml)"
is_rc "--bisect, violations" 1 "$(rc_of "$MSR" check --bisect -q lv.trace.zst --steps "$LVS" -o lv.yaml)"
is_rc "truncated zstd trace" 2 "$(rc_of "$MSR" check -q cut.trace.zst --steps "$LVS" -o t1.yaml)"
grep -q "cut.trace.zst: truncated zstd frame" stderr.txt; ok $? "truncated zstd trace: says so"
is_rc "truncated zstd trace, --bisect" 125 "$(rc_of "$MSR" check --bisect -q cut.trace.zst --steps "$LVS" -o t2.yaml)"
[ "$(yget t2.yaml summary.complete)" = false ]; ok $? "--bisect still writes the partial report"
[ "$(yget t2.yaml summary.violations)" = 1 ]; ok $? "the partial report keeps the violation found before the cut"
is_rc "truncated binary trace" 2 "$(rc_of "$MSR" check -q cut.bin --steps "$LVS" -o t3.yaml)"
grep -q "cut.bin offset=[0-9]*: truncated message code=0x" stderr.txt; ok $? "truncated binary trace: names offset and code"
is_rc "truncated binary trace, --bisect" 125 "$(rc_of "$MSR" check --bisect -q cut.bin --steps "$LVS" -o t4.yaml)"
is_rc "corrupt binary trace" 2 "$(rc_of "$MSR" check -q corrupt.bin --steps "$LVS" -o t5.yaml)"
is_rc "corrupt binary trace, --bisect" 125 "$(rc_of "$MSR" check --bisect -q corrupt.bin --steps "$LVS" -o t6.yaml)"
is_rc "missing step log" 2 "$(rc_of "$MSR" check -q lv.bin --steps nonexistent.steps -o t7.yaml)"
is_rc "missing step log, --bisect" 125 "$(rc_of "$MSR" check --bisect -q lv.bin --steps nonexistent.steps -o t8.yaml)"
is_rc "truncated zstd step log" 2 "$(rc_of "$MSR" check -q lv.bin --steps cut.steps.zst -o t9.yaml)"
is_rc "truncated zstd step log, --bisect" 125 "$(rc_of "$MSR" check --bisect -q lv.bin --steps cut.steps.zst -o t10.yaml)"
is_rc "usage error stays 2 with --bisect" 2 "$(rc_of "$MSR" check --bisect --frobnicate lv.bin)"

# --- --junit --------------------------------------------------------------------
junit() { # file -> one line: suite name|tests|failures|errors|skipped|failing kinds|replay outcome
	python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
assert len(suites) == 1, len(suites)
s = suites[0]
cases = s.findall("testcase")
def n(tag): return sum(1 for c in cases if c.find(tag) is not None)
for el in (root, s):  # the counts agree with the elements
    assert int(el.get("tests")) == len(cases)
    assert int(el.get("failures")) == n("failure")
    assert int(el.get("errors")) == n("error")
    assert int(el.get("skipped")) == n("skipped")
for c in cases:
    assert c.get("classname") and c.get("name") and c.get("time") is not None
    assert len(list(c)) <= 1, c.get("name")
names = [c.get("name") for c in cases]
assert len(names) == len(set(names)), "duplicate testcase names"
replay = [c for c in cases if c.get("name") == "replay"][0]
outcome = (list(replay) or [None])[0]
print("|".join([s.get("name"), s.get("tests"), s.get("failures"), s.get("errors"),
    s.get("skipped"), ",".join(c.get("name") for c in cases if c.find("failure") is not None),
    "pass" if outcome is None else outcome.tag]))
PY
}

"$MSR" check --help | grep -q -- "--junit FILE"; ok $? "--help lists --junit"
is_rc "--junit with violations" 1 "$(rc_of "$MSR" check -q "$LV" --steps "$LVS" -o j1.yaml --junit j1.xml)"
xmllint --noout j1.xml; ok $? "xmllint accepts the JUnit file"
[ "$(junit j1.xml)" = "$LV|28|1|0|0|load-value|pass" ]; ok $? "one suite, a testcase per kind, load-value failing"
FP=$(yget j1.yaml violations.0.fingerprint)
python3 - j1.xml "$FP" <<'PY'
import sys, xml.etree.ElementTree as ET
c = [c for c in ET.parse(sys.argv[1]).getroot().iter("testcase") if c.get("name") == "load-value"][0]
f = c.find("failure")
assert f.get("type") == "load-value" and f.get("message") == "1 violation of kind load-value"
assert f.text.startswith("V1 fingerprint=%s strand=0 iseq=1 " % sys.argv[2]), f.text
PY
ok $? "the failure lists id, fingerprint and message of the report's violation"

is_rc "--junit, clean run" 0 "$(rc_of "$MSR" check -q "$ENG/clean_load_store.trace" --steps "$ENG/clean_load_store.steps" -o j2.yaml --junit j2.xml)"
[ "$(junit j2.xml | cut -d'|' -f2-)" = "28|0|0|0||pass" ]; ok $? "clean run: every testcase passes"
is_rc "--junit, no step log, no TSO" 0 "$(rc_of "$MSR" check -q "$LV" --no-tso -o j3.yaml --junit j3.xml)"
python3 - j3.xml <<'PY'
import sys, xml.etree.ElementTree as ET
names = [c.get("name") for c in ET.parse(sys.argv[1]).getroot().iter("testcase")]
assert not [n for n in names if n.startswith("tso-")], names
assert "load-value" not in names and "step-log-short" not in names, names
assert "unmatched-ld-data" in names and "mem-check" in names, names
PY
ok $? "only kinds the run could report get a testcase"

is_rc "--junit, truncated trace" 2 "$(rc_of "$MSR" check -q cut.trace.zst --steps "$LVS" -o j4.yaml --junit j4.xml)"
[ "$(junit j4.xml | cut -d'|' -f3,4,6,7)" = "1|1|load-value|error" ]; ok $? "truncated trace: replay errors, the violation found still fails"
python3 - j4.xml <<'PY'
import sys, xml.etree.ElementTree as ET
e = ET.parse(sys.argv[1]).getroot().find("testsuite/testcase/error")
assert e.get("type") == "unusable-input" and "truncated zstd frame" in e.get("message"), e.attrib
PY
ok $? "the error names the reason"
is_rc "--junit, truncated trace, --bisect" 125 "$(rc_of "$MSR" check --bisect -q cut.trace.zst --steps "$LVS" -o j5.yaml --junit j5.xml)"
[ -s j5.xml ]; ok $? "--bisect still writes the JUnit file"
is_rc "--junit, --fail-fast" 1 "$(rc_of "$MSR" check -q "$LV" --steps "$LVS" --fail-fast -o j6.yaml --junit j6.xml)"
xmllint --noout j6.xml; ok $? "--fail-fast: valid XML"

is_rc "--junit - with -o FILE" 1 "$(rc_of "$MSR" check -q "$LV" --steps "$LVS" -o j7.yaml --junit -)"
xmllint --noout stdout.txt; ok $? "--junit -: the XML on standard output is valid"
is_rc "--junit - without -o is a usage error" 2 "$(rc_of "$MSR" check -q "$LV" --junit -)"
grep -q -- "--junit - needs -o REPORT" stderr.txt; ok $? "says why"
is_rc "--junit into a missing directory" 2 "$(rc_of "$MSR" check -q "$LV" --steps "$LVS" -o j8.yaml --junit nodir/j.xml)"
grep -q "nodir/j.xml" stderr.txt && [ -s j8.yaml ]; ok $? "names the file; the YAML report is still written"

is_rc "--junit /dev/null" 1 "$(rc_of "$MSR" check -q "$LV" --steps "$LVS" -o j10.yaml --junit /dev/null)"
[ -c /dev/null ]; ok $? "/dev/null is still a device"
ln -s j11.real j11.xml && : >j11.real
is_rc "--junit through a symbolic link" 1 "$(rc_of "$MSR" check -q "$LV" --steps "$LVS" -o j11.yaml --junit j11.xml)"
[ -L j11.xml ] && xmllint --noout j11.real; ok $? "the link stays, its target gets the XML"
cp "$LV" 'odd &<"q">'"'"'.trace'
is_rc "--junit, a trace name that needs escaping" 1 "$(rc_of "$MSR" check -q 'odd &<"q">'"'"'.trace' --steps "$LVS" -o j9.yaml --junit j9.xml)"
xmllint --noout j9.xml; ok $? "escaped names: xmllint accepts the file"
[ "$(junit j9.xml | cut -d'|' -f1)" = 'odd &<"q">'"'"'.trace' ]; ok $? "escaped names read back unchanged"

# --- bytes that are not UTF-8 ---------------------------------------------------
# YAML and XML carry only UTF-8: a file name, or an error that quotes the
# input, with other bytes must still give a readable report (\xNN).
{ head -n 4 "$LV"; printf 'LD_FILL \377\377\376 tnum=0\n'; } >badbytes.trace
is_rc "a text trace with bytes that are not UTF-8" 2 "$(rc_of "$MSR" check -q badbytes.trace --steps "$LVS" -o u1.yaml --junit u1.xml)"
[ "$(yget u1.yaml summary.complete)" = false ]; ok $? "the report is written, complete: false"
yget u1.yaml summary.error | grep -qF "got '\xff\xff\xfe'"; ok $? "its error shows the bytes as \\xNN"
grep -qF "got '\xff\xff\xfe'" stderr.txt; ok $? "so does the message on standard error"
{ head -n 4 "$LV"; printf 'LD_FILL \033[2J tnum=0\n'; } >escape.trace
is_rc "a text trace with a terminal escape sequence" 2 "$(rc_of "$MSR" check -q escape.trace --steps "$LVS" -o u4.yaml)"
grep -qF "got '\x1b[2J'" stderr.txt && ! grep -q "$(printf '\033')" stderr.txt; ok $? "standard error shows it as \\x1b, never the byte"
xmllint --noout u1.xml; ok $? "the JUnit file is valid XML"
cp "$ENG/clean_load_store.trace" "$(printf 'caf\351.trace')"
is_rc "a trace whose name is not UTF-8" 0 "$(rc_of "$MSR" check -q "$(printf 'caf\351.trace')" --steps "$ENG/clean_load_store.steps" -o u2.yaml)"
[ "$(yget u2.yaml inputs.0.path)" = 'caf\xe9.trace' ]; ok $? "the report names it with \\xNN"
is_rc "tracediff --format yaml of traces with such names" 0 "$(rc_of "$MSR" tracediff --format yaml "$(printf 'caf\351.trace')" "$ENG/clean_load_store.trace" -o u3.yaml)"
[ "$(yget u3.yaml a)" = 'caf\xe9.trace' ]; ok $? "tracediff names it with \\xNN"

finish
