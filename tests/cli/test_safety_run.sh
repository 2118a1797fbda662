#!/usr/bin/env bash
# tier: sanitized  (make check runs it in its sanitized lane only, every check
#              with the sanitizers on; make check-full in both)
# test_safety_run.sh — taccl-run never harms or hangs on the files it is
# given: inputs are opened only as regular files (a FIFO where a schedule,
# a topology or a plan's file should be is refused at once, naming it),
# outputs are never one of the inputs or each other under any spelling, and
# a plan's NCCL reference files are checked like any input.  Each command
# that could hang runs under `timeout`, so a hang is a failure (exit 124),
# not a stuck suite.
source "$(dirname "$0")/lib.sh"
R="$BIN/taccl-run"
S="$BIN/taccl-synth"
D="$ROOT/tests/data/run"
T="$ROOT/topologies"
TO=$((10 * SLOW))

# A small plan: ndv2-x1 AllGather over 1K..4K, baselines only (well under a second).
P="$TMP/plan"
"$S" --plan "$T/ndv2-x1.json" --collective allgather --sizes 1K:4K --no-propose -o "$P" -q

# ---------------------------------------------------------------- inputs
mkfifo "$TMP/fifo.xml" "$TMP/fifo.json"
expect "a FIFO as the schedule is refused, not waited on" 2 "fifo.xml: not a regular file \(a FIFO\)" -- \
    timeout "$TO" "$R" "$TMP/fifo.xml"
expect "a FIFO as --topo is refused, not waited on" 2 "fifo.json: not a regular file \(a FIFO\)" -- \
    timeout "$TO" "$R" "$D/ok-allgather2.xml" --topo "$TMP/fifo.json"
expect "a FIFO as taccl-synth's topology is refused, not waited on" 2 "fifo.json: not a regular file \(a FIFO\)" -- \
    timeout "$TO" "$S" --algo ring "$TMP/fifo.json" --collective allgather -o "$TMP/never.xml"
cp -r "$P" "$TMP/pf"
mkfifo "$TMP/pf/zz.xml"
expect "a FIFO named *.xml in a plan is refused, naming it" 2 "pf/zz.xml: not a regular file \(a FIFO\)" -- \
    timeout "$TO" "$R" "$TMP/pf" --size 1K
