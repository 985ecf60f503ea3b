/* cli: see cli.h. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Noreturn void cli_usage_error(const cli_t *cli, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s (try --help)\n", cli->name, text);
    exit(CLI_EXIT_USAGE);
}

/* The argument getopt_long just refused: the short option, or the whole word. */
static const char *refused(int argc, char **argv, char short_option[3])
{
    const char *word = optind - 1 < argc ? argv[optind - 1] : "?";
    if (optopt <= 0 || optopt >= CLI_VERSION_OPTION || strncmp(word, "--", 2) == 0)
        return word;
    short_option[0] = '-';
    short_option[1] = (char)optopt;
    short_option[2] = '\0';
    return short_option;
}

int cli_next(const cli_t *cli, int argc, char **argv, const char *shortopts,
             const struct option *longopts)
{
    char spec[64], short_option[3];
    /* ':' first: a missing value is told apart from an unknown option; opterr 0: the
     * messages are ours, with the program's name rather than argv[0]'s path. */
    snprintf(spec, sizeof spec, ":h%s", shortopts);
    opterr = 0;
    int c = getopt_long(argc, argv, spec, longopts, NULL);
    switch (c) {
    case 'h':
        cli->usage(stdout);
        exit(0);
    case CLI_VERSION_OPTION:
        printf("%s (libmal %s)\n", cli->name, cli->version());
        exit(0);
    case ':':
        cli_usage_error(cli, "option '%s' needs a value", refused(argc, argv, short_option));
    case '?':
        cli_usage_error(cli, "unknown option '%s'", refused(argc, argv, short_option));
    case -1:
        if (optind < argc)
            cli_usage_error(cli, "unexpected argument '%s'", argv[optind]);
        return -1;
    default:
        return c;
    }
}

long long cli_integer(const cli_t *cli, const char *option, const char *text, long long min,
                      long long max)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10); /* decimal: "010" is ten, not eight */
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max)
        cli_usage_error(cli, "%s '%s' is not an integer in %lld..%lld", option, text, min,
                        max);
    return v;
}

double cli_number(const cli_t *cli, const char *option, const char *text, double min,
                  double max)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v) || v < min || v > max)
        cli_usage_error(cli, "%s '%s' is not a number in [%g, %g]", option, text, min, max);
    return v;
}

int cli_choice(const cli_t *cli, const char *option, const char *text,
               const char *const *names, int count, bool allow_all)
{
    if (allow_all && strcmp(text, "all") == 0)
        return -1;
    char list[512] = "";
    for (int i = 0; i < count; i++) {
        if (strcmp(text, names[i]) == 0)
            return i;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
    }
    cli_usage_error(cli, "%s '%s' is none of %s%s", option, text, list,
                    allow_all ? ", all" : "");
}

bool cli_is_stdout(const char *path)
{
    return path != NULL && strcmp(path, "-") == 0;
}

FILE *cli_take_stdout(const cli_t *cli)
{
    fflush(stdout);
    int data = dup(STDOUT_FILENO);
    FILE *f = data >= 0 ? fdopen(data, "w") : NULL;
    if (f == NULL || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, "%s: cannot keep standard output for the data: %s\n", cli->name,
                strerror(errno));
        exit(CLI_EXIT_FAILURE);
    }
    return f;
}

FILE *cli_open_output(const cli_t *cli, const char *path, const char *mode,
                      FILE *taken_stdout)
{
    FILE *f = cli_is_stdout(path) ? taken_stdout : fopen(path, mode);
    if (f == NULL)
        fprintf(stderr, "%s: cannot write %s: %s\n", cli->name, path,
                cli_is_stdout(path) ? "standard output is not available" : strerror(errno));
    return f;
}

int cli_close_output(const cli_t *cli, const char *path, FILE *f)
{
    bool failed = cli_is_stdout(path) ? fflush(f) != 0 || ferror(f) : fclose(f) != 0;
    if (failed)
        fprintf(stderr, "%s: writing %s failed: %s\n", cli->name, path, strerror(errno));
    return failed ? -1 : 0;
}
