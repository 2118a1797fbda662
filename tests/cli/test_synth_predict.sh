#!/usr/bin/env bash
# tier: full  (every sketch x collective: make check runs it plain on a few
#              sketches, TACCL_FEW; make check-full on every one, and also
#              under the sanitizers)
# test_synth_predict.sh — the synthesizer's predicted time is the time the
# executor measures (the issue's acceptance test): for bundled sketches,
# taccl-synth writes predicted_us and taccl-run of that file, which
# performs the collective, reports a time within 0.5 % of it.
#
# The DGX-2 x2 sketch is the one this guards most: its ranks share NICs
# and every rank sends through one switch port to 15 peers, so the
# executor's first-come-first-served ports see the schedule's order only
# when the lowering chains each rank's sends and stage 2/3 plan with the
# executor's arbitration (it ran 6x slower than predicted before).  The
# chip sketch is an AllReduce (ReduceScatter then AllGather, issue 5).  A
# sketch whose collective sketch mode could not synthesize would be checked
# as an AllGather on its topology instead, and said so.
source "$(dirname "$0")/lib.sh"
S="$BIN/taccl-synth"
R="$BIN/taccl-run"
# each MILP stage's time limit: the prediction is the file's time whatever
# the solver reached, so make check's few sketches stop sooner (DGX-2 x2's
# sketch: 15 s at 5 s a stage)
TL=5
few && TL=2

# json_field FILE KEY — a number from a one-line JSON object
json_field() {
    python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(v if v is not None else "")' "$1" "$2" 2>/dev/null
}

# within_half_percent PREDICTED RUN — whether RUN is within 0.5 % of PREDICTED
within_half_percent() {
    python3 -c 'import sys; p, r = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if p > 0 and abs(r - p) / p <= 0.005 else 1)' "$1" "$2" 2>/dev/null
}

# agree SKETCH — synthesize with the sketch's topology, run, compare.  The
# sketch's own input_size, unless the ranks' buffers would pass 256 MiB in
# all: then 16 KiB chunks, so the data check stays quick.
agree() {
    local sk=$ROOT/sketches/$1.json name=$1 extra=() topo size
    read -r topo size < <(python3 - "$sk" "$ROOT" <<'PY'
import json, re, sys
sk = json.load(open(sys.argv[1]))
topo = sys.argv[2] + "/" + sk["topology"]
t = json.load(open(topo))
n = t.get("nodes", 1) * t["ranks_per_node"]
m = re.fullmatch(r"(\d+)\s*([KMG]?)i?B?", str(sk.get("input_size", "1M")))
size = int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]
chunks = n * sk.get("hyperparameters", {}).get("input_chunkup", 1)
print(topo, size if n * size <= 256 << 20 else chunks * 16384)
PY
)
    local out=$TMP/$name.xml
    if ! "$S" "$sk" "$topo" -o "$out" --size "$size" --time-limit "$TL" -q --json >"$TMP/$name.synth.json" 2>"$TMP/$name.err"; then
        if grep -q "not implemented yet" "$TMP/$name.err"; then
            extra=(--collective allgather)
            name="$name (as allgather)"
            "$S" "$sk" "$topo" -o "$out" --size "$size" --time-limit "$TL" -q --json "${extra[@]}" \
                >"$TMP/$1.synth.json" 2>"$TMP/$1.err"
        fi
    fi
    if [ ! -s "$out" ]; then
        echo "not ok - $name: taccl-synth wrote no schedule"
        sed 's/^/  | /' "$TMP/$1.err" | head -5
        return
    fi
    echo "ok - $name: synthesized at $size bytes"
    local pred run verified
    pred=$(json_field "$TMP/$1.synth.json" predicted_us)
    "$R" "$out" --json >"$TMP/$1.run.json" 2>/dev/null
    run=$(json_field "$TMP/$1.run.json" time_us)
    verified=$(json_field "$TMP/$1.run.json" verified)
    if [ "$verified" = "True" ]; then echo "ok - $name: taccl-run verifies it"
    else echo "not ok - $name: taccl-run does not verify it"; fi
    if within_half_percent "$pred" "$run"; then
        echo "ok - $name: executed $run us within 0.5% of predicted $pred us"
    else
        echo "not ok - $name: executed ${run:-?} us, predicted ${pred:-?} us (more than 0.5% apart)"
    fi
}

