#!/usr/bin/env python3
"""check_design_doc.py — does docs/design.md's module layout match src/?

Reads the two tables of docs/design.md §2 ("module | files | holds" and
"module | includes from") and the sources under src/, and prints one line
per discrepancy:

  - a source file (src/MODULE/NAME.c or .h) whose NAME the module's "files"
    cell does not list (names in parentheses after a file abbreviate
    shared prefixes: `lower` (`lower_xfer` `_place`) lists lower_place);
  - a module the files cell names that has no such file;
  - an include edge (a file of module A includes a header of module B)
    whose module B is not in A's "includes from" cell, or, where that cell
    names particular files of B (`sched` (`algo.h`, `program.h`) or
    `sched/xml.h`), whose header is not among them.

Exit 0 when the document matches, 1 otherwise.  Usage:
  scripts/check_design_doc.py [ROOT]      (ROOT: the repository, default .)
"""
import os
import re
import sys


def table(lines, header):
    """Rows (lists of cells) of the markdown table whose header row starts
    with `header`."""
    rows, on = [], False
    for ln in lines:
        if ln.startswith(header):
            on = True
            continue
        if on:
            if not ln.startswith("|"):
                break
            if set(ln.replace("|", "").strip()) <= set("-: "):
                continue
            rows.append([c.strip() for c in ln.strip().strip("|").split("|")])
    return rows


def listed_files(cell):
    """The file stems a files cell lists: `a` `b` (`b_x` `_y`) -> a, b, b_x, b_y."""
    names = set()
    last = None
    for m in re.finditer(r"\(|\)|`([^`]+)`", cell):
        tok = m.group(1)
        if tok is None:
            continue
        tok = tok.strip()
        if tok.endswith(".c") or tok.endswith(".h"):
            tok = tok[:-2]
        if tok.startswith("_") and last:
            names.add(last.split("_")[0] + tok)
        else:
            names.add(tok)
            last = tok
    return names


def includes_cell(cell, mods):
    """{module: set of header stems named, or None if the module is named
    bare} for an "includes from" cell."""
    out = {}
    # "`mod/file.h`" mentions
    for m in re.finditer(r"`(\w+)/(\w+)\.h`", cell):
        if m.group(1) in mods:
            out.setdefault(m.group(1), set())
            if out[m.group(1)] is not None:
                out[m.group(1)].add(m.group(2))
    # "`mod`" optionally followed by "(`a`, `b.h`)"
    for m in re.finditer(r"`(\w+)`(\s*\(([^)]*)\))?", cell):
        mod = m.group(1)
        if mod not in mods:
            continue
        named = re.findall(r"`([\w.]+)`", m.group(3) or "")
        if not named:       # bare, or a note in parentheses ("the stop flag")
            out[mod] = None
        else:
            stems = {re.sub(r"\.h$", "", t) for t in re.findall(r"`([\w.]+)`", m.group(3))}
            if out.get(mod, set()) is not None:
                out[mod] = out.get(mod, set()) | stems
    return out


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    src = os.path.join(root, "src")
    lines = open(os.path.join(root, "docs", "design.md"), encoding="utf-8").read().splitlines()
    files_rows = table(lines, "| module | files | holds |")
    inc_rows = table(lines, "| module | includes from |")
    mods = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    bad = []
    if not files_rows or not inc_rows:
        print("docs/design.md: the module or include table is missing")
        return 1
    doc_files = {r[0].strip("`"): listed_files(r[1]) for r in files_rows}
    doc_inc = {r[0].strip("`"): includes_cell(r[1], mods) for r in inc_rows}
    for mod in mods:
        if mod not in doc_files:
            bad.append("src/%s/: no row in design.md's module table" % mod)
            continue
        stems = {os.path.splitext(f)[0] for f in os.listdir(os.path.join(src, mod))
                 if f.endswith((".c", ".h"))}
        for s in sorted(stems):
            if s.endswith("_int"):
                continue     # private headers go with their module's files
            if s not in doc_files[mod] and mod != "cli":
                bad.append("src/%s/%s: not in design.md's module table (files of `%s`)"
                           % (mod, s, mod))
            if mod == "cli" and s not in doc_files[mod]:
                bad.append("src/cli/%s.c: not in design.md's module table" % s)
        for s in sorted(doc_files[mod]):
            if mod != "cli" and s not in stems:
                bad.append("design.md lists `%s` in module `%s`: src/%s/ has no %s.c or %s.h"
                           % (s, mod, mod, s, s))
    for mod in mods:
        d = os.path.join(src, mod)
        for f in sorted(os.listdir(d)):
            if not f.endswith((".c", ".h")):
                continue
            text = open(os.path.join(d, f), encoding="utf-8").read()
            for inc in re.findall(r'^#include "([^"]+)"', text, re.M):
                target = os.path.normpath(os.path.join(d, inc))
                if not os.path.exists(target):
                    target = os.path.normpath(os.path.join(src, inc))
                rel = os.path.relpath(target, src).split(os.sep)
                if len(rel) != 2 or rel[0] == mod or rel[0] not in mods:
                    continue
                tmod, stem = rel[0], os.path.splitext(rel[1])[0]
                row = doc_inc.get(mod)
                if row is None:
                    bad.append("src/%s/%s: includes %s/%s.h, and `%s` has no row in "
                               "design.md's include table" % (mod, f, tmod, stem, mod))
                elif tmod not in row:
                    bad.append("src/%s/%s: includes %s/%s.h; design.md's include table "
                               "does not name `%s` for `%s`" % (mod, f, tmod, stem, tmod, mod))
                elif row[tmod] is not None and stem not in row[tmod]:
                    bad.append("src/%s/%s: includes %s/%s.h; design.md's include table "
                               "names other files of `%s` for `%s`" % (mod, f, tmod, stem,
                                                                      tmod, mod))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