mkdir "$TMP/pd"
cp "$P"/*.xml "$TMP/pd/"
mkdir "$TMP/pd/sub.xml"
expect "a directory named *.xml in a plan is refused, naming it" 2 "pd/sub.xml: is a directory, not a schedule file" -- \
    timeout "$TO" "$R" "$TMP/pd" --size 1K

# --------------------------------------------------------------- outputs
# An output that is an input, or another output of the run, under any
# spelling, is refused with one line, exit 2, before any work (here: before
# the bad --size that would stop the run), and the input keeps its bytes.
W="$TMP/w"
mkdir -p "$W/sub"
cp "$D/ok-allgather2.xml" "$W/ag.xml"
cp "$T/ndv2-x1.json" "$W/t.json"
ln -s ag.xml "$W/link.xml"
ln "$W/ag.xml" "$W/hard.xml"
sum0=$(cksum <"$W/ag.xml")
for spelling in ag.xml ./ag.xml sub/../ag.xml link.xml hard.xml "$W/ag.xml"; do
    expect "--trace $spelling (the input) is refused before any work" 2 \
        "^taccl-run: --trace $spelling is the input ag.xml: writing it would replace it$" -- \
        bash -c 'cd "$1" && "$2" ag.xml --size 6 --trace "$3"' _ "$W" "$R" "$spelling"
done
expect "--embed-to the input is refused" 2 "--embed-to \./ag\.xml is the input ag\.xml" -- \
    bash -c 'cd "$1" && "$2" ag.xml --embed-to ./ag.xml' _ "$W" "$R"
expect "... and the input keeps its bytes" 0 "" -- test "$(cksum <"$W/ag.xml")" = "$sum0"
sum1=$(cksum <"$W/t.json")
expect "--routes onto the --topo input is refused" 2 "--routes t\.json is the input t\.json" -- \
    bash -c 'cd "$1" && "$2" "$3" --topo t.json --routes t.json' _ "$W" "$R" "$TMP/plan/nccl/nccl-1024.xml"
expect "--embed-to onto the --topo input is refused" 2 "--embed-to sub/\.\./t\.json is the input t\.json" -- \
    bash -c 'cd "$1" && "$2" "$3" --topo t.json --embed-to sub/../t.json' _ "$W" "$R" "$TMP/plan/nccl/nccl-1024.xml"
expect "... and the topology keeps its bytes" 0 "" -- test "$(cksum <"$W/t.json")" = "$sum1"
expect "--trace and --routes to one file are refused" 2 "--routes x is also the --trace output x: one would replace the other" -- \
    bash -c 'cd "$1" && "$2" ag.xml --trace x --routes x' _ "$W" "$R"
expect "... also spelled otherwise, and nothing is written" 2 "--routes sub/\.\./y is also the --trace output y" -- \
    bash -c 'cd "$1" && "$2" ag.xml --trace y --routes sub/../y && exit 9; test ! -e x && test ! -e y && exit 2' _ "$W" "$R"
expect "--trace and --routes both to /dev/null are fine" 0 "" -- "$R" "$W/ag.xml" --trace /dev/null --routes /dev/null -q
mkfifo "$W/out.fifo"
expect "a FIFO nothing reads as an output is an error at once, not a hang" 2 "out\.fifo: cannot write: a FIFO that nothing reads" -- \
    timeout "$TO" "$R" "$W/ag.xml" --trace "$W/out.fifo"
cat "$W/out.fifo" >"$W/fifo.copy" &
expect "a FIFO someone reads (a pipe) takes the trace" 0 "" -- timeout "$TO" "$R" "$W/ag.xml" --trace "$W/out.fifo" -q
wait
expect "... which the reader got whole" 0 "" -- python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$W/fifo.copy"
long=$(printf 'a%.0s' $(seq 250))
expect "a name too long for the temporary file beside it is said, not the temporary name" 2 \
    "--trace .*/a{250}: cannot write: file name too long for the temporary file written beside it" -- \
    "$R" "$W/ag.xml" --trace "$W/$long"
out=$("$R" "$W/ag.xml" --trace "$W/no/dir/t.json" --routes "$W/$long" --embed-to "$W/no/e.xml" 2>&1)
if ! grep -q '\.tmp\.' <<<"$out" && [ -z "$(ls "$W" | grep '\.tmp\.')" ]; then
    echo "ok - output errors name the user's path, never a temporary one, and leave none behind"
else
    echo "not ok - output errors name the user's path, never a temporary one, and leave none behind"
    echo "  | $out"; ls "$W" | sed 's/^/  | /'
fi

# ------------------------------------------------------------ --embed-to
# OUT records only the buffer modes that ran and verified: a schedule that
# works in place only (no copy of its own input: in place the input is its
# slice of the output) but claims both modes, embedded with --inplace.
grep -v 'type="cpy"' "$D/ok-allgather2.xml" |
    sed 's/s="1" type="s"/s="0" type="s"/; s/s="2" type="r"/s="1" type="r"/; s/inplace="0" outofplace="1"/inplace="1" outofplace="1"/' \
    >"$TMP/inplace-only.xml"
expect "a schedule claiming both modes fails out of place" 1 "" -- "$R" "$TMP/inplace-only.xml"
expect "--inplace --embed-to: written" 0 "" -- "$R" "$TMP/inplace-only.xml" --inplace --embed-to "$TMP/ip-emb.xml" -q
expect "... recording the in-place mode alone" 0 'inplace="1" outofplace="0"' -- head -1 "$TMP/ip-emb.xml"
expect "... so it verifies run alone" 0 "verified \(in-place\)" -- "$R" "$TMP/ip-emb.xml"
sed 's/inplace="0" outofplace="1"/inplace="1" outofplace="1"/' "$D/ok-allgather2.xml" >"$TMP/both.xml"
"$R" "$TMP/both.xml" --outofplace --embed-to "$TMP/oop-emb.xml" -q
expect "--outofplace --embed-to records the out-of-place mode alone" 0 'inplace="0" outofplace="1"' -- head -1 "$TMP/oop-emb.xml"

