/* topo_nccl_int.h — what the readers of NCCL's XML files share (not a
 * public API): topo_nccl.c (topology dumps) and nccl_graph.c (graph dumps)
 * read a file and parse it with libxml2 the same way, so a syntax error is
 * told the same way: "FILE:LINE: element: libxml2's first error". */
#ifndef TC_TOPO_NCCL_INT_H
#define TC_TOPO_NCCL_INT_H

#include <stdarg.h>
#include <stddef.h>

#include <libxml/tree.h>

#include "../util/err.h"

/* The whole file at path (caller frees), its length in *len; NULL with err
 * (TC_INPUT, "PATH: cannot read: why") on failure. */
char *topo_nccl_read_file(const char *path, size_t *len, tc_err *err);

/* text parsed by libxml2 (no network, line numbers kept); NULL with err
 * set to libxml2's first error, "LABEL:LINE: element: message".  Free the
 * document with xmlFreeDoc. */
xmlDocPtr topo_nccl_xml_parse(const char *text, size_t len, const char *label, tc_err *err);

/* err set to "LABEL:LINE: element: message" (at's line and name; "LABEL:
 * message" when at is NULL); returns TC_INPUT. */
int topo_nccl_vfail(tc_err *err, const char *label, xmlNodePtr at, const char *fmt, va_list ap);

/* The file at path read and parsed as above. */
xmlDocPtr topo_nccl_xml_load(const char *path, tc_err *err);

#endif
