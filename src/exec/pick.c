/* pick.c — which loaded schedule a runtime runs for a call (pick.h).
 *
 * Why here: `taccl-run DIR` must run, at each size, the file the runtime
 * would pick, or say that NCCL runs the call; the rules belong to the
 * runtimes, so they sit beside the loader checks, not in the synthesizer. */
#include "pick.h"

#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sched/xml.h"
#include "../util/mem.h"

struct pick_set {
    int n;              /* files loaded */
    int nnames;         /* files found (more than n only while loading fails) */
    prog **progs;
    char **names;
};

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_xml(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".xml") && name[0] != '.';
}

pick_set *pick_set_load(const char *dir, tc_err *err)
{
    DIR *d = opendir(dir);
    if (!d) {
        tc_err_set(err, TC_INPUT, "%s: cannot read the directory", dir);
        return NULL;
    }
    int n = 0, cap = 0;
    char **names = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_xml(e->d_name))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            names = xrealloc(names, (size_t)cap * sizeof *names);
        }
        names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (n == 0) {
        /* a plan whose every size NCCL serves is a plan: its plan.json says
         * so, and the set is empty; any other directory is a mistake */
        char pj[4200];
        struct stat st;
        snprintf(pj, sizeof pj, "%s/plan.json", dir);
        free(names);
        if (stat(pj, &st) != 0 || !S_ISREG(st.st_mode)) {
            tc_err_set(err, TC_INPUT, "%s: no schedule (*.xml) in the directory", dir);
            return NULL;
        }
        return xcalloc(1, sizeof(pick_set));
    }
    qsort(names, (size_t)n, sizeof *names, name_cmp);
    pick_set *s = xcalloc(1, sizeof *s);
    s->names = names;
    s->nnames = n;
    s->progs = xcalloc((size_t)n, sizeof *s->progs);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *path = xmalloc(len);
        snprintf(path, len, "%s/%s", dir, names[i]);
        s->progs[i] = prog_read_xml(path, err);
        free(path);
        s->n = i + 1;
        if (!s->progs[i]) {
            pick_set_free(s);
            return NULL;
        }
    }
    return s;
}

void pick_set_free(pick_set *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        prog_free(s->progs[i]);
    for (int i = 0; i < s->nnames; i++)
        free(s->names[i]);
    free(s->progs);
    free(s->names);
    free(s);
}

int pick_set_count(const pick_set *s)
{
    return s ? s->n : 0;
}

const prog *pick_set_prog(const pick_set *s, int i)
{
    return i >= 0 && i < s->n ? s->progs[i] : NULL;
}

const char *pick_set_name(const pick_set *s, int i)
{
    return i >= 0 && i < s->n ? s->names[i] : NULL;
}

runtime pick_set_target(const pick_set *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->progs[i] && s->progs[i]->target != RT_ANY)
            return s->progs[i]->target;
    return RT_MSCCL;
}

int pick_matches(const prog *p, coll_kind k, int ngpus, int inplace, long long bytes,
                 runtime rt)
{
    const runtime_info *ri = runtime_get(rt);
    if (!p || p->coll != k || p->ngpus != ngpus || p->nchunksperloop <= 0)
        return 0;
    if (bytes % (4LL * p->nchunksperloop) != 0)
        return 0;
    if (bytes < p->min_bytes)
        return 0;
    if (!ri->inplace_only) {
        if (p->max_bytes != 0 && bytes > p->max_bytes)
            return 0;
        return inplace ? p->inplace : p->outofplace;
    }
    if (p->max_bytes == 0 || bytes >= p->max_bytes)
        return 0;
    return (inplace != 0) == (p->inplace != 0);
}

int pick_schedule(const pick_set *s, coll_kind k, int ngpus, int inplace, long long bytes,
                  runtime rt)
{
    int n = s ? s->n : 0, most = runtime_get(rt)->max_files;
    if (most > 0 && n > most)
        n = most;       /* the rest are not loaded */
    for (int i = 0; i < n; i++)
        if (pick_matches(s->progs[i], k, ngpus, inplace, bytes, rt))
            return i;
    return -1;
}

int pick_fallback(const pick_set *s, coll_kind k, int ngpus, int inplace, long long bytes,
                  runtime rt, long long *padded, int *file)
{
    int n = s ? s->n : 0, most = runtime_get(rt)->max_files;
    int loaded = most > 0 && n > most ? most : n;
    *padded = 0;
    *file = -1;
    for (int i = 0; i < loaded; i++) {
        long long unit = 4LL * (s->progs[i]->nchunksperloop > 0 ? s->progs[i]->nchunksperloop
                                                                  : 1);
        long long p = (bytes + unit - 1) / unit * unit;
        int at = pick_schedule(s, k, ngpus, inplace, p, rt);
        if (at >= 0 && (*file < 0 || p < *padded)) {
            *padded = p;
            *file = at;
        }
    }
    if (*file >= 0)
        return PICK_PADDED;
    for (int i = loaded; i < n; i++)
        if (pick_matches(s->progs[i], k, ngpus, inplace, bytes, rt)) {
            *file = i;
            return PICK_NOT_LOADED;
        }
    return PICK_NO_FILE;
}
