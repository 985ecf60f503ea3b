/* cli: what every program of the project does with its command line, the same way in
 * each (the conventions of Unix tools):
 *  - options parsed with getopt_long, before MPI starts, so that --help, --version and
 *    a usage error need no launcher and a usage error starts no job;
 *  - --help (-h): the usage on stdout, exit status 0; --version: "NAME (libmal X.Y.Z)"
 *    on stdout, exit status 0;
 *  - a usage error (unknown option, missing or bad value, stray argument): one line
 *    "NAME: what is wrong (try --help)" on stderr, nothing on stdout, exit status 2;
 *  - a run-time failure (a check that fails, a file that cannot be written, an MPI or
 *    libmal error): a message on stderr, exit status 1;
 *  - an output file named "-" is standard output: the data then go there alone, and
 *    everything else the process prints on stdout goes to stderr (cli_take_stdout). */
#ifndef MAL_SUPPORT_CLI_H
#define MAL_SUPPORT_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#define CLI_EXIT_FAILURE 1 /* the run failed                  */
#define CLI_EXIT_USAGE 2   /* the command line is wrong        */

/* What getopt_long returns for --version (which has no short form). */
#define CLI_VERSION_OPTION 0x100

/* The options every program has; each program's long options end with these and the
 * terminating {0}. */
#define CLI_STANDARD_OPTIONS                                                            \
    {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, CLI_VERSION_OPTION}

/* The lines of every usage text for those two. */
#define CLI_STANDARD_USAGE                                                              \
    "  --help     this text, on stdout\n"                                               \
    "  --version  the program's name and libmal's version, on stdout\n"

typedef struct {
    const char *name;           /* the program, first word of every message        */
    const char *(*version)(void); /* libmal's version: mal_version, or a function
                                   * returning MAL_VERSION in a program that does not
                                   * link libmal                                     */
    void (*usage)(FILE *out);   /* the usage text                                   */
} cli_t;

/* The next option, as getopt_long returns it (its value in optarg), or -1 once every
 * argument is read. `shortopts` are the program's short options in getopt's syntax
 * ("" for none; -h is added). Handles itself, without returning: --help and --version
 * (exit 0), an unknown option, a missing value and an argument that is not an option
 * (usage errors, exit 2). */
int cli_next(const cli_t *cli, int argc, char **argv, const char *shortopts,
             const struct option *longopts);

/* "NAME: <message> (try --help)" on stderr, then exit status 2. */
_Noreturn void cli_usage_error(const cli_t *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* `text`, the value of `option`, as a decimal integer in [min, max]; a
 * usage error otherwise. */
long long cli_integer(const cli_t *cli, const char *option, const char *text, long long min,
                      long long max);

/* `text`, the value of `option`, as a finite number in [min, max]; a usage error
 * otherwise. */
double cli_number(const cli_t *cli, const char *option, const char *text, double min,
                  double max);

/* `text` as one of `names` (count of them): its index; "all" gives -1 when allow_all;
 * a usage error listing the names otherwise. */
int cli_choice(const cli_t *cli, const char *option, const char *text,
               const char *const *names, int count, bool allow_all);

/* Whether an output file name means standard output ("-"). */
bool cli_is_stdout(const char *path);

/* Keeps standard output for the data a program writes to "-" and points the process's
 * stdout at stderr, so that the tables, notices and the library's lines printed
 * meanwhile stay out of the data. Returns the data's stream (the original stdout); exits
 * with status 1 after a message when it cannot. Call once, before anything is printed
 * and before MPI starts. */
FILE *cli_take_stdout(const cli_t *cli);

/* `path` opened with `mode` ("w" or "a"), or `taken_stdout` when path is "-"; NULL
 * after "NAME: cannot write PATH: reason" on stderr. */
FILE *cli_open_output(const cli_t *cli, const char *path, const char *mode,
                      FILE *taken_stdout);

/* Closes what cli_open_output returned (flushes the taken stdout, which stays open);
 * 0, or -1 after "NAME: writing PATH failed: reason" on stderr. */
int cli_close_output(const cli_t *cli, const char *path, FILE *f);

#endif
