#!/usr/bin/env bash
# tier: plain  (make check runs it plain only: nine files taccl-run reads like
#              any other (test_interop.sh, test_run_cli.sh); make check-full
#              and make check-asan also sanitized)
# test_case_study.sh — the chip/cluster case study's nine schedules run on
# their own topologies, give the right result and the synchronisation counts
# the case study derives (docs/design.md §4): one ChipSync per chip-to-chip
# transfer on the 4-chip examples, one ClusterSync per cluster-to-cluster
# transfer on the 2-cluster examples, none of the other kind.  In f32 the
# direct (cyclic) AllReduce may leave replicas that differ, while
# ReduceScatter then AllGather leaves them bit-identical.
#
# The schedules come from scripts/gen_case_study.py; they carry their
# topology, so taccl-run gets no other argument than the file.
source "$(dirname "$0")/lib.sh"

# jget FILE KEY — print the JSON value of top-level KEY of FILE: true, false,
# null, a number (integral floats as integers) or a quoted string;
# "<missing>" or "<bad json: ...>" when it cannot.
jget() {
    python3 -c '
import json, sys
try:
    with open(sys.argv[1]) as f:
        d = json.load(f)
except Exception as e:
    print("<bad json: %s>" % str(e).replace("\n", " ")); sys.exit(0)
if not isinstance(d, dict) or sys.argv[2] not in d:
    print("<missing>"); sys.exit(0)
v = d[sys.argv[2]]
if isinstance(v, float) and v.is_integer():
    v = int(v)
print(json.dumps(v))' "$1" "$2"
}

pass() { echo "ok - $1"; }
fail() {
    echo "not ok - $1"
    shift
    local line
    for line in "$@"; do echo "  $line"; done
}

# run_json NAME FILE ARGS... — run taccl-run FILE ARGS... --json, keep stdout
# in $TMP/NAME.json and stderr in $TMP/NAME.err; sets RC.
run_json() {
    local name=$1 file=$2
    shift 2
    "$BIN/taccl-run" "$file" "$@" --json >"$TMP/$name.json" 2>"$TMP/$name.err"
    RC=$?
}

# show NAME — what a failing check prints under itself.
show() {
    echo "exit: $RC"
    sed 's/^/stdout | /' "$TMP/$1.json" | head -8
    sed 's/^/stderr | /' "$TMP/$1.err" | head -8
}

# want NAME KEY VALUE — check one JSON field of run NAME.
want() {
    local got
    got=$(jget "$TMP/$1.json" "$2")
    if [ "$got" = "$3" ]; then
        pass "$1: $2 = $3"
    else
        fail "$1: $2 = $3" "got: $got" "$(show "$1")"
    fi
}

# case_study NAME NGPUS CHIP_SYNCS CLUSTER_SYNCS
case_study() {
    local name=$1 ngpus=$2 chip=$3 cluster=$4
    local file="$ROOT/schedules/$name.xml"
    if [ ! -f "$file" ]; then
        fail "$name: schedule exists" "missing: $file (run python3 scripts/gen_case_study.py)"
        return
    fi
    run_json "$name" "$file"
    if [ "$RC" -eq 0 ] && [ "$(jget "$TMP/$name.json" verified)" = true ]; then
        pass "$name: runs and verifies"
    else
        fail "$name: runs and verifies" "$(show "$name")"
    fi
    want "$name" ngpus "$ngpus"
    want "$name" chip_syncs "$chip"
    want "$name" cluster_syncs "$cluster"
}

# The files as the generator writes them: first line the <algo> element
# (the runtimes' tokenizer takes no prolog), and the same bytes every run.
if python3 "$ROOT/scripts/gen_case_study.py" --outdir "$TMP/gen1" --quiet &&
   python3 "$ROOT/scripts/gen_case_study.py" --outdir "$TMP/gen2" --quiet &&
   [ "$(ls "$TMP/gen1" | grep -c '^cs-.*\.xml$')" -eq 9 ] &&
   diff -r "$TMP/gen1" "$TMP/gen2" >/dev/null; then
    pass "generator writes nine schedules, byte-identical across runs"
else
    fail "generator writes nine schedules, byte-identical across runs"
fi
bad=""
for f in "$ROOT"/schedules/cs-*.xml; do
    [ -f "$f" ] || continue
    head -1 "$f" | grep -q '^<algo ' || bad="$bad $(basename "$f")"
done
if [ -z "$bad" ]; then
    pass "case-study schedules start with the <algo> element"
else
    fail "case-study schedules start with the <algo> element" "not:$bad"
fi

#           name                          ngpus chip cluster
case_study cs-chip-reducescatter          4     12   0
case_study cs-chip-allgather              4     12   0
case_study cs-chip-rs-ag                  4     24   0
case_study cs-chip-allreduce-direct       4     12   0
case_study cs-chip-allreduce-butterfly    4     8    0
case_study cs-cluster-reducescatter       2     0    2
case_study cs-cluster-allgather           2     0    2
case_study cs-cluster-rs-ag               2     0    4
case_study cs-cluster-allreduce           2     0    2

# make check (few) runs 6 seeds, make check-full 20
NSEEDS=20
few && NSEEDS=6

# f32: the direct AllReduce sums in a different order on every chip
# ((0+1)+2)+3 on chip 0, ((1+2)+3)+0 on chip 1, ...), so some seed must give
# replicas that differ; every run must still verify within the tolerance.
differ=0 unverified=""
for seed in $(seq 1 "$NSEEDS"); do
    run_json direct-f32 "$ROOT/schedules/cs-chip-allreduce-direct.xml" --dtype f32 --seed "$seed"
    [ "$RC" -eq 0 ] && [ "$(jget "$TMP/direct-f32.json" verified)" = true ] || unverified="$unverified $seed"
    [ "$(jget "$TMP/direct-f32.json" replicas_identical)" = false ] && differ=$((differ + 1))
done
if [ "$differ" -gt 0 ]; then
    pass "direct AllReduce f32: replicas differ for some seed ($differ of $NSEEDS)"
else
    fail "direct AllReduce f32: replicas differ for some seed" "identical for all seeds 1..$NSEEDS" \
        "$(show direct-f32)"
fi
if [ -z "$unverified" ]; then
    pass "direct AllReduce f32: verified within tolerance, seeds 1..$NSEEDS"
else
    fail "direct AllReduce f32: verified within tolerance, seeds 1..$NSEEDS" "failed seeds:$unverified" \
        "$(show direct-f32)"
fi

# f32: ReduceScatter then AllGather computes each shard once, so the
# replicas are bit-identical for every seed.
bad=""
for seed in $(seq 1 "$NSEEDS"); do
    run_json rsag-f32 "$ROOT/schedules/cs-chip-rs-ag.xml" --dtype f32 --seed "$seed"
    if [ "$RC" -ne 0 ] || [ "$(jget "$TMP/rsag-f32.json" verified)" != true ] ||
       [ "$(jget "$TMP/rsag-f32.json" replicas_identical)" != true ]; then
        bad="$bad $seed"
        show rsag-f32 >"$TMP/rsag-f32.last"
    fi
done
if [ -z "$bad" ]; then
    pass "chip ReduceScatter then AllGather f32: verified, replicas identical, seeds 1..$NSEEDS"
else
    fail "chip ReduceScatter then AllGather f32: verified, replicas identical, seeds 1..$NSEEDS" \
        "failed seeds:$bad" "$(cat "$TMP/rsag-f32.last")"
fi
