#!/usr/bin/env bash
# tier: plain  (make check runs it plain only: one small plan and the
#              script's Python; make check-full and make check-asan also
#              sanitized)
# test_deploy.sh — scripts/taccl_mscclpp_job.py (docs/deploy.md) on an
# MSCCL++ plan directory of allreduce on ndv2-x2 (16 ranks, 8 per node, so
# a call no file takes goes to NCCL, MSCCL++'s multi-node rule): its
# --dry-run picks, for several sizes and both buffer modes, the file whose
# plan.json "mscclpp" entry holds the size (min and max inclusive, as
# MSCCL++'s matchExecutionPlan compares), or "NCCL fallback"; the answers are
# checked against plan.json by code independent of the script.  Then the
# script's refusals (an XML plan, a file that disagrees with plan.json), its
# --help, and install() against a stand-in mscclpp module that records what
# it is given (the real one needs a GPU).
#
# The plan directory comes from taccl-synth --plan --target mscclpp.
source "$(dirname "$0")/lib.sh"
export PYTHONDONTWRITEBYTECODE=1   # install()'s check imports the script from scripts/
S="$ROOT/scripts/taccl_mscclpp_job.py"
TOPO="$ROOT/topologies/ndv2-x2.json"
P=$TMP/plan

out=$("$BIN/taccl-synth" --plan "$TOPO" --collective allreduce --target mscclpp --sizes 1K:16M \
    --no-propose -q -o "$P" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
    echo "ok - taccl-synth --plan --target mscclpp wrote the plan directory"
else
    echo "not ok - taccl-synth --plan --target mscclpp wrote the plan directory"
    echo "  exit $rc: $out"
fi

expect "plan.json is an MSCCL++ plan with files of both buffer modes" 0 "^ok$" -- python3 -c '
import json, sys
p = json.load(open(sys.argv[1] + "/plan.json"))
modes = {f["mscclpp"]["buffer_mode"] for f in p["files"]}
print("ok" if p["target"] == "mscclpp" and modes == {"inplace", "outofplace"} else p)' "$P"

# Expected picks from plan.json alone: every entry's first and last byte and
# the bytes either side, the byte below the first range, the plan's ends.
python3 - "$P" >"$TMP/expected" <<'PY'
import json, sys
p = json.load(open(sys.argv[1] + "/plan.json"))
ents = [f["mscclpp"] for f in p["files"]]
sizes = {p["sizes"][0], p["sizes"][1], min(e["min_message_size"] for e in ents) - 1}
for e in ents:
    for s in (e["min_message_size"], e["max_message_size"]):
        sizes.update((s - 1, s, s + 1))
for s in sorted(x for x in sizes if x > 0):
    for mode in ("inplace", "outofplace"):
        hit = [e["name"] + ".json" for e in ents if e["buffer_mode"] == mode
               and e["min_message_size"] <= s <= e["max_message_size"]]
        assert len(hit) <= 1, hit
        print(s, mode, hit[0] if hit else "NCCL")
PY
sizes=$(awk '{print $1}' "$TMP/expected" | sort -un | tr '\n' ' ')
nsizes=$(wc -w <<<"$sizes")
for mode in inplace outofplace; do
    # shellcheck disable=SC2086
    python3 "$S" "$P" --buffer-mode $mode --dry-run $sizes >"$TMP/got.$mode" 2>&1
    rc=$?
    got=$(sed -E 's/^([0-9]+) ([a-z]+) -> (NCCL fallback|[^ ]+).*/\1 \2 \3/; s/NCCL fallback$/NCCL/' \
        "$TMP/got.$mode")
    want=$(grep " $mode " "$TMP/expected")
    if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
        echo "ok - --dry-run --buffer-mode $mode: $nsizes sizes, each pick is plan.json's"
    else
        echo "not ok - --dry-run --buffer-mode $mode (exit $rc)"
        diff <(echo "$want") <(echo "$got") | sed 's/^/  | /' | head -12
    fi
done

first=$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1] + "/plan.json"))
e = min((f["mscclpp"] for f in p["files"] if f["mscclpp"]["buffer_mode"] == "inplace"),
        key=lambda e: e["min_message_size"])
