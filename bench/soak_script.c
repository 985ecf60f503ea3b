/* mal_soak's fixed scripts (soak_script.h): parsed before MPI starts (a spawned process
 * parses the same arguments), turned into actions by every rank alike. */
#define _POSIX_C_SOURCE 200809L
#include "soak_script.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCRIPT_HOSTS_MAX 8
#define HOST_NAME_LEN 64

typedef struct {
    mal_action_t kind;
    int count;
    mal_spawn_mode_t mode;
    bool skew;
    int nhosts;
    char hosts[SCRIPT_HOSTS_MAX][HOST_NAME_LEN];
} step_t;

struct soak_script {
    int length;
    step_t *steps;
};

/* ---------------------------------------------------------------- parsing */

static bool parse_count(const char *text, int *count, const char **rest)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (end == text || n < 1 || n >= SOAK_MAX_PROCS)
        return false;
    *count = (int)n;
    *rest = end;
    return true;
}

static bool parse_hosts(const char *text, step_t *st)
{
    while (*text != '\0') {
        size_t n = strcspn(text, ":");
        if (n == 0 || n >= HOST_NAME_LEN || st->nhosts == SCRIPT_HOSTS_MAX)
            return false;
        memcpy(st->hosts[st->nhosts++], text, n);
        text += n + (text[n] == ':');
    }
    return st->nhosts > 0;
}

static bool parse_step(const char *item, step_t *st)
{
    const char *rest;
    *st = (step_t){.kind = MAL_ACTION_REBALANCE, .mode = MAL_SPAWN_PER_CALL};
    if (strcmp(item, "r") == 0 || strcmp(item, "rskew") == 0) {
        st->skew = item[1] != '\0';
        return true;
    }
    if (item[0] == '+' && parse_count(item + 1, &st->count, &rest)) {
        st->kind = MAL_ACTION_EXPAND;
        st->mode = *rest == 'b' ? MAL_SPAWN_BATCHED : MAL_SPAWN_PER_CALL;
        return strcmp(rest, "") == 0 || strcmp(rest, "b") == 0 || strcmp(rest, "p") == 0;
    }
    if (item[0] == '-' && parse_count(item + 1, &st->count, &rest)) {
        st->kind = MAL_ACTION_SHRINK;
        return *rest == '\0' || (*rest == '@' && parse_hosts(rest + 1, st));
    }
    return false;
}

soak_script_t *soak_script_parse(const char *text, char *err, size_t len)
{
    soak_script_t *s = calloc(1, sizeof *s);
    char *copy = strdup(text);
    if (s != NULL)
        s->steps = calloc(strlen(text) / 2 + 1, sizeof *s->steps);
    bool ok = s != NULL && s->steps != NULL && copy != NULL;
    if (!ok)
        snprintf(err, len, "no memory for the script");
    char *save = NULL;
    for (char *item = ok ? strtok_r(copy, ",", &save) : NULL; item != NULL && ok;
         item = strtok_r(NULL, ",", &save)) {
        ok = parse_step(item, &s->steps[s->length]);
        if (ok)
            s->length++;
        else
            snprintf(err, len, "'%s' is not +N, +Nb, +Np, r, rskew, -N or -N@HOST:HOST...",
                     item);
    }
    if (ok && s->length == 0) {
        ok = false;
        snprintf(err, len, "no step");
    }
    free(copy);
    if (!ok)
        soak_script_free(s);
    return ok ? s : NULL;
}

void soak_script_free(soak_script_t *s)
{
    if (s != NULL)
        free(s->steps);
    free(s);
}

int soak_script_length(const soak_script_t *s)
{
    return s->length;
}

/* ---------------------------------------------------------------- hosts */

/* Every rank's host name, gathered (size * HOST_NAME_LEN characters), or NULL. */
static char *gather_names(int size)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = "", *all = malloc((size_t)size * HOST_NAME_LEN);
    int len = 0, ok = all != NULL;
    MPI_Get_processor_name(mine, &len);
    mine[HOST_NAME_LEN - 1] = '\0';
    if (MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, mal_comm()) != MPI_SUCCESS ||
        !ok || MPI_Allgather(mine, HOST_NAME_LEN, MPI_CHAR, all, HOST_NAME_LEN, MPI_CHAR,
                             mal_comm()) != MPI_SUCCESS) {
        free(all);
        return NULL;
    }
    return all;
}

/* host[r]: the index of rank r's host among the distinct names, in order of first rank;
 * returns how many there are. */
