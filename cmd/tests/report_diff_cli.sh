#!/bin/bash
# msync-replay diff end to end (TAP): crafted report pairs (new, fixed,
# reordered, repeated fingerprints, counts, partial and capped reports),
# the YAML output read back with PyYAML, unreadable reports, and the diff
# of real reports written by msync-replay check.
. "$(dirname "$0")/trace-lib.sh"
REP="$MSR_SOURCE_ROOT/testdata/report"
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

first_line() { # description expected-first-line-of-stdout
	[ "$(head -n 1 stdout.txt)" = "$2" ]
	ok $? "$1"
	[ "$(head -n 1 stdout.txt)" = "$2" ] || sed 's/^/#   /' stdout.txt
}

rows() { # the table rows as "status count kind id" (id column as printed)
	awk 'p && NF { print $1, $2, $3, $8 } /^STATUS/ { p = 1 }' stdout.txt
}

ypy() { # python expression over d = the YAML on stdout.txt
	python3 - "$1" <<'PY'
import sys, yaml
d = yaml.safe_load(open("stdout.txt"))
print(eval(sys.argv[1]))
PY
}

# --- command line -----------------------------------------------------------
expect_rc "--help" 0 "$MSR" diff --help
grep -q "matched by fingerprint" stdout.txt; ok $? "--help says how violations are matched"
"$MSR" --help | grep -q "^  diff "; ok $? "diff is listed in the command table"
expect_rc "no reports is a usage error" 2 "$MSR" diff
grep -q "expected two reports" stderr.txt; ok $? "names what is missing"
expect_rc "one report is a usage error" 2 "$MSR" diff "$REP/base.yaml"
expect_rc "three reports is a usage error" 2 "$MSR" diff "$REP/base.yaml" "$REP/base.yaml" x
expect_rc "unknown format" 2 "$MSR" diff --format xml "$REP/base.yaml" "$REP/base.yaml"
expect_rc "both on stdin" 2 "$MSR" diff - - </dev/null

# --- crafted pairs -------------------------------------------------------------
expect_rc "same report: nothing new" 0 "$MSR" diff "$REP/base.yaml" "$REP/base.yaml"
first_line "same report: all unchanged" "msync-replay diff: 0 new, 0 fixed, 3 unchanged"

expect_rc "an added violation fails" 1 "$MSR" diff "$REP/base.yaml" "$REP/new_added.yaml"
first_line "added: summary" "msync-replay diff: 1 new, 0 fixed, 3 unchanged"
[ "$(rows | head -n 1)" = "new 1 store-data V4" ]; ok $? "added: the new row names kind and id"
grep -q "^new .* 1b902c9420494dd2  V4  strand 2 stored 0x33 to 0x2008" stdout.txt
ok $? "added: the row has fingerprint, id and message"

expect_rc "a fixed violation passes" 0 "$MSR" diff "$REP/base.yaml" "$REP/new_fixed.yaml"
first_line "fixed: summary" "msync-replay diff: 0 new, 1 fixed, 2 unchanged"
[ "$(rows | head -n 1)" = "fixed 1 tso-coherence V2" ]; ok $? "fixed: the row names the base id"

expect_rc "reordered violations pass" 0 "$MSR" diff "$REP/base.yaml" "$REP/new_reordered.yaml"
first_line "reordered: all unchanged" "msync-replay diff: 0 new, 0 fixed, 3 unchanged"
grep -q "^unchanged .*  V3 (was V1)  " stdout.txt; ok $? "reordered: new and old ids shown"

expect_rc "mixed changes fail" 1 "$MSR" diff "$REP/base.yaml" "$REP/new_mixed.yaml"
first_line "mixed: summary" "msync-replay diff: 2 new, 1 fixed, 2 unchanged"
[ "$(rows | tr '\n' ';')" = "new 1 store-data V2;new 1 leftover V4;fixed 1 load-value V1;unchanged 1 tso-coherence V1;unchanged 1 mem-check V3;" ]
ok $? "mixed: new in NEW order, then fixed, then unchanged"

