/* propose.c — sketches derived from a topology (rules in propose.h).
 *
 * Built as the JSON a user would write and read back through the sketch
 * loader, so a proposal is checked like any sketch and can be written into
 * the plan for the user to read, edit and reuse. */
#include "propose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../model/sketch.h"
#include "../util/file.h"
#include "../util/mem.h"

/* Node 0's NICs: their count, and the group size m when NIC k serves local
 * ranks k*m .. k*m+m-1 exactly (0 if the layout is not that regular). */
static int nic_layout(const topo *t, int *m_out, int *first_nic)
{
    int R = t->ranks_per_node, count = 0, m = -1, regular = 1;
    *first_nic = -1;
    for (int x = 0; x < t->nnics; x++) {
        const topo_nic *c = &t->nics[x];
        if (c->node != 0)
            continue;
        if (*first_nic < 0)
            *first_nic = x;
        if (m < 0)
            m = c->nranks;
        if (c->nranks != m)
            regular = 0;
        for (int i = 0; i < c->nranks && regular; i++)
            regular = c->ranks[i] == count * m + i;
        count++;
    }
    *m_out = regular && m > 0 && count * m == R ? m : 0;
    return count;
}

static cJSON *int_array(const int *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static void put_map(cJSON *obj, int key, const int *v, int n)
{
    char k[16];
    snprintf(k, sizeof k, "%d", key);
    cJSON_AddItemToObject(obj, k, int_array(v, n));
}

/* The sketch for one variant as JSON text; sym: keep symmetry_offsets. */
static char *variant(const topo *t, const char *name, const char *hyper, int chunkup, int rail,
                     int sym, const char *why)
{
    int R = t->ranks_per_node, N = t->nnodes, sw = topo_node_switch(t), m, x0;
    int nics = nic_layout(t, &m, &x0);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", name);
    cJSON_AddStringToObject(j, "description", why);
    cJSON_AddStringToObject(j, "source", "proposed by taccl-synth --plan from the topology "
                            "(src/plan/propose.h: the patterns of TACCL's published sketches)");
    cJSON_AddNumberToObject(j, "nnodes", N);
    cJSON *intra = cJSON_AddObjectToObject(j, "intranode_sketch");
    if (sw >= 0 && hyper) {
        cJSON_AddStringToObject(intra, "strategy", "switch");
        int *r = xmalloc((size_t)R * sizeof *r);
        for (int i = 0; i < R; i++)
            r[i] = i;
        cJSON *sws = cJSON_AddArrayToObject(intra, "switches");
        cJSON_AddItemToArray(sws, int_array(r, R));
        free(r);
        cJSON *hs = cJSON_AddArrayToObject(intra, "switch_hyperedge_strategy");
        cJSON_AddItemToArray(hs, cJSON_CreateString(hyper));
    } else {
        cJSON_AddStringToObject(intra, "strategy", "none");
    }
    int intra_rot = 0;
    if (N > 1 && nics > 0) {
        cJSON *inter = cJSON_AddObjectToObject(j, "internode_sketch");
        cJSON_AddStringToObject(inter, "strategy", "relay");
        cJSON *conn = cJSON_AddObjectToObject(inter, "internode_conn");
        if (rail && m > 1 && nics > 1) {
            /* every GPU to the same GPU of the other nodes with its own
             * chunks, through the NIC it shares with its group (rail 2:
             * also to the rest of that GPU's group there) */
            cJSON *rev = cJSON_AddObjectToObject(inter, "gpus_to_sender_rev_map");
            int *grp = xmalloc((size_t)m * sizeof *grp);
            for (int i = 0; i < R; i++) {
                int g0 = i / m * m;
                grp[0] = i;
                for (int j = 0, q = 1; j < m; j++)
                    if (g0 + j != i)
                        grp[q++] = g0 + j;
                put_map(conn, i, grp, rail == 2 ? m : 1);
                put_map(rev, i, &i, 1);
            }
            free(grp);
            intra_rot = sw >= 0 ? m : 0;
        } else if (m >= 1 && nics > 1) {
            cJSON *rev = cJSON_AddObjectToObject(inter, "gpus_to_sender_rev_map");
            int *grp = xmalloc((size_t)m * sizeof *grp);
            for (int k = 0; k < nics; k++) {
                int sender = k * m + m - 1, recv = k * m;
                put_map(conn, sender, &recv, 1);
                for (int i = 0; i < m; i++)
                    grp[i] = k * m + i;
                put_map(rev, sender, grp, m);
            }
            free(grp);
            if (m > 1)
                cJSON_AddBoolToObject(inter, "enforce_ordering", 1);
            intra_rot = sw >= 0 ? m : 0;
        } else {
            const topo_nic *c = &t->nics[x0];
            int s = c->ranks[0], r = c->nranks > 1 ? c->ranks[1] : c->ranks[0];
            put_map(conn, s, &r, 1);
        }
    } else if (N == 1 && sw >= 0) {
        intra_rot = 1;
    }
    if (sym) {
        cJSON *so = cJSON_AddArrayToObject(j, "symmetry_offsets");
        int pair[2];
        if (intra_rot > 0 && intra_rot < R) {
            pair[0] = intra_rot;
            pair[1] = R;
            cJSON_AddItemToArray(so, int_array(pair, 2));
        }
        if (N > 1) {
            pair[0] = R;
            pair[1] = N * R;
            cJSON_AddItemToArray(so, int_array(pair, 2));
        }
    }
    cJSON *hp = cJSON_AddObjectToObject(j, "hyperparameters");
    cJSON_AddNumberToObject(hp, "input_chunkup", chunkup);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    return text;
}

/* Keep the variant if it loads and fits t (without its symmetry if that is
 * what fails); 1 if kept. */
static int keep(const topo *t, proposal *p, const char *name, const char *hyper, int chunkup,
                int rail, const char *why, int small, int large)
{
    for (int sym = 1; sym >= 0; sym--) {
        char *text = variant(t, name, hyper, chunkup, rail, sym, why);
        tc_err e;
        sketch *s = sketch_parse(text, name, &e);
        int ok = s && sketch_check(s, t, &e) == TC_OK;
        sketch_free(s);
        if (ok) {
            memset(p, 0, sizeof *p);
            snprintf(p->name, sizeof p->name, "%s", name);
            p->json = text;
            p->small = small;
            p->large = large;
            return 1;
        }
        free(text);
    }
    return 0;
}

/* The packed trees' sketch (--route trees): nnodes and chunkup alone, so
 * a tree may take any hop the topology has; 1 if it loads and fits t. */
static int keep_trees(const topo *t, proposal *p, const char *tn, int chunkup)
{
    char name[96], why[160];
    snprintf(name, sizeof name, "%s-trees-cup%d", tn, chunkup);
    snprintf(why, sizeof why, "the packed out-trees alone (--route trees), no hop restricted, "
             "each chunk cut in %d", chunkup);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", name);
    cJSON_AddStringToObject(j, "description", why);
    cJSON_AddStringToObject(j, "source", "proposed by taccl-synth --plan from the topology "
                            "(src/plan/propose.h: the packed trees)");
    cJSON_AddNumberToObject(j, "nnodes", t->nnodes);
    cJSON *hp = cJSON_AddObjectToObject(j, "hyperparameters");
    cJSON_AddNumberToObject(hp, "input_chunkup", chunkup);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    tc_err e;
    sketch *s = sketch_parse(text, name, &e);
    int ok = s && sketch_check(s, t, &e) == TC_OK;
    sketch_free(s);
    if (!ok) {
        free(text);
        return 0;
    }
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->json = text;
    p->large = 1;
    p->trees = 1;
    return 1;
}

/* 1 if several nodes, and node 0 has several NICs, each serving a regular
 * group of more than one GPU (DGX-2: a NIC per pair). */
static int shared_nics(const topo *t)
{
    int m, x0;
    return t->nnodes > 1 && nic_layout(t, &m, &x0) > 1 && m > 1;
}

int propose_sketches(const topo *t, int trees, proposal *out)
{
    int n = 0, sw = topo_node_switch(t) >= 0;
    char name[96];
    /* the names become file names in the plan (sketches/NAME.json): the
     * topology's name made safe and cut so that every suffix fits whole,
     * which keeps the names distinct */
    char tn[64];
    file_safe_name(tn, sizeof tn, t->name && *t->name ? t->name : "topology");
    /* the packed trees first: seconds each, where a MILP sketch takes its
     * time limit */
    int ranks = t->nnodes * t->ranks_per_node;
    for (int k = 1; trees && k <= 16 && ranks < PROPOSE_TREES_RANKS &&
                    ranks * k <= PROPOSE_TREES_CHUNKS;
         k *= 2)
        n += keep_trees(t, &out[n], tn, k);
    if (sw) {
        snprintf(name, sizeof name, "%s-uc-max-cup1", tn);
        n += keep(t, &out[n], name, "uc-max", 1, 0, "the switch as one uc-max hyperedge (many "
                  "connections, few hops: small sizes)", 1, 0);
        snprintf(name, sizeof name, "%s-uc-min-cup1", tn);
        n += keep(t, &out[n], name, "uc-min", 1, 0, "the switch as one uc-min hyperedge (few "
                  "connections, less contention: large sizes)", 0, 1);
        snprintf(name, sizeof name, "%s-uc-min-cup2", tn);
        n += keep(t, &out[n], name, "uc-min", 2, 0, "uc-min with each chunk cut in two (more "
                  "pipelining: large sizes)", 0, 1);
        snprintf(name, sizeof name, "%s-uc-min-cup4", tn);
        n += keep(t, &out[n], name, "uc-min", 4, 0, "uc-min with each chunk cut in four (a "
                  "shorter pipeline fill and drain: the largest sizes)", 0, 1);
        if (shared_nics(t)) {
            snprintf(name, sizeof name, "%s-rails-cup1", tn);
            n += keep(t, &out[n], name, "uc-min", 1, 1, "uc-min; every GPU crosses to the same "
                      "GPU of the other nodes with its own chunks, through the NIC it shares",
                      1, 1);
            snprintf(name, sizeof name, "%s-rails-cup2", tn);
            n += keep(t, &out[n], name, "uc-min", 2, 1, "uc-min, every GPU through its shared "
                      "NIC, each chunk cut in two (every GPU's port takes NIC traffic: the "
                      "largest sizes)", 0, 1);
            snprintf(name, sizeof name, "%s-rails-group-cup2", tn);
            n += keep(t, &out[n], name, "uc-min", 2, 2, "uc-min, every GPU through its shared "
                      "NIC to the same GPU or to another GPU of its NIC group on the other "
                      "nodes, each chunk cut in two (the NICs' spare capacity takes some "
                      "chunks straight to a GPU a relay would otherwise serve: the largest "
                      "sizes)", 0, 1);
        }
    } else {
        snprintf(name, sizeof name, "%s-cup1", tn);
        n += keep(t, &out[n], name, NULL, 1, 0, "links only, the NIC pattern of the node", 1, 1);
        snprintf(name, sizeof name, "%s-cup2", tn);
        n += keep(t, &out[n], name, NULL, 2, 0, "links only, each chunk cut in two (large sizes)",
                  0, 1);
        snprintf(name, sizeof name, "%s-cup4", tn);
        n += keep(t, &out[n], name, NULL, 4, 0, "links only, each chunk cut in four (a shorter "
                  "pipeline fill and drain: the largest sizes)", 0, 1);
        snprintf(name, sizeof name, "%s-cup8", tn);
        n += keep(t, &out[n], name, NULL, 8, 0, "links only, each chunk cut in eight (the "
                  "shortest fill and drain: the largest sizes)", 0, 1);
        if (shared_nics(t)) {
            /* no GPU relays another's chunks to the NIC (MI250 x2 ReduceScatter
             * 1 GiB: 6840.6 us with the relay, 6503.3 so; docs/design.md
             * section 7a) */
            snprintf(name, sizeof name, "%s-rails-cup4", tn);
            n += keep(t, &out[n], name, NULL, 4, 1, "links only; every GPU crosses to the same "
                      "GPU of the other nodes with its own chunks, through the NIC it shares, "
                      "each chunk cut in four (large sizes)", 0, 1);
            snprintf(name, sizeof name, "%s-rails-cup8", tn);
            n += keep(t, &out[n], name, NULL, 8, 1, "links only; every GPU crosses to the same "
                      "GPU of the other nodes with its own chunks, through the NIC it shares, "
                      "each chunk cut in eight (the largest sizes)", 0, 1);
        }
    }
    return n;
}

void proposals_free(proposal *p, int n)
{
    for (int i = 0; i < n; i++) {
        free(p[i].json);
        p[i].json = NULL;
    }
}
