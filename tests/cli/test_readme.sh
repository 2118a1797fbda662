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
for m in a100 h100 mi300x; do
    expect "$m: the dump imported and the plan's sweep ran every size (21 rows), each verified or NCCL's" 0 "^21$" -- bash -c \
        "'$BIN/taccl-run' '$W/$m-plan' --sweep 1K:1G --json | python3 -c 'import json,sys; r=json.load(sys.stdin)[\"rows\"]; assert all(x[\"verified\"] and x[\"time_us\"] <= x[\"nccl_us\"] * (1 + 1e-9) for x in r); print(len(r))'"
done
expect "the ring AllReduce verifies" 0 "result +verified" -- "$BIN/taccl-run" "$W/my-cluster/ring.xml"
expect "NCCL's AllReduce verifies" 0 "result +verified" -- "$BIN/taccl-run" "$W/my-cluster/nccl.xml"
expect "NCCL's AllReduce is its tree under LL128 on 8 channels (4 pairs of trees)" 0 "baseline nccl allreduce: tree LL128, 8 ranks on my-cluster, 4 channels" -- grep -o "baseline nccl allreduce: tree LL128, 8 ranks on my-cluster, 4 channels" "$W/my-cluster/nccl.xml"
expect "the synthesized AllGather verifies" 0 "result +verified" -- "$BIN/taccl-run" "$W/my-cluster/ag.xml"
expect "the synthesized AllReduce verifies" 0 "result +verified" -- "$BIN/taccl-run" "$W/my-cluster/ar.xml"
expect "the plan's sweep ran every size (17 rows), each verified or NCCL's" 0 "^17$" -- bash -c \
    "'$BIN/taccl-run' '$W/my-cluster/plan' --sweep 1K:64M --json | python3 -c 'import json,sys; r=json.load(sys.stdin)[\"rows\"]; assert all(x[\"verified\"] and x[\"time_us\"] <= x[\"nccl_us\"] * (1 + 1e-9) for x in r); print(len(r))'"
expect "the plan names its files" 0 '"files"' -- cat "$W/my-cluster/plan/plan.json"
expect "the trace is written" 0 "" -- python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["traceEvents"]' "$W/my-cluster/ag.trace.json"
expect "the routes are rendered" 0 "" -- test -s "$W/my-cluster/ag.svg"
expect "the benchmark report is written, everything verified" 0 "every schedule that ran verified" -- \
    cat "$(cd "$BIN/.." && pwd)/bench/topo/results.md"
rm -rf "$(cd "$BIN/.." && pwd)/bench/topo"