print(e["name"], e["min_message_size"], e["max_message_size"])' "$P")
read -r fname flo fhi <<<"$first"
expect "a size below the first range: NCCL fallback" 0 "^$((flo - 1)) inplace -> NCCL fallback" -- \
    python3 "$S" "$P" --buffer-mode inplace --dry-run $((flo - 1))
expect "the first range's ends are inclusive ($flo, $fhi)" 0 \
    "^$flo inplace -> $fname\.json .*$fhi inplace -> $fname\.json " -- \
    bash -c 'python3 "$@" | tr "\n" " "' _ "$S" "$P" --buffer-mode inplace --dry-run "$flo" "$fhi"
# A size inside a range that the file's chunks do not divide: MSCCL++'s
# selector still picks the file and its load then throws (docs/deploy.md §2).
read -r align chunks <<<"$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j["buffer_alignment"], j["gpus"][0]["input_chunks"])' "$P/$fname.json")"
if [ "$chunks" -gt 1 ]; then
    expect "in range, not a multiple of $align x $chunks: picked and flagged as refused" 0 \
        "^$((flo + align)) inplace -> $fname\.json .*MSCCL\+\+ refuses the size: input bytes $((flo + align)) not a multiple of $align x $chunks" -- \
        python3 "$S" "$P" --buffer-mode inplace --dry-run $((flo + align))
else
    echo "# skip - $fname has one input chunk: every aligned size divides"
fi
expect "in range and a multiple of $align x $chunks: not flagged" 1 "" -- \
    bash -c 'python3 "$@" | grep refuses' _ "$S" "$P" --buffer-mode inplace --dry-run $((flo + align * chunks))
expect "both modes by default, K suffix read as 1024" 0 \
    "^$flo inplace -> $fname\.json.*$flo outofplace -> " -- \
    bash -c 'python3 "$@" | tr "\n" " "' _ "$S" "$P" --dry-run "$((flo / 1024))K"
expect "another world size: nothing matches" 0 "^$flo inplace -> NCCL fallback.*world_size 16, n_ranks_per_node 8; the job has 32, 8" -- \
    python3 "$S" "$P" --buffer-mode inplace --world-size 32 --dry-run "$flo"
expect "--json rows" 0 "\"file\": \"$fname\.json\"" -- \
    python3 "$S" "$P" --buffer-mode inplace --json --dry-run "$flo"

# The modes are told apart: with plan.json's in-place entries gone, an
# in-place call falls back where the out-of-place one still runs a file.
cp -r "$P" "$TMP/oop"
python3 -c '
import json, sys
f = sys.argv[1] + "/plan.json"
p = json.load(open(f))
p["files"] = [x for x in p["files"] if x["mscclpp"]["buffer_mode"] != "inplace"]
json.dump(p, open(f, "w"))' "$TMP/oop"
expect "no in-place entries: in place falls back, out of place runs its file" 0 \
    "^$flo inplace -> NCCL fallback.*$flo outofplace -> ${fname%-inplace}-outofplace\.json" -- \
    bash -c 'python3 "$@" | tr "\n" " "' _ "$S" "$TMP/oop" --dry-run "$flo"

# A file whose own range is not plan.json's: MSCCL++ would match on the
# file's, so the script refuses the directory.
cp -r "$P" "$TMP/bad"
python3 -c '
import json, sys
f = sys.argv[1]
p = json.load(open(f))
p["min_message_size"] += 16
json.dump(p, open(f, "w"))' "$TMP/bad/$fname.json"
expect "a file whose min_message_size disagrees with plan.json: exit 1, named" 1 \
    "$fname\.json: min_message_size is $((flo + 16)), plan.json says $flo" -- \
    python3 "$S" "$TMP/bad" --dry-run 1M

"$BIN/taccl-synth" --plan "$TOPO" --collective allreduce --sizes 1K:64K --no-propose -q \
    -o "$TMP/xml" >/dev/null 2>&1
expect "an MSCCL XML plan directory: exit 2, named as such" 2 "target is 'msccl', not \"mscclpp\"" -- \
    python3 "$S" "$TMP/xml" --dry-run 1M
