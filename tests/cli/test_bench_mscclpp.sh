#!/usr/bin/env bash
# tier: extended  (make check leaves it out: it tests a bench script, whose
#              runs make bench makes; make check-full runs it, plain and sanitized)
# test_bench_mscclpp.sh — the XML-beside-plan table (issue 38 item 6) on two
# cases, AllGather on two NDv2 at 1 MiB from --algo nccl and from the sketch
# ndv2-x2-sk-3 (whose plan verifies today: a row with a ratio and an
# explanation; NCCL's fails before the writer's fix): the page has its columns, its
# times and bound are those taccl-run reports for the same files run by
# hand, the ratio is plan / XML, a plan taccl-run fails is a "plan fails:"
# row with taccl-run's own first error, and each critical path the
# explanation is made of adds up to its run's time (the walk covers the
# whole run, from 0 to the op that ends last, once).
source "$(dirname "$0")/lib.sh"

T="$ROOT/topologies/ndv2-x2.json"
writes "bench_mscclpp.py writes the page and its JSON" "$TMP/m.md" "$TMP/m.json" -- python3 "$ROOT/scripts/bench_mscclpp.py" "$BIN" --sizes 1M --only '^ndv2-x2 allgather (nccl|ndv2-x2-sk-3)$' \
    --out "$TMP/m.md" --json "$TMP/m.json"
expect "the table has its columns" 0 "" -- grep -qF \
    "| machine | collective | schedule | size | XML time us | plan time us | ratio | bound us | verdict |" \
    "$TMP/m.md"

# the same files, by hand
for c in nccl:--algo,nccl sk3:$ROOT/sketches/ndv2-x2-sk-3.json; do
    n=${c%%:*}
    IFS=, read -r -a how <<<"${c#*:}"
    [ "$n" = sk3 ] && how+=(--time-limit 30)
    "$BIN/taccl-synth" "${how[@]}" "$T" --collective allgather --size 1048576 -q -o "$TMP/$n.xml"
    "$BIN/taccl-synth" "${how[@]}" "$T" --collective allgather --size 1048576 -q --target mscclpp \
        -o "$TMP/$n.json"
    "$BIN/taccl-run" "$TMP/$n.xml" --topo "$T" --size 1048576 --json >"$TMP/rx-$n.json" 2>/dev/null
    "$BIN/taccl-run" "$TMP/$n.json" --topo "$T" --size 1048576 --json >"$TMP/rp-$n.json" 2>/dev/null
done
for c in nccl:nccl sk3:ndv2-x2-sk-3; do
    n=${c%%:*} sched=${c#*:}
expect "$sched: times, bound, ratio and verdict are taccl-run's own" 0 "^consistent$" -- python3 - \
    "$TMP/m.md" "$TMP/m.json" "$TMP/rx-$n.json" "$TMP/rp-$n.json" "$sched" <<'EOF'
import json, sys
md, js, rx, rp, sched = sys.argv[1:]
rows = [r for r in json.load(open(js))["rows"] if r["schedule"] == sched]
assert len(rows) == 1, "want one row, got %d" % len(rows)
r = rows[0]
x, p = json.load(open(rx)), json.load(open(rp))
line = [l for l in open(md) if l.startswith("| ndv2-x2 | allgather | %s | 1M |" % sched)]
assert len(line) == 1, "no table row for the case"
cells = [c.strip() for c in line[0].strip().strip("|").split(" | ")]
notes = dict(l.rstrip("\n").split(". ", 1) for l in open(md) if l[:1].isdigit() and ". " in l)

def resolve(c):    # "status, note N" -> "status (note N's text)"
    if ", note " in c:
        st, n = c.rsplit(", note ", 1)
        return "%s (%s)" % (st, notes[n][:-1])  # the note list ends each with "."
    return c
assert x["verified"], "the XML should verify: %s" % x.get("error")
assert abs(r["xml"]["time_us"] - x["time_us"]) < 1e-9, (r["xml"]["time_us"], x["time_us"])
assert cells[4] == "%.2f" % x["time_us"], (cells[4], x["time_us"])
assert cells[7] == "%.2f" % x["lower_bound_us"], (cells[7], x["lower_bound_us"])
assert abs(p["bound_us"] - x["lower_bound_us"]) < 1e-6 * x["lower_bound_us"], "bounds differ"
if p["verified"]:
    assert abs(r["plan"]["time_us"] - p["time_us"]) < 1e-9
    assert cells[5] == "%.2f" % p["time_us"], (cells[5], p["time_us"])
    assert cells[6] == "%.3f" % (p["time_us"] / x["time_us"]), cells[6]
    v = resolve(cells[8])
    assert v.startswith(("same", "plan slower", "plan faster")), v
    if not v.startswith("same"):
        assert ("plan slower" in v) == (p["time_us"] > x["time_us"]), v
        assert "plan path: " in v and "XML path: " in v, v
else:
    assert cells[5] == "-" and cells[6] == "-", cells
    v = resolve(cells[8])
    assert v.startswith("plan fails (" + p["error"][:60]), (v, p["error"])
    assert r["verdict"].replace(".)", ")") == v, (r["verdict"], v)
# each critical path the explanation uses covers its run's time exactly
for form, d in (("xml", x), ("plan", p)):
    if d.get("time_us") is None:
        continue    # a plan that hangs has no time to cover
    path = r[form]["path"]
    assert isinstance(path, dict), "%s: no critical path: %s" % (form, path)
    tot = sum(path.values())
    assert abs(tot - d["time_us"]) < 1e-6 * d["time_us"], (form, tot, d["time_us"])
print("consistent")
EOF
done

python3 "$ROOT/scripts/bench_mscclpp.py" "$BIN" --from-json "$TMP/m.json" --out "$TMP/again.md" \
    --json "$TMP/again.json" >/dev/null 2>&1
expect "--from-json writes the same page and rows again, running nothing" 0 "" -- \
    bash -c 'cmp "$1/m.md" "$1/again.md" && cmp "$1/m.json" "$1/again.json"' _ "$TMP"

expect "an unknown case is an error that says so" 1 "no case matches" -- \
    python3 "$ROOT/scripts/bench_mscclpp.py" "$BIN" --only '^nothing$' --out "$TMP/n.md"
