/* xml_diag.c — what libxml2 reports while a schedule is read, kept and
 * restated as our own one-line messages (see xml_read.c for the reader).
 *
 * libxml2 prints its errors by default and names neither element nor
 * attribute when it hits one of its own limits.  Here its error callbacks
 * keep the first error of a parse instead of printing it, a DOCTYPE stops
 * the parse before any entity is declared, and a document libxml2 refused
 * gets a message that says which limit it hit and where: a value or comment
 * longer than it takes (found by reading the text again), or nesting deeper
 * than its 256 levels (which the push parser does not check: the reader
 * calls xml_too_deep() itself).  Kept apart from the reader because none of
 * it is about schedules, only about libxml2. */
#include "xml_int.h"

#include <libxml/parserInternals.h>

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Reader: libxml2 set-up                                              */

/* Keep libxml2's message on one line, without the trailing newline. */
static void condense(char *dst, size_t dstsz, const char *src)
{
    size_t n = 0;
    int space = 0;
    for (; src && *src && n + 1 < dstsz; src++) {
        unsigned char c = (unsigned char)*src;
        if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
            space = 1;
            continue;
        }
        if (space && n > 0 && n + 2 < dstsz)
            dst[n++] = ' ';
        space = 0;
        dst[n++] = (char)c;
    }
    dst[n] = '\0';
}

/* Keep e in d; `elem` is the element being parsed (NULL: unknown). */
static int keep_error(xml_diag *d, const xmlError *e, const xmlChar *elem)
{
    if (!d || !e || e->level < XML_ERR_ERROR)
        return 0;
    /* Keep the first fatal error; an earlier plain error only until then. */
    if (d->level == XML_ERR_FATAL || (d->level == XML_ERR_ERROR && e->level == XML_ERR_ERROR))
        return 0;
    d->level = e->level;
    d->code = e->code;
    d->line = e->line;
    condense(d->msg, sizeof d->msg, e->message);
    snprintf(d->elem, sizeof d->elem, "%s", elem ? (const char *)elem : "");
    return 1;
}

/* Parser-context error callback: `data` is the context's userData, which
 * libxml2 sets to the context itself. */
void xml_on_ctxt_error(void *data, xmlErrorPtr e)
{
    xmlParserCtxtPtr ctxt = data;
    if (ctxt)
        keep_error(ctxt->_private, e, ctxt->name);
}

/* Backstop for errors libxml2 raises without a context (encoding layer). */
void xml_on_global_error(void *data, xmlErrorPtr e)
{
    keep_error(data, e, NULL);
}

void xml_on_generic_error(void *data, const char *msg, ...)
{
    (void)data;
    (void)msg;
}

/* A DOCTYPE could declare entities (billion laughs) and no runtime reads
 * one: stop the parse before its internal subset is read. */
void xml_refuse_doctype(void *data, const xmlChar *name, const xmlChar *ext, const xmlChar *sys)
{
    (void)name;
    (void)ext;
    (void)sys;
    xmlParserCtxtPtr ctxt = data;
    xml_diag *d = ctxt->_private;
    d->doctype = 1;
    d->doctype_line = ctxt->input ? ctxt->input->line : 0;
    xmlStopParser(ctxt);
}

/* Finding the token libxml2 found too long.  Its message names neither
 * element nor attribute, and in a streamed parse the text is gone by then
 * (and the parser may have stopped at a later line, waiting for more), so
 * the text is read again, from memory or from the file: the first
 * attribute value or comment longer than XML_MAX_TEXT_LENGTH bytes, the
 * element whose '<' comes last before the value, its attribute, and the
 * line where it passed that length.  Fed byte by byte, piece by piece. */
typedef enum { LT_NONE, LT_ATTR, LT_COMMENT } long_kind;

typedef struct {
    long line;              /* the line so far */
    int lone_cr;            /* count a CR not followed by LF as a line end */
    int cr;                 /* a CR waits for what follows it */
    char elem[64], tok[64], name[64];
    size_t elen, tlen, vlen;
    int in_elem, tok_done;  /* reading a name after '<'; the last word ended */
    int state;              /* 0 text, 1 after '=', 2 in its value, 3 in a comment */
    char quote;
    char last[3];           /* the three bytes before this one */
    long_kind found;
} long_scan;

static void ls_append(char *buf, size_t *len, char c)
{
    if (*len + 1 < 64) {
        buf[(*len)++] = c;
        buf[*len] = '\0';
    }
}

/* The next byte of a word (attribute names end at blanks, quotes, '<'). */
static void ls_word(long_scan *s, char c)
{
    if (c == ' ' || c == '\t') {
        s->tok_done = 1;
    } else if (strchr("\r\n\"'<", c)) {
        s->tlen = 0;
        s->tok[0] = '\0';
        s->tok_done = 0;
    } else if (c == '=') {
        memcpy(s->name, s->tok, sizeof s->name);
        s->state = 1;
        s->tlen = 0;
        s->tok[0] = '\0';
        s->tok_done = 0;
    } else {
        if (s->tok_done) {
            s->tlen = 0;
            s->tok_done = 0;
        }
        ls_append(s->tok, &s->tlen, c);
    }
}

