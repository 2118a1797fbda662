/* units.h — figures written with their unit: "2.6 us", "700 ns",
 * "25 GB/s", "200 Gb/s".
 *
 * A topology's latencies and bandwidths may be written this way instead of
 * as bare numbers under keys that name the unit (alpha_us, bandwidth_gbps),
 * so a NIC's "200 Gb/s" is not read as 200 GB/s.  Bandwidth prefixes are
 * decimal (G = 1e9) and a lower-case b is bits; times take s, ms, us (or
 * µs) and ns.  A space between number and unit is optional. */
#ifndef TC_UNITS_H
#define TC_UNITS_H

/* s as microseconds into *us; 0, or -1 if s is not a time with a unit. */
int units_time_us(const char *s, double *us);

/* s as GB/s (1e9 bytes per second) into *gbps; 0, or -1 if s is not a
 * bandwidth with a unit (B/s or b/s with an optional K, M, G, T prefix, or
 * bps with one). */
int units_bw_gbps(const char *s, double *gbps);

#endif