# -------------------------------------------------- a plan's NCCL files
# DIR/nccl/nccl-N.xml is checked like any input: collective, ranks, size.
cp -r "$P" "$TMP/pn"
rm "$TMP/pn/nccl/nccl-1024.xml"
mkfifo "$TMP/pn/nccl/nccl-1024.xml"
expect "a FIFO as a plan's NCCL reference is refused, naming it" 2 "pn/nccl/nccl-1024.xml: not a regular file \(a FIFO\)" -- \
    timeout "$TO" "$R" "$TMP/pn" --size 1K
expect "a good plan: x NCCL from its reference, with its range over the model variants" 0 \
    "^ +1024 .* +1\.33 +1\.33-2\.11 +0\.776 +allgather-1K-le4K-outofplace\.xml$" -- "$R" "$P" --size 1K
# the range's ends are two of the variants' ratios, the default's is in it,
# and a variant that cannot apply (ports: ndv2-x1 has no switch) is null
expect "--json: x NCCL's range over the model variants holds the default" 0 '^ok 1\.33 2\.11 None$' -- \
    python3 -c 'import json, sys
r = json.loads(sys.argv[1]); v = r["x_nccl_variants"]; x = [y for y in v.values() if y is not None]
ok = r["x_nccl_min"] == min(x) and r["x_nccl_max"] == max(x) and v["default"] == r["x_nccl"]
print("ok" if ok and min(x) <= r["x_nccl"] <= max(x) else "bad", "%.2f %.2f" % (min(x), max(x)), v["ports"])' \
    "$("$R" "$P" --size 1K --json)"
cp -r "$P" "$TMP/p-ar"
"$S" --algo ring "$T/ndv2-x1.json" --collective allreduce --size 1K -o "$TMP/p-ar/nccl/nccl-1024.xml" -q
expect "an AllReduce as an AllGather plan's NCCL file is exit 2 naming file and field" 2 \
    "p-ar/nccl/nccl-1024\.xml:1: <algo> attribute coll: allreduce, but the plan's schedules are allgather" -- "$R" "$TMP/p-ar" --size 1K
cp -r "$P" "$TMP/p-16"
"$S" --algo ring "$T/ndv2-x2.json" --collective allgather --size 1K -o "$TMP/p16.xml" -q
cp "$TMP/p16.xml" "$TMP/p-16/nccl/nccl-1024.xml"
cp "$TMP/p16.xml" "$TMP/p-16/nccl/nccl-8192.xml"
expect "a 16-rank NCCL file at a size a plan file serves is exit 2, not ignored" 2 \
    "p-16/nccl/nccl-1024\.xml:1: <algo> attribute ngpus: 16, but the plan's schedules have ngpus=8" -- "$R" "$TMP/p-16" --size 1K
expect "a 16-rank NCCL file at a fallback size is blamed on itself, not the plan" 2 \
    "^taccl-run: [^ ]*p-16/nccl/nccl-8192\.xml:1: <algo> attribute ngpus: 16" -- "$R" "$TMP/p-16" --size 8K
cp -r "$P" "$TMP/p-sz"
cp "$P/nccl/nccl-2048.xml" "$TMP/p-sz/nccl/nccl-1024.xml"
expect "an NCCL file for another size is exit 2 naming size_bytes" 2 \
    "p-sz/nccl/nccl-1024\.xml:2: <taccl> attribute size_bytes: 2048, but nccl-1024\.xml must be NCCL's schedule for calls of 1024 bytes" -- \
    "$R" "$TMP/p-sz" --size 1K