static int index_hosts(const char *names, int size, int *host, int *first_rank)
{
    int n = 0;
    for (int r = 0; r < size; r++) {
        host[r] = -1;
        for (int h = 0; h < n && host[r] < 0; h++)
            if (strcmp(names + first_rank[h] * HOST_NAME_LEN, names + r * HOST_NAME_LEN) == 0)
                host[r] = h;
        if (host[r] < 0) {
            first_rank[n] = r;
            host[r] = n++;
        }
    }
    return n;
}

int soak_hosts_text(char *buf, size_t len)
{
    int size = 0;
    MPI_Comm_size(mal_comm(), &size);
    char *names = gather_names(size);
    if (names == NULL)
        return -1;
    int host[SOAK_MAX_PROCS], first[SOAK_MAX_PROCS], count[SOAK_MAX_PROCS] = {0};
    int n = index_hosts(names, size, host, first);
    for (int r = 0; r < size; r++)
        count[host[r]]++;
    size_t used = 0;
    buf[0] = '\0';
    for (int h = 0; h < n && used < len; h++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s %d", h ? ", " : "",
                                 names + first[h] * HOST_NAME_LEN, count[h]);
    free(names);
    return 0;
}

/* ---------------------------------------------------------------- shrinks */

static bool named(const step_t *st, const char *name)
{
    for (int i = 0; i < st->nhosts; i++)
        if (strcmp(st->hosts[i], name) == 0)
            return true;
    return false;
}

/* Every rank on the named hosts, then the others in turn over their hosts, each host's
 * highest rank first; the anchor never. */
static int pick_ranks(const step_t *st, const char *names, int size, int anchor,
                      int *ranks)
{
    int host[SOAK_MAX_PROCS], first[SOAK_MAX_PROCS], n = 0;
    bool taken[SOAK_MAX_PROCS] = {false};
    int nhosts = index_hosts(names, size, host, first);
    for (int r = 0; r < size; r++)
        if (named(st, names + r * HOST_NAME_LEN) && r != anchor && n < st->count) {
            ranks[n++] = r;
            taken[r] = true;
        }
    for (bool progress = true; n < st->count && progress;) {
        progress = false;
        for (int h = 0; h < nhosts && n < st->count; h++)
            for (int r = size - 1; r >= 0; r--)
                if (host[r] == h && !taken[r] && r != anchor) {
                    ranks[n++] = r;
                    taken[r] = progress = true;
                    break;
                }
    }
    return n;
}

static int shrink_action(const step_t *st, int anchor, soak_action_t *a, char *err,
                         size_t len)
{
    int size = 0;
    MPI_Comm_size(mal_comm(), &size);
    char *names = gather_names(size);
    if (names == NULL) {
        snprintf(err, len, "gathering the host names failed");
        return -1;
    }
    int on_named = 0;
    for (int r = 0; r < size; r++)
        on_named += named(st, names + r * HOST_NAME_LEN);
    bool anchored = anchor >= 0 && anchor < size && named(st, names + anchor * HOST_NAME_LEN);
    int n = st->count < size ? pick_ranks(st, names, size, anchor, a->ranks) : 0;
    free(names);
    if (anchored || on_named > st->count || n < st->count) {
        snprintf(err, len, "-%d%s: %s", st->count, st->nhosts ? "@..." : "",
                 anchored ? "the anchor runs on a named host"
                 : on_named > st->count ? "the named hosts run more processes"
                                        : "not that many processes to release");
        return -1;
    }
    a->count = n;
    return 0;
}

int soak_script_action(const soak_script_t *s, int step, int anchor, soak_action_t *a,
                       char *err, size_t len)
{
    const step_t *st = &s->steps[step];
    *a = (soak_action_t){.kind = st->kind, .count = st->count, .mode = st->mode,
                         .fault_rank = -1};
    int size = 0;
    MPI_Comm_size(mal_comm(), &size);
    if (st->kind == MAL_ACTION_EXPAND && size + st->count > SOAK_MAX_PROCS) {
        snprintf(err, len, "+%d: more than %d processes", st->count, SOAK_MAX_PROCS);
        return -1;
    }
    if (st->kind == MAL_ACTION_SHRINK)
        return shrink_action(st, anchor, a, err, len);
    if (st->kind == MAL_ACTION_REBALANCE) { /* mal_rebalance takes no NULL */
        a->nweights = size;
        for (int r = 0; r < size; r++)
            a->weights[r] = st->skew ? 1 + r % 4 : 1;
    }
    return 0;
}
