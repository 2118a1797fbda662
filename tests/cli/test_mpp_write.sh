#!/usr/bin/env bash
# tier: full  (every bundled topology x collective x {ring, nccl} and the
#              few sketches: make check runs it plain; make check-full also
#              sanitized)
# test_mpp_write.sh — taccl-synth writes MSCCL++ execution plans (issue 38
# item 2, docs/mscclpp.md §12) and every plan it writes passes
# scripts/mpp_check.py: the rules of docs/mscclpp.md §2-§7 and a run on
# symbolic chunks that must end with the collective's postcondition under
# several interleavings, puts landing early or late.
#
#   * every bundled topology x 4 collectives x {--algo ring, --algo nccl}:
#     written (or refused for a reason of the baseline's own, as for XML)
#     and checked: run on the abstract machine up to 16 ranks, the rules
#     alone up to 64 (the machine is Python; a 64-rank plan is 5-13 MB);
#     with TACCL_FEW or TACCL_QUICK (make check) only FEW_MPP below
#   * the bundled sketches (half of FEW_SKETCHES under TACCL_FEW): synthesized to
#     a plan and checked
#   * in-place plans (--inplace) run aliased as MSCCL++ aliases them
#   * LL plans (--proto LL): packets, on one and two nodes
#   * the same input twice gives the same bytes; -o X.xml stays XML
#   * the checker itself fails on broken plans: a missing key, a wait
#     removed, a put aimed at the wrong chunk, a nop removed, a block over 64
#     ops, a semaphore released twice; and passes the 59 corpus plans
#     tests/data/mscclpp/README.md lists as loadable while failing the 22
#     it flags
#   * a byte range no plan can hold (32-bit offsets) is refused, exit 2
source "$(dirname "$0")/lib.sh"
S="$BIN/taccl-synth"
CHK="$ROOT/scripts/mpp_check.py"

# check NAME PLAN [--run] — one result line for mpp_check.py on PLAN
check() {
    local name=$1 plan=$2 out
    shift 2
    if out=$(python3 "$CHK" --quiet "$@" "$plan" 2>&1); then
        echo "ok - $name"
    else
        echo "not ok - $name"
        sed 's/^/  | /' <<<"$out" | head -8
    fi
}

ranks_of() {
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); print(t.get("nodes",1)*t["ranks_per_node"])' "$1"
}

