/* err.c — see err.h: one-line error values with an exit class. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tc_err_set(tc_err *e, int code, const char *fmt, ...)
{
    if (!e)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    /* Keep the message on one line whatever the inputs contained. */
    for (char *p = e->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    e->code = code;
    return code;
}

void tc_err_clear(tc_err *e)
{
    if (!e)
        return;
    e->code = TC_OK;
    e->msg[0] = '\0';
}

void tc_err_prefix(tc_err *e, const char *fmt, ...)
{
    if (!e)
        return;
    char head[512], old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    size_t n = strlen(head);
    if (n > sizeof e->msg - 3)
        n = sizeof e->msg - 3;
    memcpy(e->msg, head, n);
    memcpy(e->msg + n, ": ", 2);
    size_t room = sizeof e->msg - n - 3;
    size_t m = strnlen(old, room);
    memcpy(e->msg + n + 2, old, m);
    e->msg[n + 2 + m] = '\0';
}
