#!/bin/bash
# dump filters and --index, stat output, --help of dump/encode/stat.
. "$(dirname "$0")/trace-lib.sh"

cp "$DATA"/all-codes.* .
"$MSR" encode all-codes.txt -o a.bin

"$MSR" dump --tnum 9 a.bin >o; same "dump --tnum 9" all-codes.tnum9.dump o
"$MSR" dump --pa 0xffffffffc0/0xffffffffc0 all-codes.hex >o
same "dump --pa ADDR/MASK" all-codes.pa.dump o
"$MSR" dump --index --from 55 --count 6 a.bin >o
same "dump --index --from --count (binary offsets)" all-codes.index-bin.dump o
"$MSR" dump --index --from 55 --count 6 all-codes.hex >o
same "dump --index (hex: offsets in the hex text)" all-codes.index-hex.dump o
"$MSR" dump --index --from 55 --count 6 all-codes.txt >o
same "dump --index (text: offsets of line starts)" all-codes.index-text.dump o
"$MSR" dump --pa 0x40 a.bin | grep -c '^[A-Z]' >o
[ "$(cat o)" = 2 ]; ok $? "dump --pa without mask matches the exact address"
"$MSR" dump --tnum 9 --pa 0xffffffffff --from 20 --count 10 a.bin | grep -v '^#' >o
[ "$(wc -l <o)" = 3 ]; ok $? "filters combine"
"$MSR" dump --from 71 a.bin | tail -n 1 >o
[ "$(cat o)" = "MSG       code=0x01  # QUIT" ]; ok $? "dump --from the last event"
"$MSR" dump --from 3 --count 0 a.bin >o
[ "$(cat o)" = "# msync-text 1" ]; ok $? "dump --count 0 prints no event"
"$MSR" dump --from 1000 a.bin >o
[ "$(cat o)" = "# msync-text 1" ]; ok $? "dump --from past the end prints only the header"

"$MSR" dump -o out.txt a.bin; ok $? "dump -o FILE"
"$MSR" dump --output=out2.txt a.bin && cmp -s out.txt out2.txt && cmp -s out.txt all-codes.dump
ok $? "dump --output=FILE writes the dump to the file"
"$MSR" encode --level 19 all-codes.txt -o l19.zst && "$MSR" encode --level 1 all-codes.txt -o l1.zst &&
	zstd -q -dc l19.zst | cmp -s - a.bin && zstd -q -dc l1.zst | cmp -s - a.bin
ok $? "encode --level N"
"$MSR" encode --hex --zstd all-codes.txt -o hz.bin && zstd -q -dc hz.bin | cmp -s - all-codes.hex
ok $? "encode --hex --zstd"

filter() { grep -v -e '^file:' -e '^elapsed_seconds:' -e '_per_s:' "$@"; }
"$MSR" stat a.bin >s.out; ok $? "stat exits 0"
filter s.out >s.txt; same "stat counts" all-codes.bin.stat s.txt
grep -q '^file: a.bin$' s.out; ok $? "stat names the file"
grep -Eq '^decode_mb_per_s: [0-9.]+$' s.out && grep -Eq '^events_per_s: [0-9]+$' s.out
ok $? "stat reports the decode rate"
zstd -q -c a.bin >a.zst
"$MSR" stat a.zst | filter >z.txt
grep -q '^compressed: zstd$' z.txt && grep -q "^bytes_in: $(wc -c <a.zst)\$" z.txt &&
	grep -q '^bytes_out: 959$' z.txt
ok $? "stat of zstd input: bytes in = compressed size, bytes out = decoded"
diff <(grep -v -e '^compressed' -e '^bytes_in' s.txt) <(grep -v -e '^compressed' -e '^bytes_in' z.txt) >/dev/null
ok $? "stat counts equal for raw and zstd input"
printf '\x02\x00\x02\x01\x05' >bad.bin
"$MSR" stat bad.bin >bs.out 2>/dev/null; rc=$?
[ $rc -eq 2 ] && grep -q '^events: 2$' bs.out; ok $? "stat prints the counts up to a decode error, exits 2"

for cmd in dump encode stat; do
	"$MSR" $cmd --help >h.txt; rc=$?
	[ $rc -eq 0 ] && grep -q "^usage: msync-replay $cmd" h.txt && grep -q -- '--cores' h.txt
	ok $? "$cmd --help"
done
"$MSR" dump --help | grep -q -- '--index'; ok $? "dump --help lists --index"
finish
