/* args.h — the command-line tools' one option layer: a table per tool.
 *
 * Each tool describes its options once, as rows of args_opt: the name (and
 * a short alias), the value's name, the parser that reads it into a field
 * of the tool's own struct, the modes it belongs to and its help.  From the
 * table come the parsing of argv (unknown options, a missing value, too
 * many files), the usage and --help text, and the check that every option
 * given belongs to the mode the tool runs in.  So a tool's options, its
 * help and what it refuses cannot drift apart, and a new tool copies none
 * of it.
 *
 * Values are read by the shared parsers below (counts, real numbers,
 * sizes, size ranges, words) or by a callback the tool supplies (values
 * that need types above util, e.g. a runtime's name).  Every refusal is an
 * error as a value: one line naming the option, what was expected and what
 * was given, for the tool to print its own way. */
#ifndef TC_ARGS_H
#define TC_ARGS_H

#include <stddef.h>

#include "err.h"

typedef struct args_opt args_opt;

/* Read v into o's field(s) of the tool's struct `base` (v is NULL for an
 * option that takes no value): TC_OK, or TC_INPUT with the message. */
typedef int (*args_parser)(const args_opt *o, const char *v, void *base, tc_err *err);

/* One accepted word of args_word and the int it stands for. */
typedef struct {
    const char *word;
    int value;
} args_word_def;

/* args_range's flags (args_opt.set) */
enum {
    ARGS_OPEN = 1,      /* LO may be 0 and HI "inf" (stored as INT64_MAX) */
    ARGS_STRICT = 2     /* LO < HI (else LO <= HI) */
};

struct args_opt {
    const char *name;       /* "--chunks"; NULL ends the table */
    const char *alias;      /* a short spelling ("-o"), or NULL */
    const char *value;      /* the value's name ("M"); NULL: the option takes none */
    args_parser parse;      /* NULL: a value is kept as the string (a const char * field),
                               an option without one stores `set` in its int field */
    size_t field;           /* offsetof(the tool's struct, the field) */
    size_t field2;          /* args_range: HI's field; args_append: the count's */
    double lo, hi;          /* args_count: 1..hi; args_real: lo < x (lo <= x with set 1)
                               and x < hi; args_append: at most hi values */
    int set;                /* no value: what it stores; args_real: 1 closes lo;
                               args_range: ARGS_* flags */
    const args_word_def *words; /* args_word: the words, ending with {NULL} */
    const char *expect;     /* what a refusal says was expected ("an integer 1..32") */
    unsigned modes;         /* the modes (bits of the tool's args_mode) it belongs to */
    const char *usage;      /* its spelling in the usage if not "name value"; "" none */
    const char *help;       /* its help, lines joined by '\n'; NULL: none of its own */
    const char *note;       /* added when it is refused in another mode, or NULL */
};

/* One mode of a tool (one line of its usage). */
typedef struct {
    unsigned bit;           /* 0 ends the table */
    const char *name;       /* as refusals name it: "sketch mode", "--plan" */
    const char *synopsis;   /* what the usage line starts with after the tool's name;
                               options it names are not repeated in brackets */
} args_mode;

typedef struct {
    const char *tool;       /* "taccl-synth" */
    const args_opt *opts;   /* at most 64 rows (args_parse's `seen`) */
    const args_mode *modes;
    size_t pos, npos;       /* the positional arguments: a const char *[max_pos] and an int */
    int max_pos;
    const char *too_many;   /* the refusal of one more file: a format with one %s */
    const char *about;      /* --help: the text before the options */
    const char *after;      /* --help: the text after them */
} args_spec;

/* What args_parse returns for -h or --help. */
#define ARGS_HELP (-1)

/* Read argv into `base` (already holding the defaults): TC_OK, ARGS_HELP,
 * or TC_INPUT with the message in err.  *seen gets a bit per table row
 * given (row i: 1ULL << i). */
int args_parse(const args_spec *s, int argc, char **argv, void *base,
               unsigned long long *seen, tc_err *err);

/* Whether `name` stands anywhere in argv (a tool answers in JSON for an
 * error found before --json is reached). */
int args_has(int argc, char **argv, const char *name);

/* The first option in `seen` that is not for `mode`: TC_OK, or TC_INPUT
 * and "OPT is for MODES, not MODE[; its note]". */
int args_check_mode(const args_spec *s, unsigned long long seen, unsigned mode, tc_err *err);

/* The row of `name` in the table (for a `seen` test), or -1. */
int args_row(const args_spec *s, const char *name);

/* The usage lines, and the whole --help text (usage, a blank line, about,
 * the options, after), allocated; the caller frees them. */
char *args_usage(const args_spec *s);
char *args_help(const args_spec *s);

/* The shared parsers (args_parser), as described at args_opt. */
int args_count(const args_opt *o, const char *v, void *base, tc_err *err);
int args_real(const args_opt *o, const char *v, void *base, tc_err *err);
int args_size(const args_opt *o, const char *v, void *base, tc_err *err);
int args_range(const args_opt *o, const char *v, void *base, tc_err *err);
int args_word(const args_opt *o, const char *v, void *base, tc_err *err);
int args_append(const args_opt *o, const char *v, void *base, tc_err *err);
/* Without a value: stores `set`, refusing a field another row already set
 * to another value; `expect` names the pair ("--hierarchical and --flat",
 * then "do not go together"). */
int args_either(const args_opt *o, const char *v, void *base, tc_err *err);

/* "a, b or c" of the words into buf. */
const char *args_words_text(const args_word_def *w, char *buf, size_t n);

#endif
