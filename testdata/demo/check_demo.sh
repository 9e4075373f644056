#!/bin/bash
# The README's demo: check must exit 1 and report exactly the fault that
# expect.yaml names (kind among `accept`, strand, iseq, pa), nothing else;
# decompressing on the replay's thread (--single-thread) reports the same,
# and so does the heap on huge pages the README suggests for VMs.
set -u
bin=$1; dir=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" check "$dir/nas.trace.zst" --steps "$dir/steps.log.zst" -o "$out/r.yaml" -q
rc=$?
if [ $rc -ne 1 ]; then echo "check exited $rc, expected 1"; exit 1; fi
python3 - "$dir/expect.yaml" "$out/r.yaml" <<'PY'
import sys, yaml
exp = yaml.safe_load(open(sys.argv[1]))["faults"]
rep = yaml.safe_load(open(sys.argv[2]))["violations"]
assert len(rep) == len(exp) == 1, f"{len(rep)} violations reported, {len(exp)} expected"
e, v = exp[0], rep[0]
assert v["kind"] in e["accept"], f"kind {v['kind']} not in {e['accept']}"
for k in ("strand", "iseq"):
    assert v[k] == e[k], f"{k}: reported {v[k]}, expected {e[k]}"
assert int(v["pa"], 16) == int(e["pa"], 16), f"pa {v['pa']} != {e['pa']}"
assert v.get("proof"), "no proof cycle"
print("demo: reported", v["kind"], "strand", v["strand"], "iseq", v["iseq"])
PY
[ $? -eq 0 ] || exit 1
untimed() { grep -Ev '^ *(elapsed_seconds|events_per_second):' "$1"; }
# same_report FILE WHAT VAR=VALUE|"" [OPTION...]: check again, with that
# variable set and those options, must exit 1 with the first run's report
same_report() {
	local f=$out/$1 what=$2 var=$3 rc
	shift 3
	env ${var:+"$var"} "$bin" check "$dir/nas.trace.zst" --steps "$dir/steps.log.zst" \
		-o "$f" -q "$@"
	rc=$?
	if [ $rc -ne 1 ]; then echo "check $what exited $rc, expected 1"; exit 1; fi
	if ! diff <(untimed "$out/r.yaml") <(untimed "$f") >"$out/d.txt"; then
		echo "check $what reported otherwise:"; cat "$out/d.txt"; exit 1
	fi
	echo "demo: the same report $what"
}
same_report s.yaml "with --single-thread" "" --single-thread
same_report h.yaml "with the heap on huge pages" GLIBC_TUNABLES=glibc.malloc.hugetlb=1
