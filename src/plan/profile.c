/* profile.c — a job's calls by size (contract in profile.h).
 *
 * Why its own file: the plan weighs files by it, but reading the user's
 * text is a job apart from choosing. */
#define _XOPEN_SOURCE 700     /* strtok_r */
#include "profile.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonin.h"
#include "../util/mem.h"

#define PROFILE_MAX_BYTES (64L << 20)
#define MAXF 8

/* Split line s (modified) into at most MAXF fields at spaces, tabs and
 * commas; the number of fields, MAXF + 1 if more. */
static int split(char *s, char **f)
{
    int n = 0;
    char *st = NULL;
    for (char *p = strtok_r(s, " \t\r,", &st); p; p = strtok_r(NULL, " \t\r,", &st))
        if (n < MAXF)
            f[n++] = p;
        else
            return MAXF + 1;
    return n;
}

/* A whole positive integer; -1 if s is not one. */
static long long whole(const char *s)
{
    if (!*s || strspn(s, "0123456789") != strlen(s))
        return -1;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    return errno == ERANGE || v <= 0 ? -1 : v;
}

static int add(profile *p, int *cap, long long bytes, double count)
{
    p->calls = xgrow(p->calls, cap, p->n + 1, sizeof *p->calls);
    p->calls[p->n++] = (profile_call){bytes, count};
    p->total += count;
    return TC_OK;
}

int profile_load(const char *path, profile *out, tc_err *err)
{
    static const jsonin_doc doc = {"profile", PROFILE_MAX_BYTES, 0};
    memset(out, 0, sizeof *out);
    char *text = jsonin_read_file(path, &doc, err);
    if (!text)
        return TC_INPUT;
    int cap = 0, line = 0, rc = TC_OK;
    char *save = NULL;
    for (char *l = text; rc == TC_OK && l; l = save) {
        char *nl = strchr(l, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl)
            *nl = '\0';
        line++;
        while (isspace((unsigned char)*l))
            l++;
        if (!*l || *l == '#' || strstr(l, "NCCL INFO") || strstr(l, "NCCL WARN"))
            continue;
        char *f[MAXF];
        int n = split(l, f);
        if (line == 1 && n == 2 && !strcmp(f[0], "bytes") && !strcmp(f[1], "count"))
            continue;
        long long b = n >= 1 ? whole(f[0]) : -1;
        if (n == 2) {
            long long c = whole(f[1]);
            if (b < 0 || c < 0)
                rc = tc_err_set(err, TC_INPUT, "%s:%d: expected \"BYTES COUNT\", two positive "
                                "whole numbers, got '%s %s'", path, line, f[0], f[1]);
            else
                add(out, &cap, b, (double)c);
        } else if (n >= 6 && b > 0 && whole(f[1]) > 0 && isalpha((unsigned char)f[2][0])) {
            add(out, &cap, b, 1);      /* an nccl-tests row: one call of its size */
        } else {
            rc = tc_err_set(err, TC_INPUT, "%s:%d: expected \"BYTES COUNT\" or an nccl-tests "
                            "row (size count type redop root time ...), got '%s%s'", path,
                            line, n > 0 ? f[0] : "", n > 1 ? " ..." : "");
        }
    }
    free(text);
    if (rc == TC_OK && out->n == 0)
        rc = tc_err_set(err, TC_INPUT, "%s: lists no call (expected \"BYTES COUNT\" lines or "
                        "nccl-tests rows)", path);
    if (rc != TC_OK)
        profile_free(out);
    return rc;
}

void profile_free(profile *p)
{
    free(p->calls);
    memset(p, 0, sizeof *p);
}
