/* baseline_tree.c — NCCL's double binary tree AllReduce: two complementary
 * trees over the ranks, each reducing up and broadcasting down half the
 * data, pipelined in chunks. */
#include "baseline_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

/* =================================================================== tree */

typedef struct {
    int n;
    int *parent;
    int *cstart, *child;    /* CSR children, ascending */
    int *depth, *height;
    int root, H;
} tree;

static void tree_free(tree *T)
{
    free(T->parent);
    free(T->cstart);
    free(T->child);
    free(T->depth);
    free(T->height);
}

/* Children, depths and heights from a parent array; 0 if it is not one
 * tree over all n ranks. */
static int tree_finish(tree *T)
{
    int n = T->n;
    T->cstart = xcalloc((size_t)n + 1, sizeof *T->cstart);
    T->child = xmalloc((size_t)n * sizeof *T->child);
    T->depth = xmalloc((size_t)n * sizeof *T->depth);
    T->height = xcalloc((size_t)n, sizeof *T->height);
    int *fill = xcalloc((size_t)n, sizeof *fill), *order = xmalloc((size_t)n * sizeof *order);
    T->root = -1;
    int roots = 0;
    for (int x = 0; x < n; x++) {
        if (T->parent[x] < 0) {
            T->root = x;
            roots++;
        } else
            T->cstart[T->parent[x] + 1]++;
    }
    for (int x = 0; x < n; x++)
        T->cstart[x + 1] += T->cstart[x];
    for (int x = 0; x < n; x++)
        if (T->parent[x] >= 0)
            T->child[T->cstart[T->parent[x]] + fill[T->parent[x]]++] = x;
    int ok = roots == 1, len = 0;
    if (ok) {
        order[len++] = T->root;
        T->depth[T->root] = 0;
        for (int i = 0; i < len; i++) {
            int x = order[i];
            for (int e = T->cstart[x]; e < T->cstart[x + 1]; e++) {
                T->depth[T->child[e]] = T->depth[x] + 1;
                order[len++] = T->child[e];
            }
        }
        ok = len == n;
    }
    if (ok)
        for (int i = n - 1; i >= 0; i--) {
            int x = order[i], p = T->parent[x];
            if (p >= 0 && T->height[p] < T->height[x] + 1)
                T->height[p] = T->height[x] + 1;
        }
    T->H = ok ? T->height[T->root] : 0;
    free(fill);
    free(order);
    return ok;
}

/* NCCL's binary tree over 0..n-1 (root 0 with one child): a node's parent
 * clears its lowest set bit and sets the next one up, or only clears it
 * when that would leave the range. */
static int btree_parent(int n, int x)
{
    if (x == 0)
        return -1;
    int bit = x & -x;
    int up = (x ^ bit) | (bit << 1);
    return up < n ? up : x ^ bit;
}

/* The second tree: the first mirrored (n even) or shifted by one (n odd),
 * so that the first tree's leaves are interior nodes of the second. */
static int dtree_parent(int n, int which, int x)
{
    if (which == 0)
        return btree_parent(n, x);
    if (n % 2) {
        int u = btree_parent(n, (x - 1 + n) % n);
        return u < 0 ? -1 : (u + 1) % n;
    }
    int u = btree_parent(n, n - 1 - x);
    return u < 0 ? -1 : n - 1 - u;
}

static int routable(const topo *t, int a, int b)
{
    return topo_route_of(t, a, b).kind != ROUTE_NONE && topo_route_of(t, b, a).kind != ROUTE_NONE;
}

/* Parent arrays of both trees.  One node whose ranks can all reach the
 * tree partners: the double binary tree over the ranks.  Several nodes:
 * NCCL's shape, the double binary tree over nodes with a chain inside each
 * node (tree 0 along the node's ring path from its first rank, tree 1 along
 * it reversed), joined at the chain heads through their NICs.  One node
 * lacking the links: both trees become chains along the ring. */
