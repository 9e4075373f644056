#!/bin/bash
# dump, encode, stat and tracediff decompress a zstd trace on a helper
# thread unless --single-thread: both ways give the same output, the same
# partial output and error on a damaged trace, and the same exit status.
# The trace spans many of the helper's blocks, so blocks are handed over
# while the decoder runs.
. "$(dirname "$0")/trace-lib.sh"
GEN="$MSR_BUILD_ROOT/testdata/gen/msync-gen"

"$GEN" -q -o a.zst --events 300000 --seed 5; ok $? "generate a 300K-event trace"
"$GEN" -q -o b.zst --events 300000 --seed 6; ok $? "generate a second trace"
zstd -q -d -c a.zst >a.bin
[ "$(wc -c <a.bin)" -gt 2000000 ]; ok $? "the trace is several helper blocks long"

# both_ways description command...: the same stdout, stderr and status
# with and without --single-thread (its options come after the command)
both_ways() {
	local desc=$1
	shift
	"$MSR" "$@" >o1 2>e1; rc1=$?
	"$MSR" "$@" --single-thread >o2 2>e2; rc2=$?
	if [ $rc1 -eq $rc2 ] && cmp -s o1 o2 && cmp -s e1 e2; then
		ok 0 "$desc (exit $rc1)"
	else
		ok 1 "$desc: exit $rc1/$rc2"
		diff o1 o2 | head -5 | sed 's/^/# /'
		diff e1 e2 | head -5 | sed 's/^/# /'
	fi
}

untimed() { grep -v -e '^elapsed_seconds:' -e '^decode_mb_per_s:' -e '^events_per_s:' "$1"; }

"$MSR" stat a.zst >s1; r1=$?
"$MSR" stat --single-thread a.zst >s2; r2=$?
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && cmp -s <(untimed s1) <(untimed s2)
ok $? "stat counts the same with and without the helper"
grep -q '^events: [1-9]' s1; ok $? "stat counted the events"

both_ways "dump" dump a.zst
"$MSR" dump a.zst >whole.dump
both_ways "dump --index --from --count stops early" dump --index --from 1000 --count 50000 a.zst
"$MSR" dump --tnum 9 - <a.zst >t1; r1=$?
"$MSR" dump --tnum 9 --single-thread - <a.zst >t2; r2=$?
"$MSR" dump --tnum 9 a.zst >t3
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ -s t1 ] && cmp -s t1 t2 && cmp -s t1 t3
ok $? "dump --tnum of standard input, the same both ways and as of the file"

"$MSR" encode a.zst -o e1.bin; r1=$?
"$MSR" encode --single-thread a.zst -o e2.bin; r2=$?
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && cmp -s e1.bin a.bin && cmp -s e2.bin a.bin
ok $? "encode of the zstd trace writes its decompressed bytes both ways"
"$MSR" encode whole.dump -o w.bin
cmp -s w.bin a.bin; ok $? "dump with the helper reads back to the same bytes"

both_ways "tracediff of a trace with itself" tracediff a.zst a.zst
[ "$(cat o1 | wc -l)" -gt 0 ] && grep -q equal o1; ok $? "tracediff reports the streams equal"
both_ways "tracediff of two different traces" tracediff --format yaml a.zst b.zst
[ "$rc1" -eq 1 ]; ok $? "tracediff exits 1 when they differ"

# damaged inputs: cut in the middle, and one byte flipped in the middle
size=$(wc -c <a.zst)
head -c $((size / 2)) a.zst >cut.zst
"$MSR" stat cut.zst >s1 2>e1; r1=$?
"$MSR" stat --single-thread cut.zst >s2 2>e2; r2=$?
[ $r1 -eq 2 ] && [ $r2 -eq 2 ] && cmp -s <(untimed s1) <(untimed s2) && cmp -s e1 e2
ok $? "stat of a truncated trace: the same counts and error, exit 2"
both_ways "dump of a truncated trace" dump cut.zst
[ "$rc1" -eq 2 ] && [ -s o1 ] && grep -q "cut.zst" e1; ok $? "the truncated trace: partial dump, error naming the file, exit 2"
cmp -s o1 <(head -c "$(wc -c <o1)" whole.dump); ok $? "the partial dump is a prefix of the whole dump"
cp a.zst flip.zst
printf '\x55' | dd of=flip.zst bs=1 seek=$((size / 3)) conv=notrunc status=none
both_ways "dump of a trace with a corrupt byte" dump flip.zst
[ "$rc1" -eq 2 ]; ok $? "the corrupt trace exits 2"
both_ways "encode of a truncated trace" encode cut.zst -o -

finish