# make check (few): NVLink pairs with LL (dgx1), two nodes over port
# channels (ndv2-x2) and a chip device the baselines refuse (cs-chip4);
# test_mpp_run_matrix.sh runs plans of the same kinds through taccl-run
FEW_MPP="dgx1 ndv2-x2 cs-chip4"
written=0 refused=0
for topo in "$ROOT"/topologies/*.json; do
    tn=$(basename "$topo" .json)
    n=$(ranks_of "$topo")
    run=--run
    [ "$n" -le 16 ] || run=""
    if [ "$n" -gt 64 ]; then
        echo "# skip - $tn: $n ranks (plans of over 64 ranks are tens of MB; not checked here)"
        continue
    fi
    if few && [[ " $FEW_MPP " != *" $tn "* ]]; then
        echo "# skip - $tn: make check runs $FEW_MPP; check-full every topology of up to 64 ranks"
        continue
    fi
    for coll in allgather reducescatter allreduce alltoall; do
        for algo in ring nccl; do
            out="$TMP/$tn-$algo-$coll.json"
            msg=$("$S" -q --algo "$algo" "$topo" --collective "$coll" -o "$out" 2>&1)
            rc=$?
            if [ $rc -eq 2 ] && grep -Eq "has no AllToAll|runs on GPUs|no link, switch or NIC" \
                <<<"$msg"; then
                refused=$((refused + 1))
                echo "ok - $tn $algo $coll: the baseline refuses, as for XML"
                continue
            fi
            if [ $rc -ne 0 ]; then
                echo "not ok - $tn $algo $coll: exit $rc"
                sed 's/^/  | /' <<<"$msg" | head -4
                continue
            fi
            written=$((written + 1))
            check "$tn $algo $coll: plan passes mpp_check${run:+ --run}" "$out" $run
            rm -f "$out"
        done
    done
done
echo "# $written plans written and checked, $refused refused by the baseline"

# sketches
for sk in "$ROOT"/sketches/*.json; do
    name=$(basename "$sk" .json)
    sketch_skip "$name" "$sk" 1 && continue
    topo="$ROOT/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["topology"])' "$sk")"
    out="$TMP/$name.json"
    msg=$("$S" -q "$sk" "$topo" --time-limit 20 -o "$out" 2>&1)
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "not ok - sketch $name: exit $rc"
        sed 's/^/  | /' <<<"$msg" | head -4
        continue
    fi
    run=--run
    [ "$(ranks_of "$topo")" -le 16 ] || run=""
    check "sketch $name: plan passes mpp_check${run:+ --run}" "$out" $run
done

# LL: packets into scratch slots, no signal or wait, both kinds of channel
for t in ndv2-x2 dgx1 cs-cluster2; do
    if few && [ "$t" != ndv2-x2 ]; then
        echo "# skip - LL on $t: make check runs LL on ndv2-x2 (both kinds of channel), check-full on three"
        continue
    fi
    for coll in allgather reducescatter allreduce; do
        out="$TMP/ll-$t-$coll.json"
        if "$S" -q --algo ring "$ROOT/topologies/$t.json" --collective "$coll" --proto LL \
            -o "$out" >/dev/null 2>&1 && grep -q '"protocol":"LL"' "$out" &&
            grep -q '"use_double_scratch_buffer":true' "$out"; then
            check "LL $t ring $coll plan passes mpp_check --run" "$out" --run
        else
            echo "not ok - LL $t ring $coll plan written with protocol LL"
        fi
    done
done
out="$TMP/ll-a2a.json"
"$S" -q --algo direct "$ROOT/topologies/ndv4-x1.json" --collective alltoall --proto LL -o "$out"
check "LL ndv4-x1 direct alltoall plan passes mpp_check --run" "$out" --run
cp "$TMP/ll-ndv2-x2-allreduce.json" "$TMP/ll.json"
python3 - "$TMP/ll.json" <<'EOF2'
import json, sys
p = json.load(open(sys.argv[1]))
for g in p["gpus"]:
    for t in g["threadblocks"]:
        for o in t["ops"]:
            if o["name"] == "upkt":      # unpack a slot nothing sends into: polls forever
                o["src_buff"][0]["index"] = g["scratch_chunks"] - 1
                json.dump(p, open(sys.argv[1], "w"))
                raise SystemExit
EOF2
if out=$(python3 "$CHK" --run --quiet "$TMP/ll.json" 2>&1); then
    echo "not ok - checker fails: an LL unpack of a slot nothing fills"
else
    echo "ok - checker fails: an LL unpack of a slot nothing fills ($(head -1 <<<"$out" | cut -d: -f2 | tr -d ' '))"
fi

# in place (sketch mode --inplace): inplace true, the checker runs it aliased
for coll in allgather reducescatter allreduce; do
    out="$TMP/ip-$coll.json"
    if "$S" -q "$ROOT/sketches/ndv2-x1-sk-1.json" "$ROOT/topologies/ndv2-x1.json" \
        --collective "$coll" --inplace --time-limit 20 -o "$out" >/dev/null 2>&1 &&
        grep -q '"inplace":true' "$out"; then
        check "in-place $coll plan passes mpp_check --run" "$out" --run
    else
        echo "not ok - in-place $coll plan written with inplace true"
    fi
done

# determinism and the default
T="$ROOT/topologies/ndv2-x2.json"
"$S" -q --algo nccl "$T" --collective allreduce -o "$TMP/a.json" &&
    "$S" -q --algo nccl "$T" --collective allreduce -o "$TMP/b.json"
if cmp -s "$TMP/a.json" "$TMP/b.json"; then echo "ok - same input, same bytes"
else echo "not ok - same input, same bytes"; fi
expect "-o X.xml is still MSCCL XML" 0 "" -- "$S" -q --algo ring "$T" --collective allgather \
    -o "$TMP/a.xml"
if head -c 5 "$TMP/a.xml" | grep -q '<algo'; then echo "ok - the .xml output is XML"
else echo "not ok - the .xml output is XML"; fi
if python3 - "$TMP/a.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
keys = ["name", "collective", "protocol", "inplace", "reuse_resources", "gpus",
        "num_threads_per_block", "use_double_scratch_buffer", "buffer_alignment",
        "min_message_size", "max_message_size"]
assert list(p) == keys, list(p)
g = p["gpus"][0]
assert list(g) == ["id", "input_chunks", "output_chunks", "scratch_chunks", "threadblocks",
                   "channels", "remote_buffers", "semaphores"], list(g)
types = {c["channel_type"] for r in p["gpus"] for c in r["channels"]}
assert types == {"memory", "port"}, types   # two nodes: both kinds
EOF
then echo "ok - keys in the DSL's order; memory and port channels on two nodes"
else echo "not ok - keys in the DSL's order; memory and port channels on two nodes"; fi

expect "a range past 32-bit offsets is refused, naming the limit" 2 "32-bit offsets" -- \
    "$S" -q --algo ring "$T" --collective allgather --bytes 64G:128G -o "$TMP/big.json"
[ ! -e "$TMP/big.json" ] && echo "ok - nothing written on a refusal" ||
    echo "not ok - nothing written on a refusal"

# the checker fails on broken plans
mutate() {   # NAME PYTHON — apply PYTHON (p is the plan) to a.json, expect a failure
    local name=$1 code=$2 out
    python3 - "$TMP/a.json" "$TMP/m.json" "$code" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(p, open(sys.argv[2], "w"))
EOF
    if out=$(python3 "$CHK" --run --quiet "$TMP/m.json" 2>&1); then
        echo "not ok - checker fails: $name"
    else
        echo "ok - checker fails: $name ($(head -1 <<<"$out" | cut -d: -f2 | tr -d ' '))"
    fi
}
FIRST_TB='tb = p["gpus"][0]["threadblocks"][0]["ops"]'
mutate "a missing top-level key" 'del p["buffer_alignment"]'
mutate "a wait removed" "$FIRST_TB
i = [k for k, o in enumerate(tb) if o['name'] == 'wait'][-1]
del tb[i]"
mutate "a put into the wrong chunk" '
for g in p["gpus"]:
    for t in g["threadblocks"]:
        for o in t["ops"]:
            if o["name"] in ("put", "pwsf") and o["dst_buff"][0]["index"] > 0:
                o["dst_buff"][0]["index"] -= 1
                raise SystemExit(json.dump(p, open(sys.argv[2], "w")))'
mutate "a nop removed between a wait and a put" '
for g in p["gpus"]:
    for t in g["threadblocks"]:
        ops = t["ops"]
        for k in range(1, len(ops) - 1):
            if ops[k - 1]["name"] == "wait" and ops[k]["name"] == "nop" and \
                    ops[k + 1]["name"] == "put":
                del ops[k]
                raise SystemExit(json.dump(p, open(sys.argv[2], "w")))'
mutate "a wait moved after the copy it guards (caught when puts land late)" '
for g in p["gpus"]:
    for t in g["threadblocks"]:
        ops = t["ops"]
        for k in range(len(ops) - 2):
            if ops[k]["name"] == "wait" and ops[k + 1]["name"] == "nop" and \
                    ops[k + 2]["name"] in ("copy", "re"):
                ops.insert(k + 3, ops.pop(k))
                raise SystemExit(json.dump(p, open(sys.argv[2], "w")))'
mutate "a block over 64 ops" "$FIRST_TB
tb.extend([{'name': 'nop'}] * 64)"
mutate "a semaphore released twice" '
for g in p["gpus"]:
    for t in g["threadblocks"]:
        for k, o in enumerate(t["ops"]):
            if o["name"] == "sem_release":
                t["ops"].insert(k, dict(o))
                raise SystemExit(json.dump(p, open(sys.argv[2], "w")))'
mutate "a channel one side lacks" 'p["gpus"][0]["channels"][0]["connected_to"].append(1)'

# the checker against MSCCL++'s own plans
pass=0 fail=0 bad=""
flagged=$(grep -o '^\* `[^`]*\.json`' "$ROOT/tests/data/mscclpp/README.md" | tr -d '*` ' | sort -u)
for f in $(cd "$ROOT/tests/data/mscclpp" && find . -name '*.json' | sed 's|^\./||' | sort); do
    if python3 "$CHK" --quiet "$ROOT/tests/data/mscclpp/$f" >/dev/null 2>&1; then
        grep -qx "$f" <<<"$flagged" && bad="$bad $f(passes, flagged)"
        pass=$((pass + 1))
    else
        grep -qx "$f" <<<"$flagged" || bad="$bad $f(fails, not flagged)"
        fail=$((fail + 1))
    fi
done
if [ -z "$bad" ] && [ $pass -eq 59 ] && [ $fail -eq 22 ]; then
    echo "ok - checker: the corpus's 59 loadable plans pass, its 22 flagged ones fail"
else
    echo "not ok - checker on the corpus: $pass pass, $fail fail;$bad"
fi
