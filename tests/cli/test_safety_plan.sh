#!/usr/bin/env bash
# tier: sanitized  (make check runs it in its sanitized lane only, every check
#              with the sanitizers on; make check-full in both)
# test_safety_plan.sh — taccl-synth owns only what it writes (issue 37):
# a plan directory is replaced only when its marker proves it ours, never
# through a symbolic link nor when an input lies under it; names from input
# files never become paths; no temporary file outlives a file-size limit;
# a read-only file or a FIFO nothing reads is not an output; plan
# directories are made with the umask's mode and plan.json's commands run
# from the plan directory as written.  Each case is a reproduction of what
# an adversarial run found, checked for the user's files afterwards.
source "$(dirname "$0")/lib.sh"
S="$BIN/taccl-synth"
R="$BIN/taccl-run"
T="$ROOT/topologies"
PLAN=(--collective allgather --sizes 1K:4K --no-propose -q)

# leftovers DIR — temporary files or directories of ours under DIR
leftovers() { find "$1" -name '*.tmp.*' -o -name '*.tmp-*' -o -name '*.old-*' | sort; }

# 1. a directory holding any plan.json used to be emptied recursively
D="$TMP/d1"
mkdir -p "$D/src" "$D/sketches"
echo '{"my":"config"}' >"$D/plan.json"
echo thesis >"$D/src/thesis.tex"
cp "$T/ndv2-x2.json" "$D/topo.json"
cp "$ROOT/sketches/ndv2-x2-sk-1.json" "$D/sketches/x.json"
expect "a topology inside -o DIR is refused" 2 "input .*topo.json is inside it" -- \
    "$S" --plan "$D/topo.json" "${PLAN[@]}" -o "$D"
cp "$T/ndv2-x2.json" "$TMP/topo.json"
expect "a sketch inside -o DIR is refused" 2 "input .*sketches/x.json is inside it" -- \
    "$S" --plan "$TMP/topo.json" --sketch "$D/sketches/x.json" "${PLAN[@]}" -o "$D"
expect "a directory with someone's plan.json is not ours" 2 "is not a plan taccl-synth wrote \(no \.taccl-plan\)" -- \
    "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$D"
expect "... every file of it is still there" 0 "" -- bash -c \
    "grep -q config '$D/plan.json' && grep -q thesis '$D/src/thesis.tex' && test -f '$D/topo.json' && test -f '$D/sketches/x.json'"

# a plan of ours is replaced; a file the user added to it stops that
P="$TMP/p1"
expect "a new plan is written" 0 "" -- "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$P"
expect "... with its marker listing what it wrote" 0 "^taccl-synth plan directory 1$" -- head -1 "$P/.taccl-plan"
expect "our plan is replaced by the next one" 0 "" -- "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$P"
echo notes >"$P/nccl/my-notes.txt"
expect "a file the user added makes it not ours" 2 "holds nccl/my-notes.txt, which taccl-synth did not write" -- \
    "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$P"
expect "... and it is kept" 0 "^notes$" -- cat "$P/nccl/my-notes.txt"
rm "$P/nccl/my-notes.txt"
mkdir "$P/mine"
expect "a directory the user added too" 2 "holds mine/, which taccl-synth did not write" -- \
    "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$P"
rmdir "$P/mine"
ln -s /etc/passwd "$P/link.xml"
expect "a symbolic link inside it too" 2 "holds link.xml" -- "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$P"
rm "$P/link.xml"

# -o a symbolic link to a plan: refused, the target untouched, nothing left
ln -s "$P" "$TMP/link"
before=$(cd "$P" && find . | sort | md5sum)
expect "-o a symbolic link is refused" 2 "is a symbolic link" -- "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$TMP/link"
expect "... its target untouched" 0 "^$before$" -- bash -c "cd '$P' && find . | sort | md5sum"
expect "... and no LINK.old-* or temporary directory left" 0 "^$" -- leftovers "$TMP"

# a trailing slash is the same directory
expect "-o DIR/ with a trailing slash" 0 "" -- "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$P/"
expect "... replaced in place, nothing left beside it" 0 "^$" -- leftovers "$TMP"

