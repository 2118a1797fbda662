/* jsonin.h — reading JSON input files with messages that point at the line.
 *
 * The topology and sketch loaders both read a user's JSON file, refuse what
 * is not text (NUL bytes, bad UTF-8, a directory, a huge file), parse it
 * with cJSON, and then judge every field.  Their messages read
 * "FILE:LINE: FIELD: what", where FIELD is the path to the field
 * (`links[2].bandwidth_gbps`, `internode_conn["3"][1]`) and LINE is found
 * by walking the raw text along that path, because cJSON keeps no
 * positions and a key such as "alpha_us" occurs in many objects.  This
 * module is that shared machinery, so the two loaders agree and neither
 * keeps its own copy:
 *
 *   - the raw text: UTF-8 check, line and column of an offset, the walker
 *     that finds the line of a path (jsonin_locate);
 *   - text to cJSON: refusal of blank text, syntax errors with a position
 *     and an excerpt, strings holding \u0000 (jsonin_parse), and reading a whole file
 *     (jsonin_read_file);
 *   - the error context while judging a parsed document: a stack of path
 *     steps, "FILE:LINE: PATH: what" messages (jsonin_fail), "got ..."
 *     renderings of the offending value, and readers of the few field shapes
 *     both loaders share (known keys, booleans, notes, local ranks).
 *
 * The two loaders grew slightly different message conventions, which users
 * and tests rely on; the JSONIN_* flags below keep each loader's messages
 * byte for byte as they were.  Everything is reentrant: all state lives in
 * the caller's jsonin_ctx. */
#ifndef TC_JSONIN_H
#define TC_JSONIN_H

#include "err.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/* Conventions in which the loaders' messages differ (0 = the topology's). */
enum {
    /* Path: keys are cut to 48 bytes with control characters shown as '?',
     * and a key that is not an identifier is shown as ["key"]. */
    JSONIN_KEYS_QUOTED = 1 << 0,
    /* "got ...": the parsed value (numbers to 15 digits) rather than the
     * value as written in the file. */
    JSONIN_GOT_VALUE = 1 << 1,
    /* Parse, and count syntax-error columns, after a leading byte-order mark
     * (the UTF-8 and NUL-byte positions always count it). */
    JSONIN_AFTER_BOM = 1 << 2,
    /* Syntax-error excerpt: from up to 10 bytes before the error, 22 bytes
     * long, rather than up to 12 bytes either side of it. */
    JSONIN_NEAR_AHEAD = 1 << 3,
    /* A failed read says "cannot read" without the system's reason. */
    JSONIN_READ_TERSE = 1 << 4
};

/* What kind of document a loader reads. */
typedef struct jsonin_doc {
    const char *what;   /* "topology": "... describing a topology",
                           "is a directory, not a topology file" */
    long max_bytes;     /* a file of this many bytes or more is refused */
    unsigned flags;     /* JSONIN_* */
} jsonin_doc;

/* ------------------------------------------------------------ raw text */

/* Offset of the first byte that is not valid UTF-8 (overlong forms,
 * surrogates, code points above U+10FFFF and truncated sequences are
 * invalid), or n if all n bytes are. */
size_t jsonin_utf8_invalid_at(const unsigned char *s, size_t n);

/* Does text (n bytes) start with a UTF-16 byte-order mark?  Then set
 * "LABEL:1:1: UTF-16 text (...): save it as UTF-8" and return 1; else 0.
 * (Such a file is full of NUL bytes, which would be said instead.) */
int jsonin_utf16_error(const char *text, size_t n, const char *label, tc_err *err);

/* Turn each CR not followed by LF (old Mac line ends) into LF, in place, so
 * lines are counted as the user's editor counts them; CR LF stays.  The
 * length is unchanged and JSON and XML read either as a line end.  Returns
 * how many were changed. */
size_t jsonin_lone_cr_to_lf(char *text, size_t n);

/* Line and column (1-based; the column counts bytes) of offset off. */
void jsonin_line_col(const char *text, size_t off, int *line, int *col);

/* text past one leading UTF-8 byte-order mark, if it has one. */
const char *jsonin_skip_bom(const char *text);

/* Is p only spaces, tabs and line breaks? */
int jsonin_is_blank(const char *p);

/* One step of a path: an object key, or an array index when key is NULL. */
typedef struct {
    const char *key;
    int index;          /* array steps */
    int nth;            /* key steps: which occurrence of a repeated key, 0 first */
    int map_key;        /* key steps: a key chosen by the user (a rank), shown ["3"] */
} jsonin_step;

/* Walk text (which cJSON accepted) along path[0..n-1] as far as it goes.
 * Returns the line of the deepest step found — the line of its key, or of
 * the element's first byte — or the line of the document's first token if
 * none was.  If depth / value are not NULL they receive how many steps were
 * found and where the deepest found value starts.  Keys are compared as
 * written, so a key spelled with \u escapes is not found. */
int jsonin_locate(const char *text, const jsonin_step *path, int n, int *depth,
                  const char **value);

/* ------------------------------------------------------- text to cJSON */

