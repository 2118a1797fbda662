/* file.h — replace a file atomically.
 *
 * Every output the tools write (schedules, traces) goes through here: the
 * text goes to a temporary file beside the target, is synced and renamed
 * over it, so a reader sees the old file or the whole new one, never half
 * of one, and an error leaves the old file as it was.  A target that is
 * not a regular file (/dev/null, a FIFO, a terminal) is written straight
 * to instead, since renaming over it would replace the device itself. */
#ifndef TC_FILE_H
#define TC_FILE_H

#include <stddef.h>

#include "err.h"

/* Write len bytes of text as the file at path (permissions of a file being
 * replaced are kept).  TC_INPUT with "PATH: cannot write: why" on error. */
int file_write_atomic(const char *path, const char *text, size_t len, tc_err *err);

#endif
