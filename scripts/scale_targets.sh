#!/usr/bin/env bash
# scale_targets.sh — the targets of the issue on cluster scale (issue 42
# item 5), measured in one script (make scale-targets): on DGX H100 x16,
# DGX A100 x16 (128 GPUs) and DGX H100 x128 (1024 GPUs; gen_topologies.py),
# for AllReduce, ReduceScatter and AllGather:
#
#   1. the plan: taccl-synth --plan TOPO --collective C --time-budget B
#      (B = 600 s at 128 GPUs, 1800 s at 1024: the issue's budgets), its
#      wall time and peak resident memory (/usr/bin/time -v);
#   2. the plan run beside NCCL's schedule: taccl-run PLANDIR --sweep 1K:1G
#      --outofplace and --inplace, --no-data (the plan verified its files
#      with data; NCCL's schedule is the plan's nccl/nccl-SIZE.xml, what
#      taccl-synth --algo nccl gives at that size);
#   3. a table per cluster and collective: the pick and its x NCCL (NCCL's
#      time over the pick's, taccl-run's default timing) at every power of
#      two from 1 KiB to 1 GiB in both modes, and the worst x NCCL over the
#      model variants; then a met / not met line per target: the plan within
#      its budget, and the pick at least as fast as NCCL's schedule at every
#      size in both modes (x NCCL >= 1; a size NCCL serves is 1).
#
# The page (markdown) and its JSON are written again after every case, so
# a run stopped part way leaves the cases it finished.
#
# usage: scripts/scale_targets.sh [BIN_DIR] [--clusters LIST] [--collectives LIST]
#                                 [--page FILE] [--timeout S] [--budget S]
#        scripts/scale_targets.sh --render JSON [--page FILE]
#   --clusters L     of dgx_h100-16, dgx_a100-16, dgx_h100-128 (default all,
#                    in that order)
#   --collectives L  of allreduce, reducescatter, allgather (default all)
#   --page FILE      the page (default build/bench/scale-targets.md; its JSON
#                    beside it, .json for .md)
#   --timeout S      a plan or sweep still going after S seconds is stopped
#                    and shown as such (default: twice the plan's budget)
#   --budget S       every plan's --time-budget S instead of the issue's (to
#                    try the script)
#   --logs DIR       keep each plan's stderr (its phases and their seconds)
#                    as DIR/CLUSTER-COLLECTIVE.err
#   --render JSON    write the page again from the JSON of an earlier run
#                    (its command, date and commit kept), measuring nothing
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
clusters=dgx_h100-16,dgx_a100-16,dgx_h100-128
colls=allreduce,reducescatter,allgather
page=$root/build/bench/scale-targets.md
limit= force= from= logs=
cmd="scripts/scale_targets.sh $*"
while [ $# -gt 0 ]; do
    case $1 in
        --clusters) clusters=$2; shift 2 ;;
        --collectives) colls=$2; shift 2 ;;
        --page) page=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        --budget) force=$2; shift 2 ;;
        --render) from=$2; shift 2 ;;
        --logs) logs=$2; mkdir -p "$logs" || exit 2; shift 2 ;;
        *) bin=$(cd "$1" && pwd); shift ;;
    esac
done
mkdir -p "$(dirname "$page")" || exit 2
json=${page%.md}.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$(date -u '+%Y-%m-%d %H:%M UTC')
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
cores=$(nproc)
: >"$work/cases.jsonl"

