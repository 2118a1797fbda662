#!/usr/bin/env bash
# test_bad.sh — every input of the bad-input corpus (tests/bad/EXPECT) fails
# as it should: the exact exit code (2 unusable input, 1 a schedule that runs
# but does not do its job; never a signal, never a hang), exactly one line on
# stderr, "taccl-synth: " or "taccl-run: " then the file as given and, where
# the input has lines, ":LINE:", matching the entry's regex (the field and
# what is wrong), and nothing written: the output the run was given does not
# appear, a file already there keeps its bytes, and no temporary file is
# left beside it.  Then each fuzz target's replay program (built by make
# check) runs the corpus in-process: the loaders keep their contract there
# too (a value, or TC_INPUT with a one-line message).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# TACCL_BAD_TIMEOUT: seconds a run may take (default 120; raise it under
# valgrind).  TACCL_BAD_BIG=0 leaves out the 100 MB inputs (said on a
# "# skip" line, counted neither way) for runs where they cost minutes: the
# default under TACCL_QUICK (make check's sanitized lane, valgrind), whose
# plain lane runs them.
BAD=$ROOT/tests/bad
GEN=$TMP/gen
if [ -n "${TACCL_QUICK:-}" ]; then BIG=${TACCL_BAD_BIG:-0}; else BIG=${TACCL_BAD_BIG:-1}; fi
if [ "$BIG" != 0 ]; then
    "$BAD/gen_big.sh" "$GEN" || echo "not ok - gen_big.sh could not write the big inputs"
fi
LIMIT=${TACCL_BAD_TIMEOUT:-120}

# run_entry TOOL FILE WITH OUT: the command an entry stands for.
run_entry() {
    local tool=$1 file=$2 with=$3 out=$4
    case "$tool" in
    sketch)   timeout "$LIMIT" "$BIN/taccl-synth" "$file" "$ROOT/$with" -o "$out" ;;
    topo)     timeout "$LIMIT" "$BIN/taccl-synth" "$ROOT/$with" "$file" -o "$out" ;;
    algo)     timeout "$LIMIT" "$BIN/taccl-synth" --algo "$with" "$file" --collective allgather -o "$out" ;;
    run)      timeout "$LIMIT" "$BIN/taccl-run" "$file" --embed-to "$out" ;;
    run-topo) timeout "$LIMIT" "$BIN/taccl-run" "$ROOT/$with" --topo "$file" --embed-to "$out" ;;
    *)        echo "unknown tool '$tool'" >&2; return 99 ;;
    esac
}

