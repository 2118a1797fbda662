#!/usr/bin/env bash
# tier: plain
# test_bench_plan_report.sh — scripts/bench_plan_report.py (the yardstick
# page, bench/yardstick.md) on saved sweeps made up here: a call the plan
# leaves to NCCL where NCCL runs what its file is not (nccl_estimate_us, the
# variant nccl-est) takes NCCL's own estimate, both as the plan's time and as
# NCCL's beside the baselines; without the estimate, NCCL's file's time.
source "$(dirname "$0")/lib.sh"

python3 - "$ROOT/scripts/bench_plan_report.py" "$TMP" <<'PY'
import json, subprocess, sys
script, tmp = sys.argv[1], sys.argv[2]
M = 1 << 20
def row(size, t, nccl, est=None, fallback=False, xmin=None):
    r = {"size_bytes": size, "time_us": t, "nccl_us": nccl, "nccl_estimate_us": est,
         "nccl_fallback": fallback}
    if xmin is not None:
        r["x_nccl_min"] = xmin
    return r
# 1 MiB: a file, 1.2x NCCL's ring file; 4 MiB: left to NCCL, whose file takes
# 100 us but whose NVLS estimate is 40; the rsag baseline takes 50 there
plan = [row(M, 50.0, 60.0, xmin=1.1), row(4 * M, 100.0, 100.0, est=40.0, fallback=True)]
rsag = [{"size_bytes": M, "time_us": 70.0}, {"size_bytes": 4 * M, "time_us": 50.0}]
saved = {"rows": [["m", "allreduce", "plan", "1.0", "outofplace", "p"],
                  ["m", "allreduce", "rsag", "-", "outofplace", "b"]],
         "sweeps": {"p": plan, "b": rsag}, "budget": 60}
json.dump(saved, open(tmp + "/s.json", "w"))
out = subprocess.run([sys.executable, script, "--json", tmp + "/s.json"],
                     capture_output=True, text=True).stdout
line = [l for l in out.splitlines() if l.startswith("| m | allreduce | out of place")]
ok = len(line) == 1
cells = line[0].split("|") if ok else []
# sizes 2, >= NCCL 2, in every variant 2, least x 1.10 at 1M, >= every baseline 2,
# worst size: 4 MiB at 1.000 against NCCL's estimate (what the call takes), 1 fallback size
want = [" m ", " allreduce ", " out of place ", " 1.0 ", " 2 ", " 2 ", " 2 ", " 1.10 at 1M ",
        " 2 ", " 1.000 at 4M (nccl-est) ", " 1 "]
print(("ok - the report counts the call left to NCCL at NCCL's own estimate" if ok and
       cells[1:12] == want else
       "not ok - the report counts the call left to NCCL at NCCL's own estimate: %s" % line))
# without the estimate, the call left to NCCL is NCCL's file's time: the
# rsag baseline is faster there (100 / 50)
plan[1]["nccl_estimate_us"] = None
json.dump(saved, open(tmp + "/s.json", "w"))
out = subprocess.run([sys.executable, script, "--json", tmp + "/s.json"],
                     capture_output=True, text=True).stdout
line = [l for l in out.splitlines() if l.startswith("| m | allreduce | out of place")]
print("ok - without it, NCCL's file's time (2.000 against rsag)" if line and
      " 2.000 at 4M (rsag) " in line[0].split("|") else
      "not ok - without it, NCCL's file's time: %s" % line)
PY