# ----------------------------------------------------------------- --json
# With --json, exactly one JSON object on stdout for every exit, success or
# failure, usage errors included (--json before or after the bad flag), with
# the exit code the same command has without --json.
# json_once NAME CMD... — run CMD (which holds --json) and CMD without
# --json; the stdout and both exit codes are kept in $TMP/json/N.*, and
# judged together by one python3 below (a start of it costs a lot on a
# loaded machine).
mkdir -p "$TMP/json"
nj=0
json_once() {
    local name=$1 rc plain a args=()
    shift
    nj=$((nj + 1))
    "$@" >"$TMP/json/$nj.out" 2>/dev/null
    rc=$?
    for a in "$@"; do [ "$a" = --json ] || args+=("$a"); done
    "${args[@]}" >/dev/null 2>&1
    plain=$?
    printf '%s\n%s\n%s\n' "$rc" "$plain" "$name" >"$TMP/json/$nj.meta"
}
OK="$D/ok-allgather2.xml"
json_once "unknown flag, --json after it" "$R" "$OK" --frobnicate --json
json_once "unknown flag, --json before it" "$R" --json "$OK" --frobnicate
json_once "no file" "$R" --json
json_once "a flag without its value" "$R" "$OK" --json --topo
json_once "--size 1.5G" "$R" "$OK" --size 1.5G --json
json_once "--size 0" "$R" "$OK" --size 0 --json
json_once "--seed too large" "$R" "$OK" --seed 99999999999 --json
json_once "--sweep 4K:1K" "$R" "$OK" --sweep 4K:1K --json
json_once "--dtype f64" "$R" "$OK" --dtype f64 --json
json_once "two files" "$R" "$OK" "$D/race.xml" --json
json_once "a missing file" "$R" "$D/nonexistent.xml" --json
json_once "a FIFO" timeout "$TO" "$R" "$TMP/fifo.xml" --json
json_once "a truncated file" "$R" "$D/truncated.xml" --json
json_once "a missing --topo" "$R" "$OK" --topo "$TMP/none.json" --json
json_once "an output that is the input" "$R" "$W/ag.xml" --trace "$W/ag.xml" --json
json_once "--trace with --sweep" "$R" "$OK" --sweep 1K:2K --trace "$TMP/t.json" --json
json_once "a sweep with no size to run" "$R" "$OK" --sweep 3:5 --json
json_once "a schedule that does not verify" "$R" "$D/wrong-data.xml" --json
json_once "a sweep that does not verify" "$R" "$D/wrong-data.xml" --sweep 1K:2K --json
json_once "a run that verifies" "$R" "$OK" --json
json_once "--help" "$R" --help --json
json_once "a plan with neither --size nor --sweep" "$R" "$P" --json
json_once "a plan with --trace" "$R" "$P" --size 1K --trace "$TMP/t.json" --json
json_once "a plan on a topology of other ranks" "$R" "$P" --size 1K --topo "$T/dgx1.json" --json
json_once "a plan with a foreign NCCL file" "$R" "$TMP/p-ar" --size 1K --json
json_once "a plan with a FIFO" timeout "$TO" "$R" "$TMP/pf" --size 1K --json
json_once "an empty directory" "$R" "$TMP/w/sub" --size 1K --json
json_once "a plan that runs" "$R" "$P" --sweep 1K:8K --json
python3 - "$TMP/json" "$nj" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(1, n + 1):
    rc, plain, name = open("%s/%d.meta" % (d, i)).read().split("\n")[:3]
    out = open("%s/%d.out" % (d, i)).read()
    why = None
    lines = out.split("\n")
    if rc != plain:
        why = "exit %s with --json, %s without" % (rc, plain)
    elif len(lines) != 2 or lines[1] != "":
        why = "%d lines on stdout" % (len(lines) - 1)
    else:
        try:
            j = json.loads(lines[0])
            if not isinstance(j, dict) or "error" not in j:
                why = "not an object with an error key"
        except ValueError as e:
            why = "not JSON: %s" % e
    if why:
        print("not ok - --json, one object: %s\n  %s\n  | %s" % (name, why, out[:300]))
    else:
        print("ok - --json, one object: %s (exit %s)" % (name, rc))