expect_rc "a repeated fingerprint one more time fails" 1 "$MSR" diff "$REP/repeat_base.yaml" "$REP/repeat_new.yaml"
first_line "repeated: 2 of 3 unchanged, 1 new" "msync-replay diff: 1 new, 0 fixed, 3 unchanged"
[ "$(rows | head -n 2 | tr '\n' ';')" = "new 1 load-value V3;unchanged 2 load-value V1,V2;" ]
ok $? "repeated: the third occurrence is the new one"
expect_rc "count: 3 counts as three occurrences" 1 "$MSR" diff "$REP/repeat_base.yaml" "$REP/repeat_count.yaml"
first_line "count: same result as three entries" "msync-replay diff: 1 new, 0 fixed, 3 unchanged"
expect_rc "count: 3 in BASE, 2 in NEW" 0 "$MSR" diff "$REP/repeat_count.yaml" "$REP/repeat_base.yaml"
first_line "base count: 1 fixed" "msync-replay diff: 0 new, 1 fixed, 3 unchanged"
[ "$(rows | head -n 2 | tr '\n' ';')" = "fixed 1 load-value V1;unchanged 2 load-value V1,V2;" ]
ok $? "base count: the counted entry is both fixed and unchanged"
expect_rc "a repeated fingerprint one time less passes" 0 "$MSR" diff "$REP/repeat_base.yaml" "$REP/repeat_fewer.yaml"
first_line "fewer: 1 fixed" "msync-replay diff: 0 new, 1 fixed, 2 unchanged"
[ "$(rows | head -n 1)" = "fixed 1 load-value V2" ]; ok $? "fewer: the last base occurrence is the fixed one"

expect_rc "empty baseline: everything is new" 1 "$MSR" diff "$REP/clean.yaml" "$REP/base.yaml"
expect_rc "empty new report: everything is fixed" 0 "$MSR" diff "$REP/base.yaml" "$REP/clean.yaml"
first_line "empty new: summary" "msync-replay diff: 0 new, 3 fixed, 0 unchanged"
expect_rc "many ids are shortened" 1 "$MSR" diff "$REP/clean.yaml" "$REP/repeat_six.yaml"
[ "$(rows)" = "new 6 load-value V1,V2,V3,V4,+2" ]; ok $? "six occurrences: four ids and +2"
expect_rc "two clean reports" 0 "$MSR" diff "$REP/clean.yaml" "$REP/clean.yaml"
[ "$(wc -l <stdout.txt)" -eq 3 ]; ok $? "two clean reports: summary only, no table"

expect_rc "partial report" 0 "$MSR" diff "$REP/base.yaml" "$REP/partial.yaml"
grep -q "warning: .*partial.yaml is a partial report (complete: false)" stderr.txt
ok $? "partial report: warned on stderr"
grep -q "partial.yaml (1 violation, incomplete)" stdout.txt; ok $? "partial report: marked in the header"
expect_rc "capped report" 0 "$MSR" diff "$REP/base.yaml" "$REP/capped.yaml"
grep -q "capped.yaml lists 2 of 5 violations (max_violations)" stderr.txt
ok $? "capped report: warned on stderr"

expect_rc "NEW on stdin" 1 "$MSR" diff "$REP/base.yaml" - <"$REP/new_added.yaml"
first_line "stdin: same result" "msync-replay diff: 1 new, 0 fixed, 3 unchanged"
expect_rc "BASE on stdin" 0 "$MSR" diff - "$REP/new_fixed.yaml" <"$REP/base.yaml"
first_line "stdin base: same result" "msync-replay diff: 0 new, 1 fixed, 2 unchanged"
expect_rc "--quiet keeps the exit code" 1 "$MSR" diff -q "$REP/base.yaml" "$REP/new_added.yaml"
[ ! -s stdout.txt ]; ok $? "--quiet prints nothing"

# --- YAML output ---------------------------------------------------------------
expect_rc "--format yaml" 1 "$MSR" diff --format yaml "$REP/base.yaml" "$REP/new_mixed.yaml"
[ "$(ypy 'd["summary"]')" = "{'new': 2, 'fixed': 1, 'unchanged': 2}" ]; ok $? "yaml: summary counts"
[ "$(ypy '[(v["status"], v["kind"], v.get("new_ids"), v.get("base_ids")) for v in d["violations"]]')" = \
  "[('new', 'store-data', ['V2'], None), ('new', 'leftover', ['V4'], None), ('fixed', 'load-value', None, ['V1']), ('unchanged', 'tso-coherence', ['V1'], ['V2']), ('unchanged', 'mem-check', ['V3'], ['V3'])]" ]
