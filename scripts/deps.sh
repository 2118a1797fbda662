#!/usr/bin/env bash
# deps.sh — install the build and test dependencies if any is missing.
#
# Called by `make run`, `make check` and CI before anything is compiled.
# Checks each dependency first (pkg-config, or the header for GLPK, which
# Debian ships without a .pc file) and only calls apt-get when something is
# missing, so a machine that has everything pays nothing.  Uses sudo when not
# root.  Debian/Ubuntu package names.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail

missing=()
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
need() { missing+=("$@"); }

command -v pkg-config >/dev/null 2>&1 || need pkg-config
command -v cc >/dev/null 2>&1 || need gcc
command -v make >/dev/null 2>&1 || need make
have_pc libxml-2.0 || need libxml2-dev
have_pc libcjson || need libcjson-dev
have_pc cmocka || need libcmocka-dev
[ -f /usr/include/glpk.h ] || need libglpk-dev
have_pc cbc || need coinor-libcbc-dev
command -v gnuplot >/dev/null 2>&1 || need gnuplot-nox
command -v dot >/dev/null 2>&1 || need graphviz
command -v clang >/dev/null 2>&1 || need clang
# AddressSanitizer/libFuzzer runtimes for clang
[ -n "$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null | head -1)" ] \
    || need libclang-rt-dev

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "deps: need root or sudo to install: ${missing[*]}" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