# measure OUT CMD...: "seconds peak_MiB status" into OUT (status: the exit
# code, or "timeout")
measure() {
    local out=$1 lim=$2
    shift 2
    /usr/bin/time -v -o "$work/tv" timeout "$lim" "$@" >"$work/stdout" 2>"$work/stderr"
    local rc=$? secs kb
    secs=$(sed -n 's/^\tElapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/tv" |
           awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    kb=$(sed -n 's/^\tMaximum resident set size (kbytes): //p' "$work/tv")
    [ $rc -eq 124 ] && rc=timeout
    echo "${secs:-0} $(awk -v k="${kb:-0}" 'BEGIN { printf "%.1f", k / 1024 }') $rc" >"$out"
}

# render: the page and its JSON from $work/cases.jsonl (every case so far)
render() {
    python3 - "$work/cases.jsonl" "$page" "$json" "$cmd" "$started" "$commit" \
        "$cores" <<'EOF'
import json, sys
cases = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
page, jsonf, cmd, started, commit, cores = sys.argv[2:8]
NAMES = {"dgx_h100": "DGX H100", "dgx_a100": "DGX A100"}
COLL = {"allreduce": "AllReduce", "reducescatter": "ReduceScatter", "allgather": "AllGather"}
def cname(c):
    fam, n = c["cluster"].rsplit("-", 1)
    return "%s x%s" % (NAMES.get(fam, fam), n)
def size(b):
    for u, k in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= k and b % k == 0:
            return "%d %siB" % (b // k, u)
    return "%d B" % b
def x(v):
    return "-" if v is None else "%.3f" % v
out = ["# Cluster-scale targets (issue 42 item 5)", "",
       "Measured by `%s` (`make scale-targets`), started %s, commit %s, %s cores shared with "
       "other work: each plan is `taccl-synth --plan TOPO --collective C --time-budget B` (B = 600 s "
       "at 128 GPUs, 1800 s at 1024; TOPO from `scripts/gen_topologies.py`), run with `taccl-run "
       "PLANDIR --sweep 1K:1G --outofplace|--inplace --no-data` beside NCCL's schedule (the plan's "
       "`nccl/`, `taccl-synth --algo nccl` at each size). x NCCL is NCCL's time over the pick's by "
       "taccl-run's default timing (the runtimes' tile passes); 1.000 where NCCL serves the size "
       "(no file; in brackets why, from plan.json: `file limit` the legacy runtime's 4 files, "
       "`NCCL fastest`, `not in every variant`, `time budget`); worst: the least x NCCL over "
       "the model variants (docs/design.md section 4)."
       % (cmd.strip(), started, commit, cores), ""]
summary = []
for c in cases:
    name = "%s, %s (%d GPUs)" % (cname(c), COLL.get(c["collective"], c["collective"]), c["ranks"])
    out += ["## " + name, ""]
    ok_plan = c["plan_status"] == "0" and c["plan_wall_s"] <= c["budget_s"]
    out.append("Plan: %.0f s wall of a %.0f s budget, peak %.0f MiB, %d file%s, %d left out by "
               "the budget (plan.json's skipped)%s." % (
                   c["plan_wall_s"], c["budget_s"], c["plan_peak_mib"], len(c["files"]),
                   "" if len(c["files"]) == 1 else "s", c["skipped"],
                   "" if c["plan_status"] == "0" else "; FAILED (%s): %s" % (
                       c["plan_status"], c["plan_error"])))
    out.append("")
    o, i = c["outofplace"], c["inplace"]
    out += ["| size | out of place: pick | x NCCL | worst | in place: pick | x NCCL | worst |",
            "|---|---|---|---|---|---|---|"]
    byo = {r["size_bytes"]: r for r in o["rows"]}
    byi = {r["size_bytes"]: r for r in i["rows"]}
    def pick(r):
        if not r:
            return "-"
        if r["picked"]:
            return "`%s`" % r["picked"]
        # why NCCL serves it (plan.json's reason, as taccl-run DIR gives it)
        w = r["why"] or ""
        for key, short in (("dropped:", "file limit"), ("NCCL's schedule is the fastest",
                           "NCCL fastest"), ("time budget", "time budget"),
                           ("in every model variant", "not in every variant"),
                           ("no candidate", "no candidate")):
            if key in w:
                return "NCCL (%s)" % short
        return "NCCL"
    def ratio(r):
        if not r:
            return None
        return 1.0 if not r["picked"] else r["x_nccl"]
    low = []
    for b in sorted(set(byo) | set(byi)):
        ro, ri = byo.get(b), byi.get(b)
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            size(b), pick(ro), x(ratio(ro)), x(ro and ro["x_nccl_min"]), pick(ri), x(ratio(ri)),
            x(ri and ri["x_nccl_min"])))
        for mode, r in (("out of place", ro), ("in place", ri)):
            v = ratio(r)
            if v is None or v < 1 - 1e-9 or (r and not r["verified"]):
                low.append("%s %s (%s)" % (size(b), mode, x(v)))
    nsizes = len(byo) + len(byi)
    ok_pick = nsizes == 42 and not low
    for mode, m in (("out of place", o), ("in place", i)):
        if m["sweep_status"] not in ("0", "-"):
            out.append("")
            out.append("taccl-run --sweep %s: exit %s%s" % (mode, m["sweep_status"],
                       ": " + m["error"] if m["error"] else ""))
    out.append("")
    out.append("- the plan within its budget: %s (%.0f s of %.0f s)" % (
        "met" if ok_plan else "not met", c["plan_wall_s"], c["budget_s"]))
    out.append("- the pick at least as fast as NCCL's schedule at every power of two 1 KiB-1 GiB, "
               "both modes: %s%s" % ("met" if ok_pick else "not met",
                                     "" if ok_pick else " (%s%s)" % (
                                         "; ".join(low) if low else "",
                                         "" if nsizes == 42 else
                                         "%s%d of 42 sizes run" % ("; " if low else "", nsizes))))
    out.append("")
    summary.append("| %s | %s | %.0f s / %.0f s: %s | %.0f | %s |" % (
        cname(c), COLL.get(c["collective"], c["collective"]), c["plan_wall_s"], c["budget_s"],
        "met" if ok_plan else "not met", c["plan_peak_mib"], "met" if ok_pick else "not met"))
out += ["## Targets", "",
        "| cluster | collective | plan wall / budget | peak MiB | pick >= NCCL at every size, "
        "both modes |", "|---|---|---|---|---|"] + summary + [""]
open(page, "w").write("\n".join(out))
json.dump({"command": cmd.strip(), "started": started, "commit": commit, "cores": cores,
           "cases": cases},
          open(jsonf, "w"), indent=1)
EOF
}

