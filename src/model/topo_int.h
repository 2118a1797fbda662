/* topo_int.h — what topo.c and topo_json.c share and nobody else sees:
 * the private part of a loaded topology (route index, provenance strings,
 * warnings).  Include only from src/model/topo*.c. */
#ifndef TC_TOPO_INT_H
#define TC_TOPO_INT_H

#include "topo.h"

struct topo_priv {
    /* Route index. */
    int *adj_start;             /* [nranks + 1] into adj_dst / adj_link */
    int *adj_dst;               /* destinations of each rank, ascending */
    int *adj_link;              /* fastest link for (rank, adj_dst[i]) */
    int *sw_start;              /* [nranks + 1] into sw_list */
    int *sw_list;               /* switches of each rank, ascending */
    /* Provenance written back by topo_to_json: indices into strs, -1 none.
     * Notes are kept as their JSON text. */
    char **strs;
    int nstrs, capstrs;
    int description, notes;
    int device_source, device_notes;
    int local_source, local_notes;
    int collnet_source, collnet_notes;  /* the "collnet" object */
    int nlinks0, nswitches0, nnics0;    /* elements of node 0 */
    int *link_source, *link_notes;      /* [nlinks0] */
    int *switch_source, *switch_notes;  /* [nswitches0] */
    int *nvls_source, *nvls_notes;      /* [nswitches0]: the switch's "nvls" object */
    int *nic_source, *nic_notes;        /* [nnics0] */
    /* What the loader let pass but the user should hear: indices into strs. */
    int *warn;
    int nwarn, capwarn;
};

/* String i of the provenance pool, NULL for -1 or out of range. */
const char *topo_pool_get(const struct topo_priv *pv, int i);

#endif
