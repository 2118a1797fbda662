/* profile.h — the calls a job makes, by size: what a plan's file choice
 * weighs (taccl-synth --plan --profile FILE).
 *
 * A runtime that loads few files (the legacy runtime: 4) keeps the files
 * that save the most time over the calls the job makes; a profile says
 * which sizes those are and how often each is called.  Two text formats,
 * one a line, '#' starting a comment and blank lines skipped
 * (docs/formats.md section 7c):
 *   - "BYTES COUNT" (spaces, tabs or one comma between; a first line
 *     "bytes,count" is a header): COUNT calls of BYTES bytes;
 *   - nccl-tests' table rows ("size count type redop root time algbw
 *     busbw #wrong ..."): one call of `size` bytes per row; the lines
 *     NCCL itself prints ("... NCCL INFO ...", "NCCL WARN") are skipped;
 *   - a PyTorch profiler trace (Kineto's JSON, a file starting with '{'):
 *     its events whose args carry "Collective name" (this collective),
 *     "In msg nelems", "Out msg nelems" and "dtype", a call each.
 * Anything else is refused with "FILE:LINE: what". */
#ifndef TC_PROFILE_H
#define TC_PROFILE_H

#include "../model/collective.h"
#include "../util/err.h"

typedef struct {
    long long bytes;
    double count;
} profile_call;

typedef struct {
    int n;
    profile_call *calls;
    double total;           /* calls in all */
} profile;

/* Read path into *out; a PyTorch profiler trace's calls of collective k
 * (the text formats are one collective's calls already).  TC_INPUT with "PATH:LINE: why" (or "PATH: why")
 * when it cannot be read, a line is neither format, a size or count is
 * not a positive number, or no call is listed. */
int profile_load(const char *path, coll_kind k, profile *out, tc_err *err);

void profile_free(profile *p);

#endif