if [ -n "$from" ]; then
    vars=$(python3 - "$from" "$work/cases.jsonl" <<'EOF'
import json, shlex, sys
j = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as o:
    for c in j["cases"]:
        o.write(json.dumps(c) + "\n")
for k, v in (("command", "cmd"), ("started", "started"), ("commit", "commit"), ("cores", "cores")):
    print("%s=%s" % (v, shlex.quote(str(j.get(k, "unknown")))))
EOF
) || exit 2
    eval "$vars"
    render
    exit 0
fi
[ -x /usr/bin/time ] || { echo "scale_targets.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
for tp in ${clusters//,/ }; do
    python3 - "$root" "$tp" "$work/$tp.json" <<'EOF' || exit 2
import json, os, sys
root, name, out = sys.argv[1:4]
sys.path.insert(0, os.path.join(root, "scripts"))
import gen_topologies as g
fam, n = name.rsplit("-", 1)
make = {"dgx_h100": g.dgx_h100, "dgx_a100": g.dgx_a100}.get(fam)
if make is None:
    sys.exit("scale_targets.sh: --clusters: unknown cluster %s (dgx_h100-N or dgx_a100-N)" % name)
json.dump(make(int(n)), open(out, "w"))
EOF
    ranks=$(python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); print(t["nodes"] * t["ranks_per_node"])' "$work/$tp.json") || exit 2
    for coll in ${colls//,/ }; do
        budget=600
        [ "$ranks" -gt 128 ] && budget=1800
        [ -n "$force" ] && budget=$force
        lim=${limit:-$((2 * budget))}
        d=$work/plan-$tp-$coll
        echo "scale_targets.sh: $tp $coll: taccl-synth --plan --time-budget $budget ..." >&2
        measure "$work/m" "$lim" "$bin/taccl-synth" --plan "$work/$tp.json" --collective "$coll" \
            --time-budget "$budget" -o "$d"
        read -r s mem rc <"$work/m"
        cp "$work/stderr" "$work/plan.err"
        [ -n "$logs" ] && cp "$work/stderr" "$logs/$tp-$coll.err"
        for mode in outofplace inplace; do
            echo '{}' >"$work/sweep-$mode.json"
            echo "0 0 -" >"$work/ms-$mode"
            if [ "$rc" = 0 ]; then
                measure "$work/ms-$mode" "$lim" "$bin/taccl-run" "$d" --sweep 1K:1G --$mode \
                    --no-data --json -q
                cp "$work/stdout" "$work/sweep-$mode.json"
            fi
        done
        python3 - "$tp" "$ranks" "$coll" "$budget" "$s" "$mem" "$rc" "$d/plan.json" \
            "$work/sweep-outofplace.json" "$work/sweep-inplace.json" "$work/ms-outofplace" \
            "$work/ms-inplace" "$work/plan.err" >>"$work/cases.jsonl" <<'EOF'
import json, sys
tp, ranks, coll, budget, s, mem, rc, planf, so, si, mso, msi, err = sys.argv[1:14]
def load(f):
    try:
        j = json.load(open(f))
    except Exception:
        return {}
    return j if isinstance(j, dict) else {}
plan = load(planf) if rc == "0" else {}
case = {"cluster": tp, "ranks": int(ranks), "collective": coll, "budget_s": float(budget),
        "plan_wall_s": float(s), "plan_peak_mib": float(mem), "plan_status": rc,
        "skipped": len(plan.get("skipped", [])) + plan.get("skipped_more", 0),
        "files": [f["file"] for f in plan.get("files", [])],
        "plan_error": None if rc == "0" else
            ([l for l in open(err).read().splitlines() if l.strip()] or ["(no message)"])[-1][:300]}
for mode, f, m in (("outofplace", so, mso), ("inplace", si, msi)):
    j = load(f)
    secs, _, src = open(m).read().split()
    rows = []
    for r in j.get("rows", []):
        rows.append({"size_bytes": r["size_bytes"], "picked": r.get("picked"),
                     "why": None if r.get("picked") else (r.get("reason") or "")[:200],
                     "time_us": r.get("time_us"), "nccl_us": r.get("nccl_us"),
                     "x_nccl": r.get("x_nccl"), "x_nccl_min": r.get("x_nccl_min"),
                     "verified": r.get("verified")})
    case[mode] = {"rows": rows, "sweep_wall_s": float(secs), "sweep_status": src,
                  "error": j.get("error")}
print(json.dumps(case))
EOF
        rm -rf "$d"
        render
        echo "scale_targets.sh: $tp $coll: plan $s s ($rc), page $page" >&2
    done
done