PY

# ------------------------------------------------------ smaller ones (G)
# An output that cannot be written after a run that verified: the verdict
# as it is, the write error beside it, exit 2.
"$R" "$OK" --trace /dev/full --json >"$TMP/full.json" 2>"$TMP/full.err"
rc=$?
expect "--trace that cannot be written: exit 2, verified stays true, the error said" 0 "" -- python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert sys.argv[2] == "2", sys.argv[2]
assert j["verified"] is True and "/dev/full: cannot write" in j["error"], j
' "$TMP/full.json" "$rc"
expect "--trace that cannot be written: the report says verified, stderr the write error" 0 "" -- bash -c '"$1" "$2" --trace /dev/full 2>&1 | grep -q "^result *verified" && "$1" "$2" --trace /dev/full 2>&1 >/dev/null | grep -q "^taccl-run: /dev/full: cannot write"' _ "$R" "$OK"
"$R" "$OK" --embed-to /dev/full --json >"$TMP/full.json" 2>/dev/null
rc=$?
expect "--embed-to that cannot be written: exit 2, verified stays true" 0 "" -- python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert sys.argv[2] == "2" and j["verified"] is True and "cannot write" in j["error"], (sys.argv[2], j)
' "$TMP/full.json" "$rc"

# --sweep: one row per size run, none outside LO..HI (this file runs
# multiples of 8 B: 2 chunks of whole 4-byte elements)
"$R" "$OK" --sweep 1:256 --json >"$TMP/sw.json"
expect "--sweep 1:256: each size run once (8..256), none repeated" 0 "" -- python3 -c '
import json, sys
rows = [r["size_bytes"] for r in json.load(open(sys.argv[1]))["rows"]]
assert rows == [8, 16, 32, 64, 128, 256], rows' "$TMP/sw.json"
expect "--sweep 1:256 says why small sizes run as 8 B" 0 "multiple of 8 B, once however many sizes round to it" -- \
    "$R" "$OK" --sweep 1:256
expect "--sweep 3:5: no size in the range can run: exit 2, said" 2 \
    "ok-allgather2\.xml: --sweep 3:5: no size in the range can be run: .*multiple of 8 B" -- "$R" "$OK" --sweep 3:5
"$R" "$OK" --sweep 3:17 --json >"$TMP/sw.json"
expect "--sweep 3:17: no row outside 3..17" 0 "" -- python3 -c '
import json, sys
rows = [r["size_bytes"] for r in json.load(open(sys.argv[1]))["rows"]]
assert rows == [8, 16], rows' "$TMP/sw.json"

# numeric options: a value out of range names the range
expect "--seed past 32 bits names the limit" 2 "--seed: at most 4294967295, got '99999999999'" -- "$R" "$OK" --seed 99999999999
expect "--seed -1 is not a non-negative integer" 2 "--seed: expected a non-negative integer, got '-1'" -- "$R" "$OK" --seed -1
expect "--size 0 names the lower limit" 2 "--size: at least 1 byte, got '0'" -- "$R" "$OK" --size 0
expect "--size too large names the upper limit" 2 "--size: at most 4194304T \(2\^62 bytes\), got '99999999999T'" -- "$R" "$OK" --size 99999999999T
expect "--size 1.5G is not a size" 2 "--size: not a size in bytes: '1\.5G'" -- "$R" "$OK" --size 1.5G
expect "--sweep 0:1K names LO's lower limit" 2 "--sweep: LO: at least 1 byte, got '0:1K'" -- "$R" "$OK" --sweep 0:1K
expect "--sweep 1K:99999999T names HI's upper limit" 2 "--sweep: HI: at most 4194304T" -- "$R" "$OK" --sweep 1K:99999999T
