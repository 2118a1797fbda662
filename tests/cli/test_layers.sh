#!/usr/bin/env bash
# tier: plain  (make check runs it plain only: reads src/ only, runs no
#              program; make check-full and make check-asan also sanitized)
# test_layers.sh — the parts of src/ include only the parts beneath them:
#
#   util  <  model  <  lp  <  bound, sched  <  synth, exec  <  plan  <  cli
#
# (parts on one level never include each other: the executor judges
# schedules whoever made them, so it never sees the synthesizer; a plan
# uses both).  Every
# #include "..." of every file under src/ is resolved to its part and
# checked against this order; one "ok"/"not ok" per part, the offending
# file:line and include named.
source "$(dirname "$0")/lib.sh"

level() {
    case $1 in
    util) echo 0 ;; model) echo 1 ;; lp) echo 2 ;; bound | sched) echo 3 ;;
    synth | exec) echo 4 ;; plan) echo 5 ;; cli) echo 6 ;; *) echo -1 ;;
    esac
}

# check_tree ROOT — one result line per part of ROOT/src
check_tree() {
    local root=$1 part lp bad file line inc target tpart lt
    for part in $(cd "$root/src" && ls -d */ | tr -d /); do
        lp=$(level "$part")
        bad=""
        [ "$lp" -ge 0 ] || bad="unknown part src/$part (give it a level in test_layers.sh)"
        while IFS=: read -r file line inc; do
            [ -n "$file" ] || continue
            # resolve against the file's folder, else against src/
            target=$(cd "$(dirname "$file")" && realpath -m "$inc")
            case "$target" in "$root"/src/*) ;; *) target=$(realpath -m "$root/src/$inc") ;; esac
            case "$target" in "$root"/src/*/*) ;; *) continue ;; esac
            tpart=${target#"$root"/src/}
            tpart=${tpart%%/*}
            [ "$tpart" = "$part" ] && continue
            lt=$(level "$tpart")
            if [ "$lt" -lt 0 ] || [ "$lt" -ge "$lp" ]; then
                bad="$bad${bad:+; }${file#"$root"/}:$line includes $inc ($tpart is not beneath $part)"
            fi
        done < <(grep -Hn '^#include "' "$root/src/$part"/*.[ch] 2>/dev/null |
                 sed 's/:#include "\(.*\)".*/:\1/')
        if [ -z "$bad" ]; then
            echo "ok - src/$part includes only parts beneath it"
        else
            echo "not ok - src/$part includes only parts beneath it"
            echo "  $bad"
        fi
    done
}

check_tree "$(realpath "$ROOT")"

# The checker itself: an executor file including the synthesizer is caught.
mkdir -p "$TMP/fake/src/exec" "$TMP/fake/src/synth"
printf '#include "../synth/x.h"\n' >"$TMP/fake/src/exec/y.c"
: >"$TMP/fake/src/synth/x.h"
out=$(check_tree "$(realpath "$TMP/fake")")
if grep -q "^not ok - src/exec" <<<"$out" && grep -q "src/exec/y.c:1 includes ../synth/x.h" <<<"$out"; then
    echo "ok - an exec file including synth is caught"
else
    echo "not ok - an exec file including synth is caught"
    sed 's/^/  | /' <<<"$out" | head -5
fi
