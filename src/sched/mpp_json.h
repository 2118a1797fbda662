/* mpp_json.h — the pieces of MSCCL++ plan JSON that every writer of one
 * spells the same way (mpp_write.c from the lowering, mpp_nvls.c and
 * mpp_allpairs.c from a collective): the plan's top level with its message
 * range, buffer references, channel lists, synchronisations, and the text.
 *
 * Why one place: the key order and the message-size range are what
 * MSCCL++'s parser and selector read (docs/mscclpp.md sections 2 and 10); a
 * writer that spelled them its own way would differ from the others in
 * bytes without differing in meaning. */
#ifndef TC_MPP_JSON_H
#define TC_MPP_JSON_H

#include <cjson/cJSON.h>

#include "mpp.h"

/* The plan's top level, its "gpus" array empty, for p under o: name,
 * collective, protocol ("Simple" or "LL"), inplace, reuse_resources false,
 * gpus, threads per block, double scratch (LL), alignment, and the message
 * range [o->min_bytes, min(o->max_bytes - 1, cap)], cap being the largest
 * message every byte offset of the plan keeps within 32 bits.  NULL with err
 * set (TC_INPUT) when the range is empty. */
cJSON *mpp_j_plan(const prog *p, const mpp_opts *o, int ll, unsigned long long cap, tc_err *err);

/* j (deleted) as text with a trailing newline, malloc'd; NULL with err set
 * when out of memory. */
char *mpp_j_text(cJSON *j, tc_err *err);

/* An array of the n ints v. */
cJSON *mpp_j_ints(const int *v, int n);

/* {"name": "nop"}: the block's __syncthreads. */
cJSON *mpp_j_nop(void);

/* {"name": name, "channel_ids": ids, "channel_type": type}: a signal, wait,
 * flush or their relaxed forms on n block-local channels. */
cJSON *mpp_j_sync(const char *name, const char *type, const int *ids, int n);

/* A buffer reference of size chunks at index: a local buffer ("type":
 * type) when type is given, else a remote or switch one ({key: id}). */
cJSON *mpp_j_ref(const char *key, int id, const char *type, int index, int size);

/* A block's channels of one type: {"channel_type": type, "channel_ids":
 * ids}, ids being the rank's channel numbers of that type. */
cJSON *mpp_j_chans(const char *type, const int *ids, int n);

#endif