static int tree_parents(const topo *t, const int *given_ring, int *par0, int *par1, char *mode,
                        size_t modelen, tc_err *err)
{
    int n = t->nranks, N = t->nnodes, R = t->ranks_per_node;
    if (N == 1) {
        int ok = 1;
        for (int which = 0; which < 2 && ok; which++)
            for (int x = 0; x < n && ok; x++) {
                int p = dtree_parent(n, which, x);
                if (p >= 0 && !routable(t, x, p))
                    ok = 0;
            }
        if (ok) {
            for (int x = 0; x < n; x++) {
                par0[x] = dtree_parent(n, 0, x);
                par1[x] = dtree_parent(n, 1, x);
            }
            snprintf(mode, modelen, "double binary tree over the %d ranks", n);
            return TC_OK;
        }
    }
    baseline_rings rg;
    memset(&rg, 0, sizeof rg);
    if (!given_ring && baseline_find_rings(t, 1, &rg, err) != TC_OK) {
        tc_err_prefix(err, "tree: needs chains along a ring");
        return TC_INPUT;
    }
    const int *ring = given_ring ? given_ring : rg.order;
    if (N == 1) {
        for (int i = 0; i < n; i++) {
            par0[ring[i]] = i == 0 ? -1 : ring[i - 1];
            par1[ring[i]] = i == n - 1 ? -1 : ring[i + 1];
        }
        snprintf(mode, modelen, "two chains along a ring (the topology lacks the links of a "
                                "binary tree over its ranks)");
    } else {
        for (int u = 0; u < N; u++) {
            const int *path = ring + (size_t)u * R;
            int p0 = dtree_parent(N, 0, u), p1 = dtree_parent(N, 1, u);
            for (int i = 0; i < R; i++) {
                par0[path[i]] = i > 0 ? path[i - 1] : p0 < 0 ? -1 : ring[(size_t)p0 * R];
                par1[path[i]] = i < R - 1 ? path[i + 1]
                                          : p1 < 0 ? -1 : ring[(size_t)p1 * R + R - 1];
            }
        }
        snprintf(mode, modelen, "double binary tree over the %d nodes, a chain inside each node",
                 N);
    }
    baseline_rings_free(&rg);
    return TC_OK;
}

typedef struct {
    int t;      /* estimated time slot */
    int phase;  /* 0 reduce, 1 broadcast */
    int m;
} titem;

static int titem_cmp(const void *a, const void *b)
{
    const titem *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->phase != y->phase)
        return x->phase - y->phase;
    return x->m - y->m;
}

/* Steps of one tb in estimated-time order: reduce of piece m at m + height,
 * broadcast at m + H + depth.  idx[phase*M + m] = step index (or -1). */
static void tree_plan(int M, int has_red, int has_bc, int t_red, int t_bc, titem *it, int *nit,
                      int *idx)
{
    int k = 0;
    for (int m = 0; m < M; m++) {
        if (has_red)
            it[k++] = (titem){m + t_red, 0, m};
        if (has_bc)
            it[k++] = (titem){m + t_bc, 1, m};
    }
    qsort(it, (size_t)k, sizeof *it, titem_cmp);
    for (int i = 0; i < 2 * M; i++)
        idx[i] = -1;
    for (int i = 0; i < k; i++)
        idx[it[i].phase * M + it[i].m] = i;
    *nit = k;
}

/* One tree on channel `chan` over pieces at chunks base..base+M-1 of the
 * buffer, for rank r.  Tbs: leaf — (parent, parent); root — one per child;
 * interior — one per child but the last, U = (send parent, recv last child)
 * reducing and sending up in one rrs, D = (send last child, recv parent)
 * forwarding the broadcast in one rcs. */
static void tree_rank(bld *b, const tree *T, int r, int chan, int base)
{
    int M = b->M;
    int P = T->parent[r], nc = T->cstart[r + 1] - T->cstart[r];
    const int *ch = T->child + T->cstart[r];
    int t_red = T->height[r], t_bc = T->H + T->depth[r];
    titem *it = xmalloc((size_t)2 * M * sizeof *it);
    int nit;
    if (nc == 0) {
        int tb = bl_tb_new(b, r, P, P, chan);
        int *idx = xmalloc((size_t)2 * M * sizeof *idx);
        tree_plan(M, 1, 1, t_red, t_bc, it, &nit, idx);
        for (int i = 0; i < nit; i++) {
            int c = base + it[i].m;
            if (it[i].phase == 0)
                bl_emit(b, r, tb, ST_S, BUF_I, c, BUF_O, c, 1, NODEP);
            else
                bl_emit(b, r, tb, ST_R, BUF_O, c, BUF_O, c, 1, NODEP);
        }
        free(idx);
        free(it);
        return;
    }
    /* tbs: T_i for the children handled by their own tb */
    int nown = P < 0 ? nc : nc - 1;
    int tb0 = b->p->gpus[r].ntbs;    /* this tree's tbs are tb0, tb0+1, ... */
    for (int i = 0; i < nown; i++)
        bl_tb_new(b, r, ch[i], ch[i], chan);
    if (P >= 0) {
        bl_tb_new(b, r, P, ch[nc - 1], chan);      /* U */
        bl_tb_new(b, r, ch[nc - 1], P, chan);      /* D */
    }
    /* plans: step indices of every (tb, phase, piece) before emitting */
    int ntb = nown + (P >= 0 ? 2 : 0);
    int *idx = xmalloc((size_t)ntb * 2 * M * sizeof *idx);
    titem *plans = xmalloc((size_t)ntb * 2 * M * sizeof *plans);
    int nplan[10];
    for (int i = 0; i < nown; i++)
        tree_plan(M, 1, 1, t_red, t_bc, plans + (size_t)i * 2 * M, &nplan[i], idx + (size_t)i * 2 * M);
    if (P >= 0) {
        tree_plan(M, 1, 0, t_red, t_bc, plans + (size_t)nown * 2 * M, &nplan[nown],
                  idx + (size_t)nown * 2 * M);
        tree_plan(M, 0, 1, t_red, t_bc, plans + (size_t)(nown + 1) * 2 * M, &nplan[nown + 1],
                  idx + (size_t)(nown + 1) * 2 * M);
    }
#define REF(i, ph, m) ((sref){tb0 + (i), idx[(size_t)(i) * 2 * M + (ph) * M + (m)]})
    /* the tb index (0-based among this rank's tbs of this tree) doing the
     * last reduction: root T_{nc-1}; interior U */
    for (int i = 0; i < ntb; i++) {
        int tb = tb0 + i;
        const titem *pl = plans + (size_t)i * 2 * M;
        for (int s = 0; s < nplan[i]; s++) {
            int m = pl[s].m, c = base + m;
            if (i < nown) {
                if (pl[s].phase == 0) {
                    sref dep = i == 0 ? NODEP : REF(i - 1, 0, m);
                    bl_emit(b, r, tb, ST_RRC, i == 0 ? BUF_I : BUF_O, c, BUF_O, c, 1, dep);
                } else {
                    sref dep = P < 0 ? REF(nc - 1, 0, m) : REF(nown + 1, 1, m);
                    bl_emit(b, r, tb, ST_S, BUF_O, c, BUF_O, c, 1, dep);
                }
            } else if (i == nown) {             /* U: reduce the last child, send up */
                sref dep = nown == 0 ? NODEP : REF(nown - 1, 0, m);
                bl_emit(b, r, tb, ST_RRS, nown == 0 ? BUF_I : BUF_O, c, BUF_O, c, 1, dep);
            } else {                            /* D: broadcast from parent, forward */
                bl_emit(b, r, tb, ST_RCS, BUF_O, c, BUF_O, c, 1, NODEP);
            }
        }
    }
#undef REF
    free(idx);
    free(plans);
    free(it);
}