# the umask decides the plan directory's mode (mkdtemp's 0700 is not kept)
rm -rf "$TMP/p-mode"
(umask 022 && "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$TMP/p-mode")
expect "a plan directory is readable by others (umask 022: 755)" 0 "^755$" -- stat -c %a "$TMP/p-mode"

# plan.json's commands run from the plan directory as written
expect "every command runs from the plan directory and its schedule verifies" 0 "^ok$" -- python3 -c '
import json, os, subprocess, sys
d, bindir = sys.argv[1], sys.argv[2]
p = json.load(open(os.path.join(d, "plan.json")))
cmds = [f["command"] for f in p["files"]][:2]
assert cmds, "no files"
env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
for c in cmds:
    out = c.split(" -o ")[1]
    r = subprocess.run(c + " -q", shell=True, cwd=d, env=env, capture_output=True, text=True)
    assert r.returncode == 0, (c, r.stderr)
    r = subprocess.run(["taccl-run", out, "-q"], cwd=d, env=env, capture_output=True, text=True)
    assert r.returncode == 0, (c, r.stdout, r.stderr)
    os.remove(os.path.join(d, out))
print("ok")' "$P" "$BIN"

# 3. a topology's name becomes file names only made safe and distinct
python3 - "$T/ndv2-x2.json" "$TMP" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
for tag, name in [("dots", "../../../../elsewhere/OUTSIDE"), ("slash", "a/b"),
                  ("long", "n" * 100)]:
    t["name"] = name
    json.dump(t, open("%s/topo-%s.json" % (sys.argv[2], tag), "w"))
EOF
mkdir -p "$TMP/deep/a/b/c/d"
expect "a name with ../ writes nothing outside the plan" 0 "" -- "$S" --plan "$TMP/topo-dots.json" \
    --collective allgather --sizes 1K:2K -q --time-limit 1 --time-budget 5 -o "$TMP/deep/a/b/c/d/plan"
expect "... nothing appeared outside it" 0 "^$" -- bash -c "find '$TMP' -name 'OUTSIDE*' -not -path '$TMP/deep/a/b/c/d/plan/*'; find '$TMP/deep' -maxdepth 4 -name elsewhere"
expect "... the proposed sketches are in sketches/ under a safe name" 0 "_.._.._.._elsewhere_OUTSIDE-cup1.json" -- ls "$TMP/deep/a/b/c/d/plan/sketches"
expect "a name with / works" 0 "" -- "$S" --plan "$TMP/topo-slash.json" --collective allgather \
    --sizes 1K:2K -q --time-limit 1 --time-budget 5 -o "$TMP/p-slash"
expect "... as a_b-*" 0 "a_b-cup1.json" -- ls "$TMP/p-slash/sketches"
expect "a 100-byte name keeps the four proposed sketches distinct" 0 "^4$" -- bash -c \
    "'$S' --plan '$TMP/topo-long.json' --collective allgather --sizes 1K:2K -q --time-limit 1 --time-budget 5 -o '$TMP/p-long' && ls '$TMP/p-long/sketches' | wc -l"
expect "... and every command names the sketch of its own label" 0 "^ok$" -- python3 -c '
import json, re, sys
p = json.load(open(sys.argv[1] + "/plan.json"))
for c in p["candidates"]:
    m = re.match(r"(\S+-cup\d+) @", c["label"])
    if m:
        assert "sketches/%s.json" % m.group(1) in c["command"], c
print("ok")' "$TMP/p-long"

# 7. a file-size limit (SIGXFSZ) leaves no temporary file or directory
mkdir "$TMP/fsz"
expect "taccl-synth -o under ulimit -f: an error, no temporary file" 2 "cannot write: File too large" -- \
    bash -c "ulimit -f 10; '$S' --algo ring '$T/ndv2-x2.json' --collective allgather -q -o '$TMP/fsz/out.xml'"
expect "a plan under ulimit -f: an error naming the plan, not a temporary path" 2 "fsz/plan.*File too large" -- \
    bash -c "ulimit -f 10; '$S' --plan '$TMP/topo.json' ${PLAN[*]} -o '$TMP/fsz/plan' 2>&1 | grep -v 'tmp-'; exit \${PIPESTATUS[0]}"