static void ls_char(long_scan *s, char c)
{
    char l0 = s->last[0], l1 = s->last[1], l2 = s->last[2];
    s->last[0] = l1;
    s->last[1] = l2;
    s->last[2] = c;
    if (c == '\n')
        s->line++;
    if (s->state >= 2) {
        int end = s->state == 2 ? c == s->quote : c == '>' && l1 == '-' && l2 == '-';
        if (end)
            s->state = 0;
        else if (++s->vlen > XML_MAX_TEXT_LENGTH)
            s->found = s->state == 2 ? LT_ATTR : LT_COMMENT;
        return;
    }
    if (s->state == 1) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            return;
        s->state = 0;
        if (c == '"' || c == '\'') {
            s->state = 2;
            s->quote = c;
            s->vlen = 0;
            return;
        }
    }
    if (c == '-' && l0 == '<' && l1 == '!' && l2 == '-') {
        s->state = 3;
        s->in_elem = 0;
        s->vlen = 0;
        s->last[1] = s->last[2] = '\0';   /* "<!-->" does not end it */
        return;
    }
    if (c == '<') {
        s->in_elem = 1;
        s->elen = 0;
        s->elem[0] = '\0';
    } else if (s->in_elem && strchr(" \t\r\n/>", c)) {
        s->in_elem = 0;
    } else if (s->in_elem) {
        ls_append(s->elem, &s->elen, c);
    }
    ls_word(s, c);
}

/* Feed n more bytes; returns what was found so far. */
static long_kind ls_feed(long_scan *s, const char *text, size_t n)
{
    for (size_t i = 0; i < n && !s->found; i++) {
        char c = text[i];
        if (s->cr) {
            s->cr = 0;
            ls_char(s, c == '\n' || !s->lone_cr ? '\r' : '\n');
            if (s->found)
                break;
        }
        if (c == '\r')
            s->cr = 1;
        else
            ls_char(s, c);
    }
    return s->found;
}

/* The first token of src too long for libxml2, into s. */
static long_kind find_long_token(const source *src, long_scan *s)
{
    memset(s, 0, sizeof *s);
    s->line = 1;
    s->lone_cr = src->file != NULL;
    if (src->file) {
        char buf[1 << 16];
        size_t n;
        if (fseek(src->file, 0, SEEK_SET) != 0)
            return LT_NONE;
        while (!s->found && (n = fread(buf, 1, sizeof buf, src->file)) > 0)
            ls_feed(s, buf, n);
    } else if (src->text) {
        ls_feed(s, src->text, src->len);
    }
    return s->found;
}

/* Is d libxml2's refusal of a token longer than it takes?  Parsing the
 * whole text it says the attribute value is too long; pushed, it may stop
 * waiting for the end of the token (input lookup limit). */
static int too_long(const xml_diag *d)
{
    return (d->code == XML_ERR_ATTRIBUTE_NOT_FINISHED && strstr(d->msg, "too long")) ||
           (d->code == XML_ERR_INTERNAL_ERROR && strstr(d->msg, "Huge input lookup"));
}

/* The message for a document libxml2 refused.  Two of its messages are
 * about its own limits, which a user cannot lift, and name no field: say
 * which limit and where instead. */
void xml_malformed(const source *src, const char *label, const xml_diag *d, tc_err *err)
{
    long_scan s;
    if (d->code == XML_ERR_INTERNAL_ERROR && strstr(d->msg, "depth")) {
        tc_err_set(err, TC_INPUT, "%s:%ld: <%s>: elements nested too deeply (the XML reader "
                   "takes %d levels; a schedule needs 4)", label, d->line,
                   d->elem[0] ? d->elem : "?", MAX_DEPTH);
    } else if (!too_long(d) || find_long_token(src, &s) == LT_NONE) {
        tc_err_set(err, TC_INPUT, "%s:%ld: malformed XML: %s", label, d->line, d->msg);
    } else if (s.found == LT_ATTR) {
        tc_err_set(err, TC_INPUT, "%s:%ld: <%s> attribute %s: value longer than the XML reader "
                   "takes (%d bytes; the MSCCL runtimes take %d)", label, s.line, s.elem, s.name,
                   XML_MAX_TEXT_LENGTH, RT_MAX_VALUE);
    } else {
        /* what libxml2 says of such a comment when it has the whole text */
        tc_err_set(err, TC_INPUT, "%s:%ld: malformed XML: Comment too big found", label, s.line);
    }
}

/* The line where the start tag just read begins (the parser's line is
 * where it ends).  A pushed start tag is parsed only once it is whole in
 * the input buffer, and no '<' can stand inside it. */
static long tag_start_line(xmlParserCtxtPtr ctxt)
{
    const xmlParserInput *in = ctxt->input;
    if (!in)
        return 0;
    long line = in->line;
    for (const xmlChar *c = in->cur; in->base && c > in->base && c[-1] != '<'; c--)
        if (c[-1] == '\n')
            line--;
    return line;
}

/* An element opens below MAX_DEPTH others: fail as libxml2 does when it
 * parses the whole text (a fatal error naming the open element), and
 * stop. */
void xml_too_deep(xmlParserCtxtPtr ctxt, xml_diag *d)
{
    if (d->level != XML_ERR_FATAL) {
        d->level = XML_ERR_FATAL;
        d->code = XML_ERR_INTERNAL_ERROR;
        d->line = tag_start_line(ctxt);
        snprintf(d->msg, sizeof d->msg, "Excessive depth in document: %d", MAX_DEPTH);
        snprintf(d->elem, sizeof d->elem, "%s", ctxt->name ? (const char *)ctxt->name : "");
    }
    ctxt->wellFormed = 0;
    xmlStopParser(ctxt);
}
