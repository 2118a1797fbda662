#!/usr/bin/env bash
# tier: extended  (make check leaves it out: it tests a bench script, whose
#              runs make bench makes; make check-full runs it, plain and sanitized)
# test_bench_user.sh — make bench TOPO=...: the benchmark's report and plots
# for a user's own topology, written under the build folder, never over the
# tracked bench/ report.  Runs scripts/bench.sh as make bench does, QUICK,
# on a copy of a bundled node under another name, with one sketch.
source "$(dirname "$0")/lib.sh"

cp "$ROOT/topologies/ndv2-x1.json" "$TMP/my-node.json"
before=$(cat "$ROOT/bench/results.md" 2>/dev/null | cksum)
out="$(cd "$BIN/.." && pwd)/bench/my-node"
rm -rf "$out"
QUICK=1 TOPO="$TMP/my-node.json" SKETCHES="$ROOT/sketches/ndv2-x1-sk-1.json" \
    COLLECTIVES="allgather allreduce" BENCH_JOBS=1 \
    "$ROOT/scripts/bench.sh" "$BIN" >"$TMP/out" 2>"$TMP/err"
rc=$?
expect "bench TOPO=...: exit 0" 0 "" -- test "$rc" -eq 0
expect "its report is titled for the topology and verified everything" 0 \
    "verdict\*\*: every schedule that ran verified" -- cat "$out/results.md"
expect "its report names the file" 0 "^# Benchmark of .*my-node.json" -- cat "$out/results.md"
expect "its first page compares with NCCL per collective, linking the detail" 0 \
    "^\| \[my-node\]\(results/my-node.md\) \| 8 \| AllGather \| .*\]\(results/my-node.md#allgather\)" -- \
    cat "$out/results.md"
expect "the sketch was synthesized on it" 0 "^\| ndv2-x1-sk-1 \| my-node \| AllGather \| .* \| ok \|" -- \
    cat "$out/results/synthesizer.md"
expect "NCCL's own schedule is a row of its own, beside the ring" 0 \
    "^\| nccl \| ok \|" -- cat "$out/results/my-node.md"
expect "the ring stays a row of its own" 0 "^\| ring \| ok \|" -- cat "$out/results/my-node.md"
expect "NCCL's choice per size is said" 0 "^NCCL's choice per size .*: 1 KiB" -- cat "$out/results/my-node.md"
expect "every table compares with NCCL as × NCCL" 0 "\| × ring \| × NCCL \|" -- cat "$out/results/my-node.md"
expect "every row is saved" 0 "" -- python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["results"] and all("rows" in r for r in j["results"])' "$out/results.json"
expect "no calibration for a user's machine" 1 "" -- bash -c \
    "grep -q '^## Calibration' '$out/results.md' || test -e '$out/results/calibration.md'"
expect "a plot per collective" 0 "" -- test -s "$out/results/my-node-allgather.png" -a -s "$out/results/my-node-allreduce.png"
expect "no published-figure sections for a user's machine" 1 "" -- grep -q "issue-4 targets" \
    "$out/results.md" "$out/results/synthesizer.md" "$out/results/my-node.md"
cat >"$TMP/cells.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1] + "/scripts")
import bench_report as br
print(sum(1 for p in sys.argv[2:] for line in open(p) if line.startswith("| ")
          for c in line.strip().strip("|").split(" | ")
          if len(br.visible(c)) > br.CELL_MAX))
EOF
expect "no table cell longer than a sentence (a long one is a note)" 0 "^0$" -- \
    python3 "$TMP/cells.py" "$ROOT" "$out/results.md" "$out/results/"*.md
after=$(cat "$ROOT/bench/results.md" 2>/dev/null | cksum)
expect "the tracked bench/results.md is untouched" 0 "" -- test "$before" = "$after"
rm -rf "$out"
QUICK=1 TOPO="$TMP/nope.json" "$ROOT/scripts/bench.sh" "$BIN" >/dev/null 2>"$TMP/err2"
rc=$?
expect "a missing TOPO is exit 1, said" 0 "bench: TOPO: no such file: .*nope.json" -- \
    bash -c "test $rc -eq 1 && cat '$TMP/err2'"
