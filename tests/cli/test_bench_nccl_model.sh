#!/usr/bin/env bash
# tier: extended  (make check leaves it out: it tests a bench script, whose
#              runs make bench makes; make check-full runs it, plain and sanitized)
# test_bench_nccl_model.sh — the executor-beside-NCCL's-estimate table (issue
# 41 item 4b) on NDv2 x2 AllReduce at 1 KiB and 1 GiB: each row's pick and
# NCCL estimate are taccl-synth --algo nccl --json's own, its time is
# taccl-run's for the same file run by hand (at the file's size_bytes), ratio = time / estimate, the
# within column and the summary count follow from the ratios, a row outside
# ×/÷ 1.25 carries its variants (no-rt-lat: the file run by hand on the
# topology without its runtime latency; launch: that plus NCCL's base
# latency; latency: the file run by hand on the topology with NCCL's
# per-step latencies as alphas instead of the runtime's; nccl-lat: NCCL's
# tree LL latencies as latency only, plus its base latency), a row within
# no-rt-lat and nccl-lat, and --from-json writes the same page again.
source "$(dirname "$0")/lib.sh"

T="$ROOT/topologies/ndv2-x2.json"
writes "bench_nccl_model.py writes the page and its JSON" "$TMP/m.md" "$TMP/m.json" -- python3 "$ROOT/scripts/bench_nccl_model.py" "$BIN" --sizes 1K,1G --only '^ndv2-x2 allreduce$' \
    --out "$TMP/m.md" --json "$TMP/m.json"
expect "the table has its columns" 0 "" -- grep -qF \
    "| machine | collective | size | NCCL's pick | NVLS | NCCL estimate us | executor us | ratio | within |" \
    "$TMP/m.md"

# the same files, by hand; the latency variant's topology built here
python3 - "$T" "$TMP/lat.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
t.pop("runtime_latency")
json.dump(t, open(sys.argv[2].replace("lat.json", "bare.json"), "w"))
for g, a in (("links", 3.4), ("switches", 3.4), ("nics", 14.0)):
    for e in t.get(g, []):
        e["alpha_us"] = a
json.dump(t, open(sys.argv[2], "w"))
# NCCL's latency model for the 1 KiB pick, tree LL (checked below): NCCL's
# tree LL step latencies, 0.6 us NVLink and 5 us network, as latency only;
# the executor scales a hop's Simple alpha by 0.6 / 3.4 (NVLink) and 2.7 / 14
# (network) under LL
for g, a in (("links", 0.6 * 3.4 / 0.6), ("switches", 0.6 * 3.4 / 0.6), ("nics", 5.0 * 14 / 2.7)):
    for e in t.get(g, []):
        e["alpha_us"] = a
t["alpha_mode"] = "delay"
json.dump(t, open(sys.argv[2].replace("lat.json", "ncl.json"), "w"))
EOF
for s in 1024 1073741824; do
    "$BIN/taccl-synth" --algo nccl "$T" --collective allreduce --size $s --json -q \
        -o "$TMP/n$s.xml" >"$TMP/s$s.json" 2>/dev/null
    # the file's own size: --size rounded up to whole chunks
    z=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["size_bytes"])' "$TMP/s$s.json")
    "$BIN/taccl-run" "$TMP/n$s.xml" --topo "$T" --size "$z" --no-data --json >"$TMP/r$s.json" 2>/dev/null
    "$BIN/taccl-run" "$TMP/n$s.xml" --topo "$TMP/lat.json" --size "$z" --no-data --json \
        >"$TMP/l$s.json" 2>/dev/null
    "$BIN/taccl-run" "$TMP/n$s.xml" --topo "$TMP/ncl.json" --size "$z" --no-data --json \
        >"$TMP/c$s.json" 2>/dev/null
    "$BIN/taccl-run" "$TMP/n$s.xml" --topo "$TMP/bare.json" --size "$z" --no-data --json \
        >"$TMP/b$s.json" 2>/dev/null
done
expect "rows, ratios, verdicts, summary and variants are taccl-synth's and taccl-run's own" 0 \
    "^consistent$" -- python3 - "$TMP" <<'EOF'
import json, os, sys
d = sys.argv[1]
md = open(os.path.join(d, "m.md")).read()
rows = json.load(open(os.path.join(d, "m.json")))["rows"]
assert len(rows) == 2, "want two rows, got %d" % len(rows)
n_in = 0
for s, name in ((1024, "1K"), (1073741824, "1G")):
    sy = json.load(open(os.path.join(d, "s%d.json" % s)))["nccl"]
    t = json.load(open(os.path.join(d, "r%d.json" % s)))["time_us"]
    r = [x for x in rows if x["size"] == s][0]
    assert abs(r["estimate_us"] - sy["estimate_us"]) < 1e-9, (r["estimate_us"], sy)
    assert abs(r["time_us"] - t) < 1e-9, (r["time_us"], t)
    ratio = t / sy["estimate_us"]
    inside = 0.8 <= ratio <= 1.25
    n_in += inside
    line = "| ndv2-x2 | allreduce | %s | %s %s, %d ch |  | %.2f | %.2f | %.3f | %s |" % (
        name, sy["algo"], sy["proto"], sy["channels"], sy["estimate_us"], t, ratio,
        "yes" if inside else "no")
    assert line in md, "no row " + line
    v = r["variants"]
    bt = json.load(open(os.path.join(d, "b%d.json" % s)))["time_us"]
    assert bt < t and abs(v["no-rt-lat"] - bt / sy["estimate_us"]) < 1e-9, ("no-rt-lat", v, bt)
    base = {"tree": {"LL": 6.8, "LL128": 14.0, "Simple": 8.4},
            "ring": {"LL": 6.6, "LL128": 14.0, "Simple": 8.4}}[sy["algo"]][sy["proto"]]
    ct = json.load(open(os.path.join(d, "c%d.json" % s)))["time_us"]
    if sy["algo"] == "tree" and sy["proto"] == "LL":   # the nccl-lat topology above is tree LL's
        assert abs(v["nccl-lat"] - (ct + base) / sy["estimate_us"]) < 1e-9, ("nccl-lat", v, ct)
    if not inside:
        want = (bt + base) / sy["estimate_us"]
        assert abs(v["launch"] - want) < 1e-9, ("launch", v["launch"], want)
        lt = json.load(open(os.path.join(d, "l%d.json" % s)))["time_us"]
        assert abs(v["latency"] - lt / sy["estimate_us"]) < 1e-9, ("latency", v["latency"], lt)
        assert abs(v["latency+launch"] - (lt + base) / sy["estimate_us"]) < 1e-9
    else:
        assert sorted(r["variants"]) == ["nccl-lat", "no-rt-lat"], "a row within: two variants"
assert "Within ×/÷ 1.25: **%d of 2** rows" % n_in in md, "summary count"
for vn in ("no-rt-lat", "nccl-lat"):
    nl = sum(0.8 <= r["variants"][vn] <= 1.25 for r in rows)
    assert "`%s`" % vn in md and ("run on every row: **%d of 2** within" % nl) in md, vn
print("consistent")
EOF

python3 "$ROOT/scripts/bench_nccl_model.py" "$BIN" --from-json "$TMP/m.json" --out "$TMP/again.md" \
    --json "$TMP/again.json" >/dev/null 2>&1
expect "--from-json writes the same page" 0 "" -- cmp "$TMP/m.md" "$TMP/again.md"
