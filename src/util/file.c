/* file.c — atomic replacement of a file (contract in file.h). */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mem.h"

/* Open a new file "PATH.tmp.XXXXXX" beside path with O_EXCL (mode 0666
 * less the umask, like any new file).  Fills tmp; returns fd or -1. */
static int open_temp_beside(const char *path, char *tmp, size_t tmpsz)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long seed = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 20) ^
                              ((unsigned long long)getpid() << 40);
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[7];
        unsigned long long x = seed + (unsigned long long)attempt * 0x9E3779B97F4A7C15ULL;
        x ^= x >> 31;
        x *= 0xBF58476D1CE4E5B9ULL;
        x ^= x >> 27;
        for (int i = 0; i < 6; i++) {
            suffix[i] = digits[x % 62];
            x /= 62;
        }
        suffix[6] = '\0';
        if ((size_t)snprintf(tmp, tmpsz, "%s.tmp.%s", path, suffix) >= tmpsz) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Best effort: make the rename itself durable. */
static void sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        return;
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* Write into an existing character device (/dev/null, a terminal) or a
 * FIFO that someone reads (a pipe, `-o >(gzip >x.gz)`): renaming a
 * temporary file over it would replace the device itself, so the bytes go
 * straight to it.  A FIFO is opened without blocking, so one with no
 * reader is an error at once instead of a hang. */
static int write_special(const char *path, const char *text, size_t len, tc_err *err)
{
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENXIO)
        return tc_err_set(err, TC_INPUT, "%s: cannot write: a FIFO that nothing reads", path);
    if (fd < 0)
        return tc_err_set(err, TC_INPUT, "%s: cannot write: %s", path, strerror(errno));
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    int rc = write_all(fd, text, len);
    int e = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc != 0)
        return tc_err_set(err, TC_INPUT, "%s: cannot write: %s", path, strerror(e));
    return TC_OK;
}

void file_hold_signals(file_hold *h)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGQUIT);
    sigprocmask(SIG_BLOCK, &block, &h->mask);
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, &h->xfsz);
}

void file_release_signals(const file_hold *h)
{
    sigaction(SIGXFSZ, &h->xfsz, NULL);
    sigprocmask(SIG_SETMASK, &h->mask, NULL);
}

static int write_atomic(const char *path, const char *text, size_t len, tc_err *err);

int file_write_atomic(const char *path, const char *text, size_t len, tc_err *err)
{
    file_hold h;
    file_hold_signals(&h);
    int rc = write_atomic(path, text, len, err);
    file_release_signals(&h);
    return rc;
}

static int write_atomic(const char *path, const char *text, size_t len, tc_err *err)
{
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return tc_err_set(err, TC_INPUT, "%s: cannot write: is a directory", path);
    /* /dev/null, a terminal or a read pipe takes the bytes; a socket or a
     * block device is no place for a file */
    if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
        return write_special(path, text, len, err);
    if (exists && !S_ISREG(st.st_mode))
        return tc_err_set(err, TC_INPUT, "%s: cannot write: not a regular file (%s)", path,
                          S_ISSOCK(st.st_mode) ? "a socket" : S_ISBLK(st.st_mode) ? "a block device" : "a special file");
    /* rename() would replace a file its owner made read-only (root too may
     * write anything): refuse, as writing it in place would */
    if (exists && (access(path, W_OK) != 0 || !(st.st_mode & 0222)))
        return tc_err_set(err, TC_INPUT, "%s: cannot write: read-only (no write permission)",
                          path);
    size_t plen = strlen(path);
    size_t tmpsz = plen + 16;
    char *tmp = xmalloc(tmpsz);
    int fd = open_temp_beside(path, tmp, tmpsz);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return tc_err_set(err, TC_INPUT, "%s: cannot write: %s", path, strerror(e));
    }
    /* Keep the permissions of a file being replaced. */
    if (exists)
        fchmod(fd, st.st_mode & 07777);
    int rc = write_all(fd, text, len);
    if (rc == 0)
        rc = fsync(fd);
    int e = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
        e = errno;
    }
    if (rc != 0) {
        unlink(tmp);
        free(tmp);
        return tc_err_set(err, TC_INPUT, "%s: cannot write: %s", path, strerror(e));
    }
    free(tmp);
    sync_parent_dir(path);
    return TC_OK;
}

size_t file_safe_name(char *out, size_t outsz, const char *in)
{
    if (outsz == 0)
        return 0;
    if (!in || !*in)
        in = "unnamed";
    size_t n = 0;
    for (; in[n] && n + 1 < outsz; n++) {
        unsigned char c = (unsigned char)in[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-' || c == '+' || (c == '.' && n > 0);
        out[n] = ok ? (char)c : '_';
    }
    out[n] = '\0';
    return n;
}
