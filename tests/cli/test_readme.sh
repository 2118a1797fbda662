#!/usr/bin/env bash
# tier: plain  (make check runs it plain only: the README walkthrough: its
#              commands are the other scripts' code paths; make check-full and
#              make check-asan also sanitized)
# test_readme.sh — the README's walkthrough works as written: every ```sh
# block of README.md runs, in order, in a scratch directory that holds the
# repository's files (build/ being the build under test), and must exit 0;
# then what it promises is checked: the schedules verify, the trace and the
# routes are written, the benchmark report exists.  `make bench ...` runs as
# make does it after building: scripts/bench.sh with the same variables
# (the scratch directory must not rebuild the tree under test).
source "$(dirname "$0")/lib.sh"

W=$TMP/w
mkdir -p "$W"
for f in "$ROOT"/*; do
    case $(basename "$f") in build | build-asan | build-fuzz) ;; *) ln -s "$f" "$W/" ;; esac
done
ln -s "$(cd "$BIN/.." && pwd)" "$W/build"
python3 - "$ROOT/README.md" "$TMP/walk.sh" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)
with open(sys.argv[2], "w") as f:
    f.write("set -e\n")
    f.write("make() { [ \"$1\" = bench ] || return 2; shift; env \"$@\" scripts/bench.sh build/bin; }\n")
    for b in blocks:
        f.write(b)
PY
# "Two commands": `make run` is scripts/run_example.sh after the build (run
# here on the build under test); `make check` is what CI runs, and `make
# test` its unit-test part (run_tests.sh --units): both checked to be what
# the Makefile says.
expect "make run is run_example.sh" 0 "run_example\.sh" -- grep -A2 '^run:' "$ROOT/Makefile"
expect "make test runs the unit tests" 0 "run_tests\.sh --units" -- grep -A3 '^test:' "$ROOT/Makefile"
expect "make run: the synthesized AllGather, NCCL's and the case study all verify (5 runs)" 0 "^5$" -- \
    bash -c "bash '$ROOT/scripts/run_example.sh' '$BIN' 2>&1 | grep -c 'result *verified'"

nblocks=$(grep -c '^```sh' "$ROOT/README.md")
expect "the README has its walkthrough ($nblocks sh blocks)" 0 "" -- test "$nblocks" -ge 4
(cd "$W" && bash "$TMP/walk.sh") >"$TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then echo "ok - every README command ran (exit 0)"
else echo "not ok - a README command failed (exit $rc)"; tail -15 "$TMP/out" | sed 's/^/  | /'; fi
# What the walkthrough printed is checked, not run again: each taccl-run's
# "schedule  FILE:" header and its "result" line, and each plan's --sweep
# table (the three dumps' 1K:1G, then my-cluster's 1K:64M out of place and in
# place): every row verified (the walkthrough's set -e: taccl-run --sweep
# exits 1 when a size does not verify) and no slower than NCCL's.
python3 - "$TMP/out" >"$TMP/seen" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
tables, cur, sched = [], None, None
for ln in lines:
    m = re.match(r"^schedule  (\S+):", ln)
    if m: sched = m.group(1)
    if sched and ln.startswith("result ") and "verified" in ln.split():
        print("verified", sched); sched = None
    if re.match(r"^#\s+size\(B\)\s+time\(us\)\s+algbw\s+nccl\(us\)", ln):
        cur = []; tables.append(cur); continue
    m = re.match(r"^\s+(\d+)\s+([0-9.]+)\s+[0-9.]+\s+([0-9.]+)\s", ln)
    if cur is not None and m:
        cur.append((int(m.group(1)), float(m.group(2)), float(m.group(3)))); continue
    cur = None
for k, t in enumerate(tables):
    slow = [r for r in t if r[1] > r[2] * (1 + 1e-9)]
    print("table", k, len(t), "rows", "slower-than-nccl", len(slow))
PY
k=0
for m in a100 h100 mi300x; do
    expect "$m: the dump imported and the plan's sweep ran every size (21 rows), each verified or NCCL's" 0 \
        "^table $k 21 rows slower-than-nccl 0$" -- cat "$TMP/seen"
    k=$((k + 1))
done
expect "the ring AllReduce verifies" 0 "^verified my-cluster/ring\.xml$" -- cat "$TMP/seen"
expect "NCCL's AllReduce verifies" 0 "^verified my-cluster/nccl\.xml$" -- cat "$TMP/seen"
expect "NCCL's AllReduce is its tree under LL128 on 8 channels (4 pairs of trees)" 0 "baseline nccl allreduce: tree LL128, 8 ranks on my-cluster, 4 channels" -- grep -o "baseline nccl allreduce: tree LL128, 8 ranks on my-cluster, 4 channels" "$W/my-cluster/nccl.xml"
expect "the synthesized AllGather verifies" 0 "^verified my-cluster/ag\.xml$" -- cat "$TMP/seen"
expect "the synthesized AllReduce verifies" 0 "^verified my-cluster/ar\.xml$" -- cat "$TMP/seen"
expect "the plan's sweep ran every size (17 rows), each verified or NCCL's" 0 "^table 3 17 rows slower-than-nccl 0$" -- cat "$TMP/seen"
expect "the plan's in-place sweep too (17 rows)" 0 "^table 4 17 rows slower-than-nccl 0$" -- cat "$TMP/seen"
expect "the plan names its files" 0 '"files"' -- cat "$W/my-cluster/plan/plan.json"
expect "the trace is written" 0 "" -- python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["traceEvents"]' "$W/my-cluster/ag.trace.json"
expect "the routes are rendered" 0 "" -- test -s "$W/my-cluster/ag.svg"
expect "the benchmark report is written, everything verified" 0 "every schedule that ran verified" -- \
    cat "$(cd "$BIN/.." && pwd)/bench/topo/results.md"
rm -rf "$(cd "$BIN/.." && pwd)/bench/topo"
