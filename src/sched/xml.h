/* xml.h — MSCCL XML schedules in and out (libxml2).
 *
 * The reader accepts what the MSCCL runtimes load, from any generator
 * (msccl-tools, TACCL, ours): <algo> → <gpu> → <tb> → <step>, plus our
 * optional <topology> element carrying the machine.  Unknown elements and
 * attributes are ignored as the runtimes ignore them; <copy> elements too.
 * Errors are TC_INPUT with "path:line: element attribute: what".
 *
 * The writer emits what the runtimes' own tokenizer accepts: no <?xml?>
 * prolog, each element and its attributes on one line, double quotes, every
 * required attribute present, decimal numbers without leading zeros, no
 * attribute value over 255 bytes (as written, escapes included: the
 * runtimes' tokenizer counts bytes) and no element over 16 attributes. */
#ifndef TC_XML_H
#define TC_XML_H

#include "program.h"

typedef struct {
    runtime runtime;        /* spell coll as it does (RT_ANY: as the legacy runtime) */
    int embed_topology;     /* 1: write p->topo as a <topology> element */
} xml_write_opts;

prog *prog_read_xml(const char *path, tc_err *err);
prog *prog_parse_xml(const char *text, size_t len, const char *label, tc_err *err);

/* Serialise to a malloc'd NUL-terminated string. */
char *prog_to_xml(const prog *p, const xml_write_opts *o, tc_err *err);

/* Write atomically: to a temporary file beside `path`, fsync, rename.
 * On failure nothing at `path` changes.  An existing target that is not a
 * regular file (/dev/null, a FIFO) is written directly, never replaced; a
 * directory is an error. */
int prog_write_xml(const prog *p, const char *path, const xml_write_opts *o, tc_err *err);

/* Make name, in place, a value the runtimes read as it is written, so that
 * an <algo name> made of a user's topology and sketch names is written and
 * loaded rather than refused: each character the writer would escape
 * (& < > " tab, newline, CR) becomes '_', since the runtimes' tokenizer
 * does not decode "&amp;" and taccl-run refuses a file holding one; then
 * it is cut to its longest prefix of whole UTF-8 characters within the
 * runtimes' 255 bytes (two names of 200 bytes, or of 2-byte characters,
 * would not fit, or be cut inside a character).  Returns name. */
char *xml_fit_value(char *name);

#endif
