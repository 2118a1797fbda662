#!/usr/bin/env bash
# tier: plain  (make check runs it plain only: its programs' code paths the
#              sanitized scripts take; make check-full also sanitized)
# test_predict_random.sh — the property behind every predicted time: on
# topologies nobody wrote by hand, taccl-synth's prediction is the time
# taccl-run measures for the file it wrote, within 0.5 %.
#
# scripts/predict_table.py makes 30 seeded random single-node topologies
# (a ring plus random chords, random alpha, bandwidth and lanes, sometimes
# a switch), each with a random sketch, collective and size, synthesizes,
# runs the schedule and prints a row per case; each row becomes one check
# here, naming the case.  The same seeds give the same cases, so a failure
# reproduces with `scripts/predict_table.py --no-bundled --random 30`.
source "$(dirname "$0")/lib.sh"

python3 "$ROOT/scripts/predict_table.py" --bin "$BIN" --no-bundled --random 30 --seed 1 \
    --time-limit 2 >"$TMP/table.md" 2>"$TMP/err"
rc=$?
python3 - "$TMP/table.md" <<'PY'
import sys
rows = 0
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split("|")[1:-1]]
    if len(f) < 6 or not f[0].startswith("rand-"):
        continue
    rows += 1
    name = f"{f[0]} {f[1]} {f[2]} B"
    if f[3] == "-":
        print(f"not ok - {name}: {f[5]}")
        continue
    err = float(f[5].rstrip(" %"))
    ok = abs(err) <= 0.5
    print(f"{'ok' if ok else 'not ok'} - {name}: predicted {f[3]} us, executed {f[4]} us "
          f"({err:+.2f} %)")
if rows != 30:
    print(f"not ok - the table has {rows} cases, wanted 30")
PY
if [ "$rc" -ne 0 ]; then
    echo "not ok - scripts/predict_table.py ran (exit $rc)"
    sed 's/^/  | /' "$TMP/err" | tail -5
fi
