#!/usr/bin/env bash
# tier: plain  (make check runs it plain only: the scripts' --help, runs no
#              program of ours; make check-full and make check-asan also
#              sanitized)
# test_scripts_help.sh — every script answers --help: exit 0, says what it
# is (its own name in the text), and does nothing else — no file written or
# changed anywhere in the repository (scripts that take a directory as their
# first argument once read "--help" as one and wrote into it).
source "$(dirname "$0")/lib.sh"

state() {   # everything under the repository that is not a build output
    (cd "$ROOT" && find . -path ./build -prune -o -path ./build-asan -prune -o -path ./.git \
        -prune -o -type f -newer "$TMP/stamp" -print | sort)
}
touch "$TMP/stamp"
sleep 1
for f in "$ROOT"/scripts/*.sh "$ROOT"/scripts/*.py; do
    name=$(basename "$f")
    case $f in *.py) run=(python3 "$f") ;; *) run=(bash "$f") ;; esac
    expect "$name --help: exit 0 and says what it is" 0 "${name%.*}" -- \
        bash -c 'cd "$1" && shift && timeout 20 "$@" --help' _ "$TMP" "${run[@]}"
done
changed=$(state)
if [ -z "$changed" ]; then
    echo "ok - --help wrote nothing in the repository"
else
    echo "not ok - --help wrote into the repository:"
    sed 's/^/  | /' <<<"$changed" | head -10
fi
left=$(ls -A "$TMP" | grep -v '^stamp$' || true)
if [ -z "$left" ]; then
    echo "ok - --help wrote nothing in the working directory"
else
    echo "not ok - --help wrote into the working directory: $left"
fi