# every bundled sketch (the small-chunk NDv2 ones, ndv2-x2-sk-2/sk-3, are
# where stage 3 may try groups that wait on their own data: those must be
# rejected, not end the synthesis)
for f in "$ROOT"/sketches/*.json; do
    sketch_skip "$(basename "$f" .json)" "$f" 2 && continue
    agree "$(basename "$f" .json)"
done

# TE-CCL's model: alpha as a delay (the topology with "alpha_mode":
# "delay" and no runtime latency), where a hop frees its link, port or NIC
# and its sender after its bytes and lands alpha later.  Stages 2 and 3 plan with that rule, so the
# prediction is still the executor's time, for an AllGather and for an
# AllReduce (reductions), on one NIC per node and on shared NICs; and TACCL's
# NDv2 x2 sketch at 64 KiB reaches TE-CCL's own figure in TE-CCL's model,
# 10.53 GB/s (6.22 us; 8.48 us while the stages planned alpha as held).
delay_topo() {
    python3 - "$ROOT/topologies/$1.json" "$TMP/$1-delay.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["name"] += "-delay"
t["alpha_mode"] = "delay"
t.pop("runtime_latency", None)      # TE-CCL's model has no runtime of its own
json.dump(t, open(sys.argv[2], "w"))
PY
}
delay_agree() {     # NAME TOPO SIZE [COLLECTIVE]
    local name=$1-delay-$3 out=$TMP/$1-delay-$3.xml
    delay_topo "$2"
    if ! "$S" "$ROOT/sketches/$1.json" "$TMP/$2-delay.json" --size "$3" ${4:+--collective $4} \
            --time-limit "$TL" -q --json -o "$out" >"$TMP/$name.synth.json" 2>"$TMP/$name.err"; then
        echo "not ok - $name: taccl-synth failed"
        sed 's/^/  | /' "$TMP/$name.err" | head -5
        return
    fi
    "$R" "$out" --json >"$TMP/$name.run.json" 2>/dev/null
    local pred run verified
    pred=$(json_field "$TMP/$name.synth.json" predicted_us)
    run=$(json_field "$TMP/$name.run.json" time_us)
    verified=$(json_field "$TMP/$name.run.json" verified)
    if [ "$verified" = "True" ] && within_half_percent "$pred" "$run"; then
        echo "ok - $name: alpha as a delay: verified, executed $run us within 0.5% of predicted $pred us"
    else
        echo "not ok - $name: alpha as a delay: verified $verified, executed ${run:-?} us, predicted ${pred:-?} us"
    fi
}
delay_agree ndv2-x2-sk-1 ndv2-x2 64K
run_64k=$(json_field "$TMP/ndv2-x2-sk-1-delay-64K.run.json" time_us)
if python3 -c 'import sys; sys.exit(0 if 65536 / float(sys.argv[1]) / 1e3 >= 10.53 else 1)' "$run_64k" 2>/dev/null; then
    echo "ok - ndv2-x2-sk-1 at 64 KiB, alpha as a delay: $run_64k us, at least TE-CCL's 10.53 GB/s"
else
    echo "not ok - ndv2-x2-sk-1 at 64 KiB, alpha as a delay: ${run_64k:-?} us, below TE-CCL's 10.53 GB/s (6.22 us)"
fi
delay_agree ndv2-x2-sk-1 ndv2-x2 1M allreduce
if few; then
    echo "# skip - dgx2-x2-sk-1-delay-64K: make check runs alpha as a delay on NDv2 x2 (check-full on DGX-2 x2 too)"
else
    delay_agree dgx2-x2-sk-1 dgx2-x2 64K
fi

# Stages 2 and 3 plan the order in which a busy port or NIC serves the
# transfers waiting for it, and the executor must serve them in that order
# (oldest request first): the time the stages planned is the time run.  On
# DGX-2 x2 with every GPU through the NIC it shares (the plan's proposed
# rails sketch, chunks cut in two; tests/data/dgx2-x2-rails-cup2.json,
# written by `taccl-synth --plan topologies/dgx2-x2.json --collective
# allgather`), AllGather at 1 GiB: stage 3 plans 8074 us; served by rank
# instead, a late request took a NIC first and the run took 9417 us.
rails=$ROOT/tests/data/dgx2-x2-rails-cup2.json
# Judged in steps (--steps), the timing stage 3 plans: the runtimes' passes,
# by which taccl-synth judges its candidates by default, pipeline each step
# (docs/design.md section 8).
if "$S" "$rails" "$ROOT/topologies/dgx2-x2.json" --collective allgather --size 1G -q --json \
        --steps -o "$TMP/rails.xml" >"$TMP/rails.synth.json" 2>"$TMP/rails.err"; then
    plan=$(json_field "$TMP/rails.synth.json" stage3_us)
    run=$("$R" "$TMP/rails.xml" --steps --no-data --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["time_us"])' 2>/dev/null)
    if within_half_percent "$plan" "$run"; then
        echo "ok - dgx2-x2 rails chunkup 2 AllGather 1 GiB: ran $run us, as stage 3 planned ($plan us)"
    else
        echo "not ok - dgx2-x2 rails chunkup 2 AllGather 1 GiB: ran ${run:-?} us, stage 3 planned ${plan:-?} us"
    fi
else
    echo "not ok - dgx2-x2 rails chunkup 2 AllGather 1 GiB: taccl-synth failed"
    sed 's/^/  | /' "$TMP/rails.err" | head -5
fi

# Where every GPU may also cross to its NIC partner's counterpart (the
# plan's proposed rails-group sketch; tests/data/dgx2-x2-rails-group-cup2.json,
# written by `taccl-synth --plan topologies/dgx2-x2.json --collective
# reducescatter`), stage 1's spare-NIC moves (docs/design.md section 6)
# send half of the chunks across twice, and the ReduceScatter reversed from
# that AllGather runs at 1 GiB in 8072 us: at least 0.98 of the bound
# (7925 us), where plain rails reach 0.975.  On DGX-2 x2 without the
# runtime's latency: with it, stage 2 orders this routing 7 % above its
# relaxed makespan and the lowered file runs in 11516 us (its tbs wait on
# receives that land later); taccl-synth keeps the packed trees there,
# 8632 us in the passes against 8606 without it.
group=$ROOT/tests/data/dgx2-x2-rails-group-cup2.json
python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); t.pop("runtime_latency")
json.dump(t, open(sys.argv[2], "w"))' "$ROOT/topologies/dgx2-x2.json" "$TMP/dgx2-x2-bare.json"
if "$S" "$group" "$TMP/dgx2-x2-bare.json" --collective reducescatter --size 1G -q \
        --steps -o "$TMP/group.xml" 2>"$TMP/group.err"; then
    # judged and timed in steps, the timing stages 2 and 3 optimise: in the
    # runtimes' passes this schedule takes 9470 us, 0.837 of the bound, as
    # its NICs are busy from the first transfer to the last (docs/design.md
    # section 8), and taccl-synth's default, judging in the passes, keeps
    # another candidate
    read -r run bound < <("$R" "$TMP/group.xml" --topo "$TMP/dgx2-x2-bare.json" --steps --no-data --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["time_us"], d["lower_bound_us"])' 2>/dev/null)
    if python3 -c "import sys; sys.exit(0 if $bound / $run >= 0.98 else 1)" 2>/dev/null; then
        echo "ok - dgx2-x2 rails-group chunkup 2 ReduceScatter 1 GiB: $run us, at least 0.98 of the bound ($bound us)"
    else
        echo "not ok - dgx2-x2 rails-group chunkup 2 ReduceScatter 1 GiB: ${run:-?} us, below 0.98 of the bound (${bound:-?} us)"
    fi
else
    echo "not ok - dgx2-x2 rails-group chunkup 2 ReduceScatter 1 GiB: taccl-synth failed"
    sed 's/^/  | /' "$TMP/group.err" | head -5
fi