/* Check text (valid UTF-8, not blank) and parse it.  Returns the tree, and
 * in *parsed the text cJSON read (text, or past its byte-order mark under
 * JSONIN_AFTER_BOM); NULL with TC_INPUT in err on failure:
 *   "LABEL: no text given", "LABEL:L:C: not valid UTF-8 (byte 0xNN)",
 *   "LABEL: empty file: expected a JSON object describing a WHAT",
 *   "LABEL:L:C: JSON syntax error near '...'" or "...: unexpected end of file",
 *   "LABEL:L: PATH: contains a NUL character (\u0000), ..." (cJSON would cut
 *   the string there, so a key or value holding \u0000 is refused). */
cJSON *jsonin_parse(const char *text, const char *label, const jsonin_doc *doc,
                    const char **parsed, tc_err *err);

/* The "LABEL:L:C: JSON syntax error ..." message for a parse of text that
 * stopped at `at` (NULL or out of range: the end).  Returns TC_INPUT. */
int jsonin_syntax_error(const char *text, const char *label, const char *at,
                        unsigned flags, tc_err *err);

/* The whole file at path as a NUL-terminated string to free(), or NULL with
 * TC_INPUT in err: no file name, cannot open, a directory or another file
 * that is not a regular file (a FIFO is refused, never waited on:
 * path_open_input in paths.h), too large (at least doc->max_bytes), cannot
 * read, or a NUL byte ("PATH:L:C: contains a NUL byte (not a text file?)"). */
char *jsonin_read_file(const char *path, const jsonin_doc *doc, tc_err *err);

/* -------------------------------------------------------- error context */

#define JSONIN_MAX_DEPTH 16     /* deeper paths are kept to this many steps */

/* Where the judging of a parsed document is: its label and text, and the
 * path of the field at hand.  Push a step before judging a field, pop it
 * after; jsonin_fail() names the top of the path. */
typedef struct jsonin_ctx {
    const char *label;
    const char *text;           /* the text that was parsed; NULL: line 0 */
    unsigned flags;             /* JSONIN_* */
    tc_err *err;
    int depth;                  /* may exceed JSONIN_MAX_DEPTH */
    jsonin_step path[JSONIN_MAX_DEPTH];
} jsonin_ctx;

void jsonin_ctx_init(jsonin_ctx *c, const char *label, const char *text,
                     unsigned flags, tc_err *err);

/* Push an object key (its nth occurrence in the object; 0 normally). */
void jsonin_push_key(jsonin_ctx *c, const char *key, int nth);

/* Push a key of a {"<rank>": ...} map: always shown as ["key"]. */
void jsonin_push_map_key(jsonin_ctx *c, const char *key, int nth);

void jsonin_push_index(jsonin_ctx *c, int i);

void jsonin_pop(jsonin_ctx *c);

/* The path, "links[2].bandwidth_gbps", or "(top level)" when empty. */
void jsonin_path_str(const jsonin_ctx *c, char *buf, size_t n);

/* Set "LABEL:LINE: PATH: what" (printf-style what) and return TC_INPUT. */
int jsonin_fail(jsonin_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* How the value it, found at the top of the path, reads in a "got ..."
 * message: `"abc"`, `1.5`, `true`, `null`, `an array`, `an object`, or
 * `nothing` for NULL.  Returns buf or a constant string. */
const char *jsonin_got(const jsonin_ctx *c, const cJSON *it, char *buf,
                       size_t n);

/* -------------------------------------------------------- field readers */

/* How many members of obj before it have the same key (it's nth). */
int jsonin_nth_key(const cJSON *obj, const cJSON *it);

/* Is it a number holding an integer in lo..hi? */
int jsonin_is_int_in(const cJSON *it, double lo, double hi);

/* Every member of obj is one of keys[0..nkeys-1] (nkeys <= 32), each at most
 * once: else "unknown key (expected one of: ...)" or "duplicate key". */
int jsonin_check_keys(jsonin_ctx *c, const cJSON *obj, const char *const *keys,
                      int nkeys);

/* The value at the top of the path is an object: else "expected an object,
 * got ...". */
int jsonin_want_object(jsonin_ctx *c, const cJSON *it);

/* s holds no control character but tab: else "control character 0xNN in a
 * string" followed by hint (JSONIN_CONTROL_HINT, or "" for none). */
#define JSONIN_CONTROL_HINT " (write it escaped, or leave it out)"
int jsonin_check_control(jsonin_ctx *c, const char *s, const char *hint);

/* Optional boolean obj.key; *out = dflt when absent. */
int jsonin_read_bool(jsonin_ctx *c, const cJSON *obj, const char *key,
                     int dflt, int *out);

/* Optional obj.notes: a string or an array of strings; with no_control,
 * none may hold a control character (JSONIN_CONTROL_HINT).  *out: the notes
 * item, or NULL. */
int jsonin_read_notes(jsonin_ctx *c, const cJSON *obj, int no_control,
                      const cJSON **out);

/* The value it, at the top of the path, is a local rank 0..max. */
int jsonin_read_rank(jsonin_ctx *c, const cJSON *it, int max, int *out);

#endif