expect "... nothing left in the directory" 0 "^$" -- ls -A "$TMP/fsz"

# a read-only file is not replaced; a FIFO nothing reads is an error, not a hang
echo keep >"$TMP/ro.xml"
chmod 444 "$TMP/ro.xml"
expect "-o a read-only file is refused" 2 "ro.xml: cannot write: read-only" -- \
    "$S" --algo ring "$T/ndv2-x2.json" --collective allgather -q -o "$TMP/ro.xml"
expect "... and it keeps its bytes" 0 "^keep$" -- cat "$TMP/ro.xml"
mkfifo "$TMP/noreader"
expect "-o a FIFO nothing reads: an error at once" 2 "a FIFO that nothing reads" -- \
    timeout 20 "$S" --algo ring "$T/ndv2-x2.json" --collective allgather -q -o "$TMP/noreader"

# 10. --json: exactly one JSON object on stdout for every exit, failures too,
# with the exit code of the same command without --json
json_one() {
    local name=$1
    shift
    local out rc rc0
    "$@" >/dev/null 2>&1
    rc0=$?
    out=$("$@" --json 2>/dev/null)
    rc=$?
    if [ $rc -eq $rc0 ] && python3 -c 'import json, sys
lines = sys.stdin.read().splitlines()
assert len(lines) == 1, lines
json.loads(lines[0])' <<<"$out" 2>/dev/null; then
        echo "ok - --json, $name: one JSON object (exit $rc)"
    else
        echo "not ok - --json, $name: exit $rc (without --json $rc0), stdout:"
        sed 's/^/  | /' <<<"$out" | head -5
    fi
}
json_one "a bad option before --json" "$S" --frobnicate
json_one "no arguments" "$S"
json_one "a missing sketch" "$S" "$TMP/nonexistent.json" "$T/ndv2-x2.json" -o "$TMP/j.xml"
json_one "a bad size" "$S" --algo ring "$T/ndv2-x2.json" --collective allgather --size 1.5G -o "$TMP/j.xml"
json_one "a plan over someone's directory" "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$D"
json_one "a read-only output" "$S" --algo ring "$T/ndv2-x2.json" --collective allgather -q -o "$TMP/ro.xml"
json_one "a plan written" "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$TMP/p-json"

# hostile markers: a plan directory's marker is only believed when it is a
# regular file that starts with the magic line and lists every entry
H="$TMP/hostile"
"$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$H"
mv "$H/.taccl-plan" "$TMP/marker.saved"
ln -s "$TMP/marker.saved" "$H/.taccl-plan"
expect "a marker that is a symbolic link is not believed" 2 "no \.taccl-plan" -- "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$H"
rm "$H/.taccl-plan"
mkfifo "$H/.taccl-plan"
expect "a marker that is a FIFO is not believed (nor waited on)" 2 "no \.taccl-plan" -- timeout 20 "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$H"
rm "$H/.taccl-plan"
{ echo "taccl-synth plan directory 1"; echo "../../etc/"; echo "/etc/passwd"; } >"$H/.taccl-plan"
expect "a marker listing paths outside the plan still guards what is inside it" 2 "holds .*which taccl-synth did not write" -- \
    "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$H"
head -c 2000000 /dev/zero | tr '\0' 'x' >"$H/.taccl-plan"
expect "a huge marker is not believed" 2 "not taccl-synth's plan marker" -- "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$H"
cp "$TMP/marker.saved" "$H/.taccl-plan"
mkdir "$TMP/elsewhere" && echo precious >"$TMP/elsewhere/keep.txt"
rmdir "$H/sketches" 2>/dev/null || rm -rf "$H/sketches"
ln -s "$TMP/elsewhere" "$H/sketches"
expect "a listed directory replaced by a link is refused" 2 "holds sketches" -- "$S" --plan "$TMP/topo.json" "${PLAN[@]}" -o "$H"
expect "... and what the link points to is kept" 0 "^precious$" -- cat "$TMP/elsewhere/keep.txt"
