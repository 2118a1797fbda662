/* paths.c — file identity, output and input checks (contract in paths.h).
 *
 * Why a file of its own: the same questions (is this output one of my
 * inputs? is this input a file I can read without blocking?) come up in
 * every tool and every loader, and each answered them a little differently
 * or not at all; here they are answered once, by what the path names. */
/* realpath() is in POSIX's XSI option: ask for it explicitly. */
#define _XOPEN_SOURCE 700
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem.h"

/* The characters file_write_atomic adds to an output's name for the
 * temporary file it writes beside it (".tmp.XXXXXX", util/file.c). */
enum { TEMP_SUFFIX = 11 };

/* What kind of file a mode is, for "not a regular file (...)". */
static const char *kind_name(mode_t m)
{
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISDIR(m))
        return "a directory";
    return "of an unknown kind";
}

/* The directory part of path (to free; "." when there is none, "/" for a
 * name at the root) and, in *base, its last name (empty when path ends in
 * '/'). */
static char *split_dir(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    size_t n = (size_t)(slash - path);
    char *dir = xmalloc(n + 1);
    memcpy(dir, path, n);
    dir[n] = '\0';
    return dir;
}

/* The real path of path's directory joined with its last name (to free),
 * or NULL if the directory cannot be resolved. */
static char *canonical_new(const char *path)
{
    const char *base;
    char *dir = split_dir(path, &base);
    char *real = realpath(dir, NULL);
    char *out = NULL;
    if (real) {
        size_t n = strlen(real) + strlen(base) + 2;
        out = xmalloc(n);
        snprintf(out, n, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base);
    }
    free(real);
    free(dir);
    return out;
}

int path_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea || eb)
        return 0;
    char *ca = canonical_new(a), *cb = canonical_new(b);
    int same = ca && cb ? !strcmp(ca, cb) : !strcmp(a, b);
    free(ca);
    free(cb);
    return same;
}

/* The directory out goes in exists and has room for the temporary file's
 * longer name. */
static int check_output_dir(const char *out, tc_err *err)
{
    const char *base;
    char *dir = split_dir(out, &base);
    struct stat ds;
    int rc = TC_OK;
    if (!*base) {
        rc = tc_err_set(err, TC_INPUT, "%s: cannot write: not a file name (it ends in /)", out);
    } else if (stat(dir, &ds) != 0) {
        rc = tc_err_set(err, TC_INPUT, "%s: cannot write: %s", out, strerror(errno));
    } else if (!S_ISDIR(ds.st_mode)) {
        rc = tc_err_set(err, TC_INPUT, "%s: cannot write: %s", out, strerror(ENOTDIR));
    } else {
        long name_max = pathconf(dir, _PC_NAME_MAX);
        if (name_max <= 0)
            name_max = 255;
        if ((long)strlen(base) + TEMP_SUFFIX > name_max)
            rc = tc_err_set(err, TC_INPUT, "%s: cannot write: file name too long for the "
                            "temporary file written beside it (at most %ld bytes)", out,
                            name_max - TEMP_SUFFIX);
    }
    free(dir);
    return rc;
}

int path_check_output(const char *out, const char *const *inputs, int ninputs, tc_err *err)
{
    struct stat st;
    if (stat(out, &st) != 0) {
        if (errno != ENOENT)
            return tc_err_set(err, TC_INPUT, "%s: cannot write: %s", out, strerror(errno));
        return check_output_dir(out, err);
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
        return TC_OK;   /* /dev/null, a terminal, a pipe: written straight to
                           (a FIFO nothing reads is refused when written, at
                           once: file_write_atomic; probing it here would
                           end a reader's input early) */
    if (S_ISDIR(st.st_mode))
        return tc_err_set(err, TC_INPUT, "%s: cannot write: is a directory", out);
    if (!S_ISREG(st.st_mode))
        return tc_err_set(err, TC_INPUT, "%s: cannot write: not a regular file (%s)", out,
                          kind_name(st.st_mode));
    for (int i = 0; i < ninputs; i++)
        if (inputs[i] && path_same_file(out, inputs[i]))
            return tc_err_set(err, TC_INPUT, "%s is the input %s: writing it would replace it",
                              out, inputs[i]);
    return check_output_dir(out, err);
}

/* "file too large (the limit is ...)": in GiB or MiB when whole, else bytes. */
static int too_large(const char *path, long long max, tc_err *err)
{
    if (max % (1LL << 30) == 0)
        return tc_err_set(err, TC_INPUT, "%s: file too large (the limit is %lld GiB)", path,
                          max >> 30);
    if (max % (1LL << 20) == 0)
        return tc_err_set(err, TC_INPUT, "%s: file too large (the limit is %lld MiB)", path,
                          max >> 20);
    return tc_err_set(err, TC_INPUT, "%s: file too large (the limit is %lld bytes)", path, max);
}

int path_open_input(const char *path, const char *what, long long max_bytes, tc_err *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0) {
        int e = errno;
        /* a socket cannot be opened at all (ENXIO): say what it is */
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
            tc_err_set(err, TC_INPUT, "%s: not a regular file (%s)", path, kind_name(st.st_mode));
        else
            tc_err_set(err, TC_INPUT, "%s: cannot open: %s", path, strerror(e));
        return -1;
    }
    int flags;
    if (fstat(fd, &st) != 0)
        tc_err_set(err, TC_INPUT, "%s: cannot read: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        tc_err_set(err, TC_INPUT, "%s: is a directory, not a %s file", path, what ? what : "regular");
    else if (!S_ISREG(st.st_mode))
        tc_err_set(err, TC_INPUT, "%s: not a regular file (%s)", path, kind_name(st.st_mode));
    else if (max_bytes > 0 && (long long)st.st_size >= max_bytes)
        too_large(path, max_bytes, err);
    else if ((flags = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1)
        tc_err_set(err, TC_INPUT, "%s: cannot read: %s", path, strerror(errno));
    else
        return fd;
    close(fd);
    return -1;
}
