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

finish
