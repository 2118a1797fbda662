#!/usr/bin/env bash
# tier: plain  (make check runs it plain only; make check-full also sanitized)
# test_plan_beyond.sh — a plan whose yardstick the runtime cannot load: on
# 128 ranks (DGX H100 x16) NCCL's AllGather ring needs 128 steps in a
# threadblock and the newer MSCCL executor allows 64 (the legacy runtime's
# 256 break at 1024 ranks the same way).  NCCL runs it natively, so
# the plan times it beyond the limits and writes no file of it; plan.json
# carries its times, and taccl-run DIR compares the plan's files with them.
# The times are checked against the executor's own run of NCCL's schedule
# built with --target unlimited, in every model variant: what the plan says
# of NCCL is what the executor runs, not a figure of its own.
source "$(dirname "$0")/lib.sh"

S="$BIN/taccl-synth"
R="$BIN/taccl-run"

python3 - "$ROOT/scripts" "$TMP/h16.json" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import gen_topologies as g
json.dump(g.dgx_h100(16), open(sys.argv[2], "w"))
PY

# no sketches (--no-propose), one protocol: the plan is the baselines in
# LL, judged in the variants against NCCL's ring (LL at 1 MiB)
"$S" -q --plan "$TMP/h16.json" --collective allgather --sizes 1M:1M --no-propose \
    --proto LL --target msccl-executor --time-budget $((60 * SLOW)) -o "$TMP/plan" 2>"$TMP/plan.err"
expect "the plan is made although NCCL's schedule breaks the runtime's limits" 0 \
    "not_written" -- python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
n = j["nccl"][0]
assert n["file"] is None and n["size_bytes"] == 1048576, n
assert n["variants_us"]["default"] > 0, n
assert any("breaks the runtime" in x for x in j["notes"]), j["notes"]
print("not_written:", n["not_written"])' "$TMP/plan/plan.json"

expect "no file of NCCL's schedule is written" 0 "" -- \
    bash -c '! ls "$1"/nccl/*.xml 2>/dev/null | grep -q .' _ "$TMP/plan"

"$S" -q --algo nccl "$TMP/h16.json" --collective allgather --size 1M --target unlimited \
    -o "$TMP/nccl.xml"
"$R" "$TMP/nccl.xml" --topo "$TMP/h16.json" --no-data --target unlimited --sweep 1M:1M \
    --variants --json -q >"$TMP/nccl.json"
expect "plan.json's NCCL times are the executor's run of NCCL's schedule, in every variant" 0 \
    "5 variants agree" -- python3 -c '
import json, sys
plan = json.load(open(sys.argv[1]))["nccl"][0]["variants_us"]
run = json.load(open(sys.argv[2]))
run = (run["rows"][0] if "rows" in run else run)["variants"]
n = 0
for k, v in run.items():
    if v is None:
        continue
    assert plan[k] is not None and abs(plan[k] - v) <= 1e-6 * v, (k, plan[k], v)
    n += 1
print(n, "variants agree")' "$TMP/plan/plan.json" "$TMP/nccl.json"

"$R" "$TMP/plan" --sweep 1M:1M --no-data --json -q >"$TMP/sweep.json"
expect "taccl-run DIR compares with plan.json's NCCL times where no file holds them" 0 \
    "x NCCL" -- python3 -c '
import json, sys
plan = json.load(open(sys.argv[1]))["nccl"][0]["variants_us"]
row = json.load(open(sys.argv[2]))
row = row["rows"][0] if "rows" in row else row
assert row["nccl_from"] == "plan.json" and row["nccl_us"] == plan["default"], row
assert row["picked"], row    # a baseline beats the ring over 128 ranks at 1 MiB
assert abs(row["x_nccl"] - plan["default"] / row["time_us"]) < 1e-9, row
assert row["x_nccl_min"] <= row["x_nccl"] <= row["x_nccl_max"], row
print("x NCCL", row.get("x_nccl"))' "$TMP/plan/plan.json" "$TMP/sweep.json"

expect "the text table marks the plan's NCCL time" 0 "plan timed it unwritten" -- \
    "$R" "$TMP/plan" --sweep 1M:1M --no-data

"$R" "$TMP/plan" --sweep 1M:1M --no-data --steps --json -q >"$TMP/steps.json"
expect "with --steps the row's NCCL time is plan.json's steps timing" 0 "steps" -- python3 -c '
import json, sys
plan = json.load(open(sys.argv[1]))["nccl"][0]["variants_us"]
row = json.load(open(sys.argv[2]))
row = row["rows"][0] if "rows" in row else row
assert row["nccl_from"] == "plan.json" and row["nccl_us"] == plan["steps"], (row, plan)
print("steps", row["nccl_us"])' "$TMP/plan/plan.json" "$TMP/steps.json"

expect "with --topo the plan's NCCL times are not used (they are its topology's)" 0 "" -- \
    bash -c '"$1" "$2" --topo "$3" --sweep 1M:1M --no-data --json -q |
             python3 -c "import json,sys; r=json.load(sys.stdin); r=r[\"rows\"][0] if \"rows\" in r else r; sys.exit(r[\"nccl_us\"] is not None)"' \
    _ "$R" "$TMP/plan" "$TMP/h16.json"

# --by-default judges in no variant; taccl-run DIR still finds NCCL's time
"$S" -q --plan "$TMP/h16.json" --collective allgather --sizes 1M:1M --by-default \
    --no-propose --proto LL --target msccl-executor --time-budget $((60 * SLOW)) \
    -o "$TMP/plan-bd" 2>/dev/null
expect "a --by-default plan gives NCCL's time in both timings" 0 "both" -- python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
v = j["nccl"][0]["variants_us"]
assert v["default"] > 0 and v["steps"] > 0 and v["delay"] is None, v
print("both", v["default"], v["steps"])' "$TMP/plan-bd/plan.json"
