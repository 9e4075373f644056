#!/bin/bash
# Every unusable input and usage error of dump/encode/stat: exit code 2 and
# the exact message, naming the file, byte offset or line:column and field.
. "$(dirname "$0")/trace-lib.sh"

cp "$DATA/all-codes.txt" "$DATA/all-codes.hex" .
"$MSR" encode all-codes.txt -o a.bin

printf '\x02\x00\x05\x00' >unk.bin
expect_fail "unknown code" \
	"msync-replay: unk.bin offset=2: unknown message code=0x05" "$MSR" dump unk.bin
expect_fail "unknown code (stat)" \
	"msync-replay: unk.bin offset=2: unknown message code=0x05" "$MSR" stat unk.bin
expect_fail "unknown code (encode)" \
	"msync-replay: unk.bin offset=2: unknown message code=0x05" "$MSR" encode unk.bin -o out.bin
[ ! -e out.bin ]; ok $? "failed encode leaves no output file"

printf '\x02\x01\x21\x01\x00\x00\x00\x00\x00\x00\x00' >trunc.bin
expect_fail "truncated message" \
	"msync-replay: trunc.bin offset=2: truncated message code=0x21: expected 17 bytes, got 9" \
	"$MSR" dump trunc.bin
printf '\xff\x01\x00W\x01' >truncrd.bin
expect_fail "truncated register-delta record" \
	"msync-replay: truncrd.bin offset=0: truncated register-delta header record type=W: expected 14 bytes, got 5" \
	"$MSR" dump truncrd.bin

zstd -q -c a.bin >full.zst
n=$(wc -c <full.zst)
head -c $((n - 7)) full.zst >cut.zst
expect_fail "truncated zstd frame" \
	"msync-replay: cut.zst: truncated zstd frame at compressed offset=$((n - 7)): the frame that starts at compressed offset=0 is incomplete" \
	"$MSR" dump cut.zst
{ cat full.zst; head -c 20 full.zst; } >cut2.zst
expect_fail "truncated second zstd frame" \
	"msync-replay: cut2.zst: truncated zstd frame at compressed offset=$((n + 20)): the frame that starts at compressed offset=$n is incomplete" \
	"$MSR" dump cut2.zst
{ cat full.zst; printf 'garbage!'; } >junk.zst
expect_fail "data after the last zstd frame" \
	"msync-replay: junk.zst: corrupt zstd data in the frame at compressed offset=$n: Unknown frame descriptor" \
	"$MSR" dump junk.zst

expect_fail "out-of-range tnum (binary, --cores 2 --threads 4)" \
	"msync-replay: a.bin offset=104: strand out of range tnum=8 in message code=0x25 (LD_ISSUE): expected tnum < 8" \
	"$MSR" dump --cores 2 --threads 4 a.bin
expect_fail "out-of-range tnum (text)" \
	"msync-replay: all-codes.txt:12:15: strand out of range tnum=63: expected tnum < 16" \
	"$MSR" stat --cores 2 all-codes.txt
expect_fail "out-of-range tnum (binary, --cores 4)" \
	"msync-replay: a.bin offset=117: strand out of range tnum=63 in message code=0x25 (LD_ISSUE): expected tnum < 32" \
	"$MSR" dump --cores 4 a.bin
printf '\x29\x08\x00\x00\x00\x00\x01' >cid.bin
expect_fail "out-of-range cid" \
	"msync-replay: cid.bin offset=0: bad cid=8 in message code=0x29 (EVICT_INV): expected cid < 8" \
	"$MSR" dump cid.bin

{ cat all-codes.hex; printf '02zz\n'; } >bad.hex
expect_fail "malformed hex" \
	"msync-replay: bad.hex offset=$(($(wc -c <all-codes.hex) + 2)): malformed hex: expected a lowercase hex digit, got 'z' (0x7a)" \
	"$MSR" dump bad.hex
{ cat all-codes.hex; printf 'ff12x4G\n'; } >bad2.hex
expect_fail "malformed hex register-delta record" \
	"msync-replay: bad2.hex offset=$(($(wc -c <all-codes.hex) + 4)): malformed hex: expected a decimal digit, got 'x' (0x78)" \
	"$MSR" dump bad2.hex

