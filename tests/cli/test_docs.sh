#!/usr/bin/env bash
# tier: plain  (make check runs it plain only: reads src/ and docs/, runs no
#              program of ours)
# test_docs.sh — docs/design.md's module and include tables match src/:
# every source file is listed under its module and every include edge
# between modules is named down to the header (scripts/check_design_doc.py).
# The checker itself is tested on a copy of the tree with a file added and
# an include added, each of which it must report.
source "$(dirname "$0")/lib.sh"
C="$ROOT/scripts/check_design_doc.py"

expect "design.md's tables match src/" 0 "" -- python3 "$C" "$ROOT"

mkdir -p "$TMP/tree"
cp -r "$ROOT/src" "$ROOT/docs" "$TMP/tree/"
printf '/* x */\n' >"$TMP/tree/src/exec/newpass.c"
expect "a source file missing from the module table is named" 1 "src/exec/newpass: not in design.md's module table" -- python3 "$C" "$TMP/tree"
rm "$TMP/tree/src/exec/newpass.c"
printf '#include "../synth/hier.h"\n' >>"$TMP/tree/src/plan/propose.c"
expect "an include edge missing from the include table is named" 1 "src/plan/propose.c: includes synth/hier.h" -- python3 "$C" "$TMP/tree"