# check_entry NAME TOOL FILE WITH EXIT LINE REGEX: prints ok / not ok.
check_entry() {
    local name=$1 tool=$2 file=$3 with=$4 want=$5 line=$6 re=$7
    local why=() dir out err rc prefix
    case "$tool" in run*) prefix="taccl-run: " ;; *) prefix="taccl-synth: " ;; esac
    for round in $ROUNDS; do
        dir=$(mktemp -d "$TMP/out.XXXXXX")
        out=$dir/out.xml err=$TMP/stderr
        [ "$round" = existing ] && printf 'sentinel\n' >"$out"
        run_entry "$tool" "$file" "$with" "$out" >/dev/null 2>"$err"
        rc=$?
        if [ "$rc" -eq 124 ]; then why+=("$round: timed out after $LIMIT s (a hang)")
        elif [ "$rc" -ge 128 ]; then why+=("$round: killed by signal $((rc - 128))")
        elif [ "$rc" -ne "$want" ]; then why+=("$round: exit $rc, wanted $want")
        fi
        local n msg
        n=$(wc -l <"$err")
        msg=$(head -1 "$err")
        [ "$n" -eq 1 ] || why+=("$round: $n lines on stderr, wanted exactly 1")
        case "$msg" in "$prefix$file"*) ;; *) why+=("$round: the line does not start with '$prefix$file'") ;; esac
        if [ "$line" = - ]; then
            grep -qF -- "$file: " <<<"$msg" || why+=("$round: no '$file: ' in the line")
        else
            grep -qF -- "$file:$line:" <<<"$msg" || why+=("$round: no '$file:$line:' in the line")
        fi
        grep -qE -- "$re" <<<"$msg" || why+=("$round: the line does not match: $re")
        if [ "$round" = fresh ]; then
            [ -z "$(ls -A "$dir")" ] || why+=("fresh: written: $(ls -A "$dir" | tr '\n' ' ')")
        else
            [ "$(cat "$out" 2>/dev/null)" = sentinel ] || why+=("existing: the file already there was changed")
            [ "$(ls -A "$dir")" = out.xml ] || why+=("existing: left beside it: $(ls -A "$dir" | tr '\n' ' ')")
        fi
        rm -rf "$dir"
        [ ${#why[@]} -eq 0 ] || break
    done
    if [ ${#why[@]} -eq 0 ]; then
        local at=" at line $line"
        [ "$line" = - ] && at=""
        echo "ok - $name ($tool): exit $want, one line naming it$at, nothing written"
    else
        echo "not ok - $name ($tool)"
        for w in "${why[@]}"; do echo "  $w"; done
        echo "  stderr: $(head -3 "$err")"
    fi
}

entries=0 small=0
while read -r name tool with want line re; do
    case "$name" in ''|'#'*) continue ;; esac
    case "$name" in gen/*) file=$GEN/${name#gen/} ;; *) file=$BAD/$name ;; esac
    if [ "$BIG" = 0 ] && [ "${name#gen/}" != "$name" ]; then
        echo "# skip - $name: TACCL_BAD_BIG=0"
        continue
    fi
    # Each input runs with no output file and with one already there.  make
    # check's two lanes share them: its sanitized lane (TACCL_QUICK) one of
    # the two, alternately, so the sanitizers see every input once, and its
    # plain lane (TACCL_FEW) the other; the generated big inputs, which only
    # the plain lane runs, both.  make check-full runs both everywhere.
    ROUNDS="fresh existing"
    if [ "${name#gen/}" = "$name" ]; then
        parity=$((small % 2))
        small=$((small + 1))
        if [ -n "${TACCL_QUICK:-}" ]; then
            if [ $parity = 0 ]; then ROUNDS=fresh; else ROUNDS=existing; fi
        elif [ -n "${TACCL_FEW:-}" ]; then
            if [ $parity = 0 ]; then ROUNDS=existing; else ROUNDS=fresh; fi
        fi
    fi
    check_entry "$name" "$tool" "$file" "$with" "$want" "$line" "$re"
    entries=$((entries + 1))
done <"$BAD/EXPECT"

# Every corpus file has an entry, and the corpus is the size it claims.
for f in "$BAD"/sketch/* "$BAD"/topo/* "$BAD"/xml/*; do
    rel=${f#"$BAD"/}
    grep -q "^$rel " "$BAD/EXPECT" || echo "not ok - $rel has no entry in tests/bad/EXPECT"
done
[ "$entries" -ge 40 ] && echo "ok - the corpus has $entries entries" ||
    echo "not ok - the corpus has $entries entries, fewer than 40"

# In-process: each fuzz target's entry point over its part of the corpus.
for t in sketch topo xml; do
    rp=${TACCL_REPLAY_DIR:-$BIN/../fuzz}/replay_$t
    files=()
    for f in "$BAD/$t"/*; do [ -f "$f" ] && files+=("$f"); done
    if [ ! -x "$rp" ]; then
        echo "not ok - replay_$t: $rp is not built (make check builds it)"
    elif out=$(TACCL_FUZZ_TOPOLOGIES=$ROOT/topologies timeout "$LIMIT" "$rp" "${files[@]}" 2>&1); then
        echo "ok - replay_$t: the loaders keep their contract on ${#files[@]} inputs in-process"
    else
        echo "not ok - replay_$t"
        tail -5 <<<"$out" | sed 's/^/  | /'
    fi
done

# A topology that loads but links nothing: the schedule cannot run on it
# (exit 1) and stderr still holds one line, the failure's; that no lower
# bound exists is said in the report on stdout.
cat >"$TMP/islands.json" <<'JSON'
{
  "name": "islands",
  "nodes": 1,
  "ranks_per_node": 4,
  "local": {"copy_gbps": 100, "reduce_gbps": 100, "source": "assumed: four unlinked ranks"}
}
JSON
timeout "$LIMIT" "$BIN/taccl-run" "$BAD/xml/wrong-data.xml" --topo "$TMP/islands.json" \
    >"$TMP/islands.out" 2>"$TMP/islands.err"
rc=$?
if [ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/islands.err")" -eq 1 ] &&
    grep -q "wrong-data.xml:3: rank 0 tb 0: no route from rank 0 to rank 1" "$TMP/islands.err" &&
    grep -q "^bound     none: topology islands: rank 0 cannot reach rank 1" "$TMP/islands.out"; then
    echo "ok - unlinked topology: exit 1, one stderr line, no bound said in the report"
else
    echo "not ok - unlinked topology: exit $rc"
    sed 's/^/  | /' "$TMP/islands.err" "$TMP/islands.out" | head -8
fi
