/* tcassert.h — invariants asserted where a test would take long to reach
 * them (Lua's lua_assert, SQLite's sanity checks).
 *
 * TC_ASSERT(cond) checks cond in the builds that define TC_CHECKS — the
 * sanitized build `make check` runs beside the plain one, and debug builds
 * (`make CFLAGS=-DTC_CHECKS`) — and compiles to nothing elsewhere, so a
 * check may cost as much as it needs: a structure's whole invariant is a
 * sanity function (`topo_sane`, `prog_sane`, ...) called only inside
 * TC_ASSERT.  A failed check prints the condition, file and line on stderr
 * and aborts: it is a bug of ours, never a user's error (those are
 * tc_err values). */
#ifndef TC_TCASSERT_H
#define TC_TCASSERT_H

#ifdef TC_CHECKS
#define TC_ASSERT(cond) ((cond) ? (void)0 : tcassert_fail(#cond, __FILE__, __LINE__))
#else
#define TC_ASSERT(cond) ((void)0)
#endif

_Noreturn void tcassert_fail(const char *cond, const char *file, int line);

#endif