ok $? "yaml: rows with status, kind and ids on both sides"
[ "$(ypy 'd["violations"][2]["pa"] + " " + d["violations"][2]["fingerprint"]')" = "0x0000102000 a4ebb37343094482" ]
ok $? "yaml: pa and fingerprint stay strings"
[ "$(ypy 'd["violations"][3]["message"]')" = 'strand 8 read 0xe400 from an older store after a newer one: "co" order broken & reported' ]
ok $? "yaml: messages round-trip"
[ "$(ypy '(d["base"]["path"].endswith("base.yaml"), d["new"]["complete"], d["new"]["violations"])')" = "(True, True, 4)" ]
ok $? "yaml: both inputs described"
grep -q '^  message: "strand 13 (core 1, thread 5) loaded 0x2222222222222222 from 0x102000 at cycle 812345, but the ISS saw 0x1111111111111111"$' stdout.txt
ok $? "yaml: long lines are not folded"
expect_rc "--format yaml, repeated" 1 "$MSR" diff --format yaml "$REP/repeat_base.yaml" "$REP/repeat_new.yaml"
[ "$(ypy '[(v["status"], v["count"], v.get("new_ids")) for v in d["violations"]][:2]')" = "[('new', 1, ['V3']), ('unchanged', 2, ['V1', 'V2'])]" ]
ok $? "yaml: repeated fingerprints counted"

# --- unreadable reports -----------------------------------------------------------
expect_rc "missing report" 2 "$MSR" diff "$REP/base.yaml" nonexistent.yaml
[ "$(cat stderr.txt)" = "msync-replay: nonexistent.yaml: cannot open the report: No such file or directory" ]
ok $? "missing report: names the file"
expect_rc "not a report" 2 "$MSR" diff "$REP/not_a_report.yaml" "$REP/base.yaml"
grep -q "not_a_report.yaml:1:1: no 'violations' list: not a msync-replay report" stderr.txt
ok $? "not a report: says so at 1:1"
expect_rc "bad fingerprint" 2 "$MSR" diff "$REP/base.yaml" "$REP/bad_fingerprint.yaml"
grep -q "bad_fingerprint.yaml:9:16: violations\[1\].fingerprint='not-hex': expected 16 hex digits" stderr.txt
ok $? "bad fingerprint: file:line:col and the field"
expect_rc "broken YAML" 2 "$MSR" diff "$REP/broken.yaml" "$REP/base.yaml"
grep -q "broken.yaml:4:1: not valid YAML: found unexpected end of stream" stderr.txt
ok $? "broken YAML: file:line:col and the parser's problem"
expect_rc "a trace is not a report" 2 "$MSR" diff "$ENG/v_load_value.trace" "$REP/base.yaml"

# --- real reports of msync-replay check -------------------------------------------
"$MSR" check -q "$ENG/clean_load_store.trace" --steps "$ENG/clean_load_store.steps" -o clean.yaml
ok $? "check: clean scenario"
"$MSR" check -q "$ENG/v_load_value.trace" --steps "$ENG/v_load_value.steps" -o lv1.yaml
[ $? -eq 1 ]; ok $? "check: load-value scenario"
"$MSR" check -q "$ENG/v_load_value.trace" --steps "$ENG/v_load_value.steps" -o lv2.yaml --context 3
[ $? -eq 1 ]; ok $? "check: load-value scenario again, other context length"
expect_rc "real: clean baseline, a new load-value" 1 "$MSR" diff clean.yaml lv1.yaml
first_line "real: 1 new" "msync-replay diff: 1 new, 0 fixed, 0 unchanged"
FP=$(python3 -c 'import yaml,sys; print(yaml.safe_load(open("lv1.yaml"))["violations"][0]["fingerprint"])')
grep -q "^new .*load-value .* $FP  V1  " stdout.txt; ok $? "real: the row carries the report's fingerprint"
expect_rc "real: same violation in two runs" 0 "$MSR" diff lv1.yaml lv2.yaml
first_line "real: unchanged" "msync-replay diff: 0 new, 0 fixed, 1 unchanged"
expect_rc "real: fixed by the new build" 0 "$MSR" diff lv1.yaml clean.yaml
first_line "real: 1 fixed" "msync-replay diff: 0 new, 1 fixed, 0 unchanged"
"$MSR" check -q "$ENG/tso_coherence.trace" --steps "$ENG/tso_coherence.steps" -o tso.yaml
[ $? -eq 1 ]; ok $? "check: TSO scenario"
expect_rc "real: different violations" 1 "$MSR" diff lv1.yaml tso.yaml
first_line "real: one new, one fixed" "msync-replay diff: 1 new, 1 fixed, 0 unchanged"

finish
