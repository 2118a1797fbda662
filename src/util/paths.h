/* paths.h — what a path names, and whether the tools may read or write it.
 *
 * Why: a tool that reads a schedule and writes a trace can be told to write
 * over its own input (`taccl-run ag.xml --trace ag.xml`, or the same file
 * spelled `./ag.xml`, `d/../ag.xml`, through a symlink or a hard link), and
 * a reader that opens whatever a path names blocks forever on a FIFO.  Both
 * are decided by what the path *is*, not how it is spelled, so the answer
 * lives here, once, for every tool:
 *
 *   - path_same_file: do two paths name one file (st_dev/st_ino when both
 *     exist; the real path of the parent plus the last name when neither
 *     does yet);
 *   - path_check_output: may a tool write this output, before it does any
 *     work: not one of its inputs, not a directory, FIFO, socket or block
 *     device (a character device — /dev/null, a terminal — is written
 *     straight to and allowed), in a directory that exists;
 *   - path_open_input: open a file to read only if it is a regular file
 *     under a size bound, never blocking on the open.
 *
 * Messages name the user's path as given, never a temporary name. */
#ifndef TC_PATHS_H
#define TC_PATHS_H

#include "err.h"

/* 1 if paths a and b name the same file, else 0.  Both existing: the same
 * device and inode (any spelling, symlink or hard link).  Neither existing:
 * the same real parent directory and last name (a parent that cannot be
 * resolved: the same spelling).  One existing and not the other: 0. */
int path_same_file(const char *a, const char *b);

/* May a tool write the file `out`?  Checked before any work, so a refusal
 * costs nothing.  TC_OK, or TC_INPUT with one of (OUT as given):
 *   "OUT is the input IN: writing it would replace it"  (IN one of inputs;
 *       NULL entries are skipped)
 *   "OUT: cannot write: is a directory"
 *   "OUT: cannot write: not a regular file (a socket)"  (a block device)
 *   "OUT: cannot write: WHY"  (its directory does not exist or cannot be
 *       resolved; the system's reason)
 *   "OUT: cannot write: file name too long for the temporary file written
 *       beside it (at most N bytes)"
 * An existing character device (/dev/null, a terminal) or FIFO (a pipe) is
 * allowed and not compared with the inputs: writing to it replaces
 * nothing (file_write_atomic refuses a FIFO nothing reads when it writes,
 * at once).  Two outputs of
 * one run are compared by the caller with path_same_file. */
int path_check_output(const char *out, const char *const *inputs, int ninputs, tc_err *err);

/* Open path to read as a regular file of fewer than max_bytes bytes (<= 0:
 * no bound).  The open never blocks (O_NONBLOCK, cleared once the file is
 * known to be regular) and the descriptor is close-on-exec.  Returns the
 * descriptor, or -1 with TC_INPUT in err (WHAT names the kind of file, e.g.
 * "topology"):
 *   "PATH: cannot open: WHY"
 *   "PATH: is a directory, not a WHAT file"
 *   "PATH: not a regular file (a FIFO)"  (a socket, a character device, ...)
 *   "PATH: file too large (the limit is N MiB)"  (or GiB, or bytes) */
int path_open_input(const char *path, const char *what, long long max_bytes, tc_err *err);

#endif
