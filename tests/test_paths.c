/* test_paths.c — util/paths: one file under every spelling (./x, d/../x, a
 * symlink, a hard link; and for files not yet written, the real parent plus
 * the name), outputs refused when they are an input or not a file that can
 * be replaced (/dev/null allowed), and inputs opened only as regular files,
 * a FIFO refused at once instead of blocking the open. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/paths.h"

/* A scratch directory with a file "x" (3 bytes) and a subdirectory "d". */
typedef struct {
    char dir[64];
    char x[128], d[128];
} scratch;

static void scratch_make(scratch *s)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/test_paths_XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    snprintf(s->x, sizeof s->x, "%s/x", s->dir);
    snprintf(s->d, sizeof s->d, "%s/d", s->dir);
    FILE *f = fopen(s->x, "w");
    assert_non_null(f);
    fputs("abc", f);
    fclose(f);
    assert_int_equal(mkdir(s->d, 0700), 0);
}

static void scratch_remove(scratch *s)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    assert_int_equal(system(cmd), 0);
}

static void test_same_file(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/d/../x", s.dir);
    assert_int_equal(path_same_file(s.x, a), 1);
    snprintf(a, sizeof a, "%s/./x", s.dir);
    assert_int_equal(path_same_file(s.x, a), 1);
    snprintf(a, sizeof a, "%s/link", s.dir);
    assert_int_equal(symlink("x", a), 0);
    assert_int_equal(path_same_file(a, s.x), 1);
    snprintf(a, sizeof a, "%s/hard", s.dir);
    assert_int_equal(link(s.x, a), 0);
    assert_int_equal(path_same_file(a, s.x), 1);
    /* a copy is another file */
    snprintf(a, sizeof a, "%s/copy", s.dir);
    FILE *f = fopen(a, "w");
    assert_non_null(f);
    fputs("abc", f);
    fclose(f);
    assert_int_equal(path_same_file(a, s.x), 0);
    /* not written yet: the same real directory and name */
    snprintf(a, sizeof a, "%s/new", s.dir);
    snprintf(b, sizeof b, "%s/d/../new", s.dir);
    assert_int_equal(path_same_file(a, b), 1);
    snprintf(b, sizeof b, "%s/d/new", s.dir);
    assert_int_equal(path_same_file(a, b), 0);
    /* one exists, the other not */
    assert_int_equal(path_same_file(a, s.x), 0);
    scratch_remove(&s);
}

static void test_check_output(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    char out[256], want[600];
    tc_err e;
    const char *inputs[] = {NULL, s.x};

    snprintf(out, sizeof out, "%s/d/../x", s.dir);
    assert_int_equal(path_check_output(out, inputs, 2, &e), TC_INPUT);
    snprintf(want, sizeof want, "%s is the input %s: writing it would replace it", out, s.x);
    assert_string_equal(e.msg, want);

    snprintf(out, sizeof out, "%s/new", s.dir);
    assert_int_equal(path_check_output(out, inputs, 2, &e), TC_OK);
    assert_int_equal(path_check_output(s.x, NULL, 0, &e), TC_OK);   /* replacing a non-input */

    assert_int_equal(path_check_output(s.d, inputs, 2, &e), TC_INPUT);
    snprintf(want, sizeof want, "%s: cannot write: is a directory", s.d);
    assert_string_equal(e.msg, want);

    snprintf(out, sizeof out, "%s/fifo", s.dir);
    assert_int_equal(mkfifo(out, 0600), 0);
    /* a FIFO is a pipe to write through: checked when written (a FIFO
     * nothing reads is refused then, at once: file_write_atomic) */
    assert_int_equal(path_check_output(out, inputs, 2, &e), TC_OK);

    assert_int_equal(path_check_output("/dev/null", inputs, 2, &e), TC_OK);

    snprintf(out, sizeof out, "%s/no/such/dir/t.json", s.dir);
    assert_int_equal(path_check_output(out, inputs, 2, &e), TC_INPUT);
    snprintf(want, sizeof want, "%s: cannot write: No such file or directory", out);
    assert_string_equal(e.msg, want);

    snprintf(out, sizeof out, "%s/x/t.json", s.dir);      /* x is a file */
    assert_int_equal(path_check_output(out, inputs, 2, &e), TC_INPUT);
    snprintf(want, sizeof want, "%s: cannot write: Not a directory", out);
    assert_string_equal(e.msg, want);

    /* a name that fits, but not with the temporary file's suffix */
    char name[250];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    char longp[400];
    snprintf(longp, sizeof longp, "%s/%s", s.dir, name);
    assert_int_equal(path_check_output(longp, inputs, 2, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, ": cannot write: file name too long for the temporary file"));
    assert_null(strstr(e.msg, ".tmp."));
    scratch_remove(&s);
}

static void test_open_input(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    char p[256], want[600];
    tc_err e;

    int fd = path_open_input(s.x, "widget", 0, &e);
    assert_true(fd >= 0);
    char buf[8];
    assert_int_equal(read(fd, buf, sizeof buf), 3);     /* blocking again, reads all */
    close(fd);

    fd = path_open_input(s.x, "widget", 4, &e);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(path_open_input(s.x, "widget", 3, &e), -1);
    snprintf(want, sizeof want, "%s: file too large (the limit is 3 bytes)", s.x);
    assert_string_equal(e.msg, want);

    assert_int_equal(path_open_input(s.d, "widget", 0, &e), -1);
    snprintf(want, sizeof want, "%s: is a directory, not a widget file", s.d);
    assert_string_equal(e.msg, want);

    snprintf(p, sizeof p, "%s/fifo", s.dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(path_open_input(p, "widget", 0, &e), -1);
    snprintf(want, sizeof want, "%s: not a regular file (a FIFO)", p);
    assert_string_equal(e.msg, want);

    assert_int_equal(path_open_input("/dev/null", "widget", 0, &e), -1);
    assert_string_equal(e.msg, "/dev/null: not a regular file (a character device)");

    /* a socket cannot even be opened: said as what it is */
    snprintf(p, sizeof p, "%s/sock", s.dir);
    int sk = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(sk >= 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    assert_true(strlen(p) < sizeof sa.sun_path);
    memcpy(sa.sun_path, p, strlen(p) + 1);
    assert_int_equal(bind(sk, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(path_open_input(p, "widget", 0, &e), -1);
    snprintf(want, sizeof want, "%s: not a regular file (a socket)", p);
    assert_string_equal(e.msg, want);
    close(sk);

    snprintf(p, sizeof p, "%s/nope", s.dir);
    assert_int_equal(path_open_input(p, "widget", 0, &e), -1);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", p);
    assert_string_equal(e.msg, want);
    scratch_remove(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_file),
        cmocka_unit_test(test_check_output),
        cmocka_unit_test(test_open_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
