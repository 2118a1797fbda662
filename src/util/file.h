/* file.h — replace a file atomically.
 *
 * Every output the tools write (schedules, traces) goes through here: the
 * text goes to a temporary file beside the target, is synced and renamed
 * over it, so a reader sees the old file or the whole new one, never half
 * of one, and an error leaves the old file as it was.  A character device
 * (/dev/null, a terminal) or a FIFO with a reader (a pipe) is written
 * straight to instead, since renaming over it would replace the device
 * itself; a FIFO nothing reads is an error (not a hang), and any other
 * target that is not a regular file (a socket, a block device) is refused. */
#ifndef TC_FILE_H
#define TC_FILE_H

#include <signal.h>
#include <stddef.h>

#include "err.h"

/* While a temporary file or directory exists, the signals that would end
 * the process with it left behind are held: SIGINT, SIGTERM, SIGHUP and
 * SIGQUIT are blocked (delivered when released, after the rename or the
 * cleanup), and SIGXFSZ (a file-size limit, ulimit -f) is ignored, so the
 * write fails with EFBIG and is cleaned up like any full disk.  Holds nest:
 * each release restores what its hold found. */
typedef struct {
    sigset_t mask;
    struct sigaction xfsz;
} file_hold;

void file_hold_signals(file_hold *h);
void file_release_signals(const file_hold *h);

/* Write len bytes of text as the file at path (permissions of a file being
 * replaced are kept; a read-only file is not replaced).  Signals are held
 * while the temporary file exists.  TC_INPUT with "PATH: cannot write:
 * why" on error, naming path, never the temporary file. */
int file_write_atomic(const char *path, const char *text, size_t len, tc_err *err);

/* A name from an input file (a topology's or a sketch's name) reduced to a
 * safe file name of at most outsz - 1 bytes: letters, digits, '.', '_',
 * '-' and '+' kept, every other byte (a '/', a space, a control byte, each
 * byte of a non-ASCII character) becomes '_', and a leading '.' (".",
 * "..", hidden files) becomes '_'; an empty name becomes "unnamed".  It
 * never contains a path separator, so it names a file in the directory it
 * is joined to and nowhere else.  Returns the length written. */
size_t file_safe_name(char *out, size_t outsz, const char *in);

#endif
