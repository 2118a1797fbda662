/* units.h — figures written with their unit: "2.6 us", "700 ns",
 * "25 GB/s", "200 Gb/s".
 *
 * A topology's latencies and bandwidths may be written this way instead of
 * as bare numbers under keys that name the unit (alpha_us, bandwidth_gbps),
 * so a NIC's "200 Gb/s" is not read as 200 GB/s.  Bandwidth prefixes are
 * decimal (G = 1e9) and a lower-case b is bits; times take s, ms, us (or
 * µs) and ns.  A space between number and unit is optional.
 *
 * The number is decimal, one rule for every figure and for taccl-synth's
 * real-valued options (units_number): digits with an optional decimal point
 * and fraction, then an optional exponent — "2", "2.6", ".5", "1e3",
 * "2.5E-1".  No sign: figures are never negative, and a leading '+' is
 * refused as JSON refuses it in the unit-named spelling of the same figure
 * (`"alpha_us": +1` is a syntax error).  No hexadecimal ("0x10"), no inf
 * or nan, nothing that overflows a double.  units_hint() says which of
 * these a refused string broke. */
#ifndef TC_UNITS_H
#define TC_UNITS_H

/* s as microseconds into *us; 0, or -1 if s is not a time with a unit. */
int units_time_us(const char *s, double *us);

/* s as GB/s (1e9 bytes per second) into *gbps; 0, or -1 if s is not a
 * bandwidth with a unit (B/s or b/s with an optional K, M, G, T prefix, or
 * bps with one). */
int units_bw_gbps(const char *s, double *gbps);

/* The whole of s as a decimal number (the rule above, no unit) into *v;
 * 0, or -1. */
int units_number(const char *s, double *v);

/* For a string one of the above refused: "" or a reason to append to the
 * message, e.g. "; hexadecimal is not accepted: write the number in
 * decimal".  Says only what the number broke (a '+', hexadecimal, inf or
 * nan, out of range); a bad or missing unit gets "". */
const char *units_hint(const char *s);

#endif