t() { # name body: a text trace file
	printf '# msync-text 1\n%b' "$2" >"$1"
}
t enum.txt 'LD_ISSUE tnum=1 pa=0x40 size=3 itype=LAOD ts=1\n'
expect_fail "bad enum name (itype)" \
	"msync-replay: enum.txt:2:38: bad itype=LAOD: expected NONE, LOAD, BLOCK_LOAD, DOUBLE_LOAD, QUAD_LOAD, PREFETCH, STORE, BLOCK_STORE, ATOMIC or BLK_INIT_ST" \
	"$MSR" encode enum.txt -o out.bin
t dsrc.txt 'LD_DATA tnum=1 pa=0x40 dsrc=L4 ts=1\n'
expect_fail "bad enum name (dsrc)" \
	"msync-replay: dsrc.txt:2:29: bad dsrc=L4: expected STB, L1 or L2" "$MSR" dump dsrc.txt
t miss.txt 'SSTEP tnum=1\nST_COMMIT tnum=1 pa=0x40 bmask=0xff invvec=0x0 ts=5\n'
expect_fail "missing field" \
	"msync-replay: miss.txt:3:52: missing field l2hit in ST_COMMIT" "$MSR" encode miss.txt -o out.bin
t unk.txt 'ST_ACK tnum=1 rmo=0 ts=5 ack=1\n'
expect_fail "unknown field" \
	"msync-replay: unk.txt:2:26: unknown field ack in ST_ACK" "$MSR" encode unk.txt -o out.bin
t num.txt 'ST_ACK tnum=1 rmo=0 ts=5x\n'
expect_fail "bad number" \
	"msync-replay: num.txt:2:24: bad number ts=5x: expected a decimal or 0x-hex number" \
	"$MSR" encode num.txt -o out.bin
t hexnum.txt 'LD_FILL tnum=1 pa=1000 ts=5\n'
expect_fail "bad number (hex field without 0x)" \
	"msync-replay: hexnum.txt:2:19: bad number pa=1000: expected 0x and hex digits" \
	"$MSR" encode hexnum.txt -o out.bin
t range.txt 'LD_FILL tnum=1 pa=0x10000000000 ts=5\n'
expect_fail "number out of range" \
	"msync-replay: range.txt:2:19: number out of range pa=0x10000000000: expected at most 0xffffffffff" \
	"$MSR" encode range.txt -o out.bin
t name.txt 'LD_FLIL tnum=1 pa=0x40 ts=5\n'
expect_fail "unknown message name" \
	"msync-replay: name.txt:2:1: unknown message name 'LD_FLIL'" "$MSR" encode name.txt -o out.bin
t msg.txt 'MSG code=0x46 bytes=00\n'
expect_fail "unknown code in MSG" \
	"msync-replay: msg.txt:2:10: unknown message code=0x46" "$MSR" encode msg.txt -o out.bin
printf '# msync-text 2\n' >ver.txt
expect_fail "bad text header" \
	"msync-replay: ver.txt:1:1: bad header: expected '# msync-text 1' as the first line" \
	"$MSR" dump ver.txt

expect_fail "missing file" \
	"msync-replay: nope.trace: cannot open: No such file or directory" "$MSR" dump nope.trace
for cmd in dump encode stat; do
	expect_fail "$cmd: unknown option" \
		"msync-replay $cmd: unknown option --bogus
Try 'msync-replay $cmd --help'." "$MSR" $cmd --bogus a.bin
	expect_fail "$cmd: missing argument" \
		"msync-replay $cmd: missing $( [ $cmd = encode ] && echo TEXT || echo TRACE) argument
Try 'msync-replay $cmd --help'." "$MSR" $cmd
	expect_fail "$cmd: bad --cores" \
		"msync-replay $cmd: bad --cores=0: expected a number from 1 to 32
Try 'msync-replay $cmd --help'." "$MSR" $cmd --cores 0 a.bin
done
expect_fail "encode: missing -o" \
	"msync-replay encode: missing -o OUT
Try 'msync-replay encode --help'." "$MSR" encode all-codes.txt
expect_fail "dump: bad --pa" \
	"msync-replay dump: bad --pa=0x40/zz: expected ADDR or ADDR/MASK
Try 'msync-replay dump --help'." "$MSR" dump --pa 0x40/zz a.bin
expect_fail "dump: --threads without value" \
	"msync-replay dump: option --threads needs a value
Try 'msync-replay dump --help'." "$MSR" dump a.bin --threads
finish
