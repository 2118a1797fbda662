/* err.h — errors carried as values.
 *
 * Every fallible function takes a `tc_err *` and, on failure, fills it with an
 * exit class and a one-line message fit for a user ("file:line: field: what"),
 * then returns the class.  Callers pass errors up unchanged; only the CLI mains
 * print them.  A NULL `tc_err *` is allowed and simply discards the message. */
#ifndef TC_ERR_H
#define TC_ERR_H

#include <stddef.h>

/* Exit classes, shared with the CLIs' exit codes. */
enum {
    TC_OK = 0,      /* success */
    TC_WRONG = 1,   /* input usable, but the schedule does not do its job */
    TC_INPUT = 2,   /* input unusable: unreadable, malformed, bad flag */
    TC_STOP = 130   /* stopped on request (SIGINT; 128 + 2, as shells report
                       a process the signal ended): nothing was written */
};

typedef struct tc_err {
    int code;           /* TC_OK, TC_WRONG or TC_INPUT */
    char msg[1024];     /* one line, no trailing newline */
} tc_err;

/* Fill `e` (if not NULL) and return `code`. printf-style message. */
int tc_err_set(tc_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Reset `e` to TC_OK with an empty message. */
void tc_err_clear(tc_err *e);

/* Prepend "prefix: " to an existing message (used to add a file name). */
void tc_err_prefix(tc_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
