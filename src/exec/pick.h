/* pick.h — which of several loaded schedules a runtime runs for one call.
 *
 * A user loads a set of MSCCL files (a plan: `taccl-synth --plan` writes
 * one into a directory) and the runtime chooses per call.  The rules are
 * the runtimes' own (docs/design.md §8):
 *   - same collective and the communicator's size (`ngpus`);
 *   - the call's size a whole number of elements per chunk
 *     (`count % nchunksperloop == 0`, as 4-byte elements here);
 *   - legacy runtime (microsoft/msccl): minBytes <= size < maxBytes, a file
 *     whose maxBytes is 0 never picked, and the call's in-place-ness equal to
 *     the file's `inplace` attribute (its `outofplace` is not read);
 *   - newer executor (Azure/msccl-executor-nccl): minBytes <= size <=
 *     maxBytes (0 = no limit), `inplace` for an in-place call and
 *     `outofplace` for an out-of-place one;
 *   - the first file in load order that matches; none: NCCL runs the call;
 *   - the legacy runtime loads at most its max_files (model/runtime.h) of
 *     MSCCL_XML_FILES (MSCCL_MAX_NUM_ALGOS, src/include/msccl.h) and ignores
 *     the rest: given in name order, the first four;
 *   - the newer executor loads every regular file of MSCCL_ALGO_DIR, and
 *     fails on one that is not an MSCCL file (a plan's plan.json).
 * The executor never depends on the synthesizer: this reads only files. */
#ifndef TC_PICK_H
#define TC_PICK_H

#include "../sched/program.h"
#include "../util/err.h"

/* The schedules of a directory, in load order (file names sorted). */
typedef struct pick_set pick_set;

/* Load every *.xml directly inside dir (not its subdirectories).  NULL with
 * err set (TC_INPUT) if dir cannot be read, holds no schedule and no
 * plan.json (a plan whose every size NCCL serves: an empty set), or a file
 * does not parse (the message names it).  An entry named *.xml that is not
 * a regular file (a FIFO, a directory, a device) is refused the same way,
 * naming it, rather than skipped: the legacy runtime given it in
 * MSCCL_XML_FILES would block on it or fail, and a plan missing a file it
 * seems to hold would be run as another plan. */
pick_set *pick_set_load(const char *dir, tc_err *err);
void pick_set_free(pick_set *s);

int pick_set_count(const pick_set *s);
const prog *pick_set_prog(const pick_set *s, int i);
const char *pick_set_name(const pick_set *s, int i);     /* file name, no directory */

/* The runtime a set's files were written for: the first a file names
 * (<taccl target>), else RT_MSCCL (the legacy runtime). */
runtime pick_set_target(const pick_set *s);

/* Index of the file the runtime runs for a call of collective k on ngpus
 * ranks, `bytes` large (the larger per-rank buffer), in place or not;
 * -1: none matches, NCCL runs the call, by the rules of runtime rt
 * (whether maxBytes is the file's, whether it reads inplace alone, how
 * many files it loads: model/runtime.h). */
int pick_schedule(const pick_set *s, coll_kind k, int ngpus, int inplace, long long bytes,
                  runtime rt);

/* Why a call that pick_schedule gives to NCCL (-1) is NCCL's, and how it
 * could run a file instead.  Neither runtime has remainder handling: a
 * file runs only calls whose element count is a multiple of its
 * nchunksperloop (microsoft/msccl src/graph/tuning.cc:356, commit b23e9cd;
 * Azure/msccl-executor-nccl src/misc/msccl/msccl_lifecycle.cc:334, commit
 * c6f6b36), so the one way to run a file for another size is to pad the
 * call.  Returns:
 *   PICK_PADDED: a file runs the call padded to *padded bytes (the least
 *     padding a loaded file accepts, and the file the runtime picks for the
 *     padded call, *file);
 *   PICK_NOT_LOADED: a file past the runtime's max_files matches (*file);
 *   PICK_NO_FILE: no file's range and mode hold the call. */
enum { PICK_NO_FILE, PICK_PADDED, PICK_NOT_LOADED };
int pick_fallback(const pick_set *s, coll_kind k, int ngpus, int inplace, long long bytes,
                  runtime rt, long long *padded, int *file);

/* Whether one file matches such a call (the rules above). */
int pick_matches(const prog *p, coll_kind k, int ngpus, int inplace, long long bytes,
                 runtime rt);

#endif