expect "a bad size: exit 2" 2 "bad size 'x'" -- python3 "$S" "$P" --dry-run x
expect "no plan.json: exit 2" 2 "plan.json" -- python3 "$S" "$TMP" --dry-run 1M
expect "--help: exit 0, names the script, --dry-run and PLAN_DIR" 0 \
    "taccl_mscclpp_job.*--dry-run.*PLAN_DIR" -- bash -c 'python3 "$1" --help | tr "\n" " "' _ "$S"
if python3 -c 'import torch, mscclpp' 2>/dev/null; then
    echo "# skip - the job path without mscclpp: torch and mscclpp are importable here"
else
    expect "without --dry-run outside a job: exit 2, says it needs the job" 2 "runs inside the job" -- \
        python3 "$S" "$P"
fi

# install() against a stand-in mscclpp: what it registers and how its
# selector answers MSCCL++'s requests.
mkdir -p "$TMP/stub/mscclpp"
cat >"$TMP/stub/mscclpp/__init__.py" <<'PY'
LOG = []
class ExecutionPlan:
    def __init__(self, path, rank):
        LOG.append(("plan", path.rsplit("/", 1)[-1], rank))
class Algorithm:
    class Constraint:
        def __init__(self, world_size=0, n_ranks_per_node=0):
            self.c = (world_size, n_ranks_per_node)
    def __init__(self, id=None, execution_plan=None, constraint=None, tags=None):
        LOG.append(("algo", id, constraint.c))
PY
cat >"$TMP/stub/mscclpp/_mscclpp.py" <<'PY'
class CppCollectiveBufferMode:
    IN_PLACE, OUT_OF_PLACE = "in", "out"
PY
cat >"$TMP/stub/mscclpp/ext.py" <<'PY'
from mscclpp import LOG
class AlgorithmCollectionBuilder:
    selector = None
    def add_algorithm_builder(self, a):
        LOG.append(("add",))
    def set_algorithm_selector(self, f):
        AlgorithmCollectionBuilder.selector = f
PY
cat >"$TMP/inst.py" <<'PY'
import sys, types
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import taccl_mscclpp_job as j, mscclpp, mscclpp.ext
used = j.install(sys.argv[3], rank=3, world_size=16, n_ranks_per_node=8, log=lambda m: None)
print("registered", sorted(e["name"] for e in used))
print("log", sorted(set(x[0] + ":" + str(x[-1]) for x in mscclpp.LOG if x[0] != "add")))
sel = mscclpp.ext.AlgorithmCollectionBuilder.selector
algos = {"allreduce": {e["name"]: "ALGO:" + e["name"] for e in used}}
def req(size, mode, world=16, rpn=8):
    return types.SimpleNamespace(collective="allreduce", message_size=size, world_size=world,
                                 n_ranks_per_node=rpn, buffer_mode=lambda: mode)
lo = int(sys.argv[4])
print("pick", sel(algos, req(lo, "in")), sel(algos, req(lo - 1, "in")),
      sel(algos, req(lo, "out")), sel(algos, req(lo, "in", world=8, rpn=8)))
PY
expect "install(): one ExecutionPlan(path, rank) per in-place file, Constraint(16, 8)" 0 \
    "^registered \[[^]]*'$fname'.*\]" -- python3 "$TMP/inst.py" "$TMP/stub" "$ROOT/scripts" "$P" "$flo"
expect "install(): no out-of-place file registered for allreduce (PyTorch's all_reduce is in place)" 1 \
    "" -- bash -c 'python3 "$@" | grep "^registered" | grep outofplace' _ \
    "$TMP/inst.py" "$TMP/stub" "$ROOT/scripts" "$P" "$flo"
expect "install(): plans loaded for rank 3 with the job's constraint" 0 \
    "plan:3.*algo:\(16, 8\)|algo:\(16, 8\).*plan:3" -- python3 "$TMP/inst.py" "$TMP/stub" "$ROOT/scripts" "$P" "$flo"
expect "install()'s selector: the file in range, else None (shim, then NCCL)" 0 \
    "^pick ALGO:$fname None None None$" -- python3 "$TMP/inst.py" "$TMP/stub" "$ROOT/scripts" "$P" "$flo"
