#!/usr/bin/env bash
# mpp_matrix.sh — write an MSCCL++ plan for every bundled GPU topology x
# {allgather, reducescatter, allreduce} x {--algo ring, --algo nccl, each
# bundled sketch of that topology} with taccl-synth --target mscclpp, run
# each plan through taccl-run with data, and print one row per case and a
# tally of exit codes (docs/mscclpp.md §12.8).
#
#   scripts/mpp_matrix.sh [--min-ranks N] [--max-ranks N] [--only REGEX] [--size S]
#                         [--time-limit SECONDS] [--check] [BIN]
#
#   --min-ranks N     topologies of at least N ranks (default 1)
#   --max-ranks N     topologies of at most N ranks (default 64; the one of
#                     1024 ranks is left out at any setting below 1024)
#   --only REGEX      cases whose "TOPO SOURCE COLLECTIVE" matches REGEX
#   --size S          taccl-run --size (default 1M)
#   --time-limit S    the sketches' synthesis time limit (default 20)
#   --check           also run scripts/mpp_check.py on each plan (with --run
#                     up to 16 ranks) and say chk=RC; a case where it and
#                     taccl-run disagree (one passes, the other fails) is
#                     counted and makes the exit 1
#   BIN               directory of taccl-synth and taccl-run (default build/bin)
#
# Every run gets --topo of its topology (a plan carries none).  Row:
#   TOPO SOURCE[@SIZE] COLLECTIVE synth=RC run=RC  first line of the failing tool
# where @SIZE says the run was at the size taccl-run proposed instead of
# --size, because MSCCL++ refuses a size whose 16-byte units do not divide
# into the plan's chunks (execution_plan.cc checkMessageSize).
# The topologies whose device is not a GPU (cs-*: "kind": "chip") are left
# out, each said on a "# skip" line: taccl-synth refuses MSCCL++ plans for
# them (MSCCL++ runs on GPUs).  Exit 0 when every case wrote a plan that
# taccl-run verified (run=0), else 1.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
min=1 max=64 only="" size=1M tl=20 bin=$root/build/bin check="" 
while [ $# -gt 0 ]; do
    case "$1" in
    --min-ranks) min=$2; shift 2 ;;
    --max-ranks) max=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --time-limit) tl=$2; shift 2 ;;
    --check) check=1; shift ;;
    -*) echo "mpp_matrix.sh: unknown option '$1'" >&2; exit 2 ;;
    *) bin=$1; shift ;;
    esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# info TOPO — "RANKS KIND"
info() {
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))
print(t.get("nodes", 1) * t["ranks_per_node"], t.get("device", {}).get("kind", "gpu"))' "$1"
}

total=0 ok=0 wrong=0 refused=0 synthfail=0 disagree=0
# one TOPO SOURCE COLL SYNTH-ARGS...
one() {
    local topo=$1 src=$2 coll=$3 tn plan msg rc rrc line at chk="" crc
    shift 3
    tn=$(basename "$topo" .json)
    if [ -n "$only" ] && ! [[ "$tn $src $coll" =~ $only ]]; then return; fi
    total=$((total + 1))
    plan=$tmp/plan.json
    rm -f "$plan"
    msg=$("$bin/taccl-synth" -q "$@" "$topo" --collective "$coll" --target mscclpp \
        -o "$plan" 2>&1)
    rc=$?
    if [ $rc -ne 0 ]; then
        synthfail=$((synthfail + 1))
        printf '%-14s %-24s %-13s synth=%d run=-  %s\n' "$tn" "$src" "$coll" $rc \
            "$(head -1 <<<"$msg" | cut -c1-160)"
        return
    fi
    at=$size
    msg=$("$bin/taccl-run" "$plan" --topo "$topo" --size "$size" -q 2>&1)
    rrc=$?
    # MSCCL++ takes only sizes whose 16-byte units divide into the plan's
    # chunks (execution_plan.cc checkMessageSize): run at the next one
    if [ $rrc -eq 2 ] && at=$(grep -o 'try [0-9]*$' <<<"$msg" | head -1 | cut -d' ' -f2) &&
        [ -n "$at" ]; then
        msg=$("$bin/taccl-run" "$plan" --topo "$topo" --size "$at" -q 2>&1)
        rrc=$?
        src="$src@$at"
    fi
    case $rrc in 0) ok=$((ok + 1)) ;; 1) wrong=$((wrong + 1)) ;; *) refused=$((refused + 1)) ;; esac
    line=""
    if [ -n "$check" ]; then
        local run=--run
        [ "$n" -le 16 ] || run=""
        python3 "$root/scripts/mpp_check.py" --quiet $run "$plan" >"$tmp/chk" 2>&1
        crc=$?
        chk=" chk=$crc"
        if { [ $crc -eq 0 ] && [ $rrc -ne 0 ]; } || { [ $crc -ne 0 ] && [ $rrc -eq 0 ]; }; then
            disagree=$((disagree + 1))
            chk="$chk DISAGREE"
            [ $rrc -ne 0 ] || msg=$(head -1 "$tmp/chk")
        fi
    fi
    [ $rrc -eq 0 ] && [ -z "${chk#* chk=0}" ] ||
        line=$(grep -m1 -v "^\s*$" <<<"${msg//$plan/PLAN}" | cut -c1-200)
    printf '%-14s %-24s %-13s synth=0 run=%d%s  %s\n' "$tn" "$src" "$coll" $rrc "$chk" "$line"
}

for topo in "$root"/topologies/*.json; do
    tn=$(basename "$topo" .json)
    read -r n kind < <(info "$topo")
    if [ "$kind" != gpu ]; then
        echo "# skip $tn: device kind $kind (MSCCL++ runs on GPUs; taccl-synth refuses)"
        continue
    fi
    if [ "$n" -gt "$max" ] || [ "$n" -lt "$min" ]; then
        echo "# skip $tn: $n ranks (outside --min-ranks $min --max-ranks $max)"
        continue
    fi
    sks=$(cd "$root" && grep -l "\"topology\": *\"topologies/$tn.json\"" sketches/*.json 2>/dev/null)
    for coll in allgather reducescatter allreduce; do
        one "$topo" ring "$coll" --algo ring
        one "$topo" nccl "$coll" --algo nccl
        for sk in $sks; do
            one "$topo" "$(basename "$sk" .json)" "$coll" "$root/$sk" --time-limit "$tl"
        done
    done
done
echo "# $total cases: $ok verified (run=0), $wrong wrong or hazard (run=1)," \
    "$refused refused by taccl-run (run=2), $synthfail not written (synth!=0)" \
    "${check:+; mpp_check.py disagrees with taccl-run on $disagree}"
[ "$ok" -eq "$total" ] && [ "$disagree" -eq 0 ]