/* The two trees of pair c: over ring c's node paths when rings are given
 * (several nodes: each pair leaves and enters a node through that ring's
 * NICs, as NCCL's tree channels follow its ring channels), else the same
 * for every pair. */
static int pair_trees(bld *b, const bl_args *a, int c, tree T[2], char *mode, size_t modelen,
                      tc_err *err)
{
    int n = b->n;
    memset(T, 0, 2 * sizeof *T);
    for (int w = 0; w < 2; w++) {
        T[w].n = n;
        T[w].parent = xmalloc((size_t)n * sizeof(int));
    }
    const baseline_rings *R = a && a->ri ? a->ri->rings : NULL;
    const int *ring = R && R->nrings > 0 && b->t->nnodes > 1
                          ? R->order + (size_t)(c % R->nrings) * n : NULL;
    int rc = TC_OK;
    if (a && a->graph) {
        int own = 0;
        for (int w = 0; w < 2; w++)
            own = bl_graph_tree(b->t, a->graph, 2 * c + w, T[w].parent);
        snprintf(mode, modelen, "NCCL's %s channels from %s: a chain inside each node%s",
                 own ? "tree" : "ring", a->graph->label,
                 b->t->nnodes > 1 ? ", the double binary tree over the nodes" : "");
    } else {
        rc = tree_parents(b->t, ring, T[0].parent, T[1].parent, mode, modelen, err);
    }
    if (rc == TC_OK)
        for (int w = 0; w < 2; w++)
            if (!tree_finish(&T[w]))
                rc = tc_err_set(err, TC_INPUT, "tree: internal error: tree %d is not a tree", w);
    for (int w = 0; w < 2 && rc == TC_OK; w++)
        for (int x = 0; x < n; x++)
            if (T[w].cstart[x + 1] - T[w].cstart[x] > 3)
                rc = tc_err_set(err, TC_INPUT, "tree: internal error: rank %d has more than 3 "
                                "children", x);
    return rc;
}

static int tree_allreduce(bld *b, const bl_args *a, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M;
    int rc = bl_new_prog(b, 2 * K * M, 0, err) ? TC_OK : TC_INPUT;
    for (int c = 0; c < K && rc == TC_OK; c++) {
        tree T[2];
        rc = pair_trees(b, a, c, T, a->mode, a->modelen, err);
        if (rc == TC_OK)
            for (int r = 0; r < n; r++)
                for (int w = 0; w < 2; w++)
                    tree_rank(b, &T[w], r, 2 * c + w, (c * 2 + w) * M);
        for (int w = 0; w < 2; w++)
            tree_free(&T[w]);
    }
    if (rc == TC_OK)
        b->p->inplace = 1;
    return rc;
}

int bl_build_tree(bld *b, const bl_args *a, tc_err *err)
{
    return tree_allreduce(b, a, err);
}
