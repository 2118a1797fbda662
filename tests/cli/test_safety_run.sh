#!/usr/bin/env bash
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
