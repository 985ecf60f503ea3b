/* The policy's settings, resolved at mal_init beside the others (procs/dpm.c): the
 * policy text, the availability file (or this host alone) and the run length. Only text
 * and files, through the pure modules (src/policy): every layer may resolve them. */
#include "core.h"
#include "settings.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static mal_status_t read_availability(engine_settings_t *s)
{
    char err[512];
    mal_status_t rc;
    if (s->availability != NULL) {
        struct stat st;
        if (stat(s->availability, &st) == 0)
            s->avail_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        rc = avail_read(s->availability, &s->avail, err, sizeof err);
    } else {
        char name[AVAIL_HOST_MAX] = "";
        gethostname(name, sizeof name - 1);
        rc = avail_single(name, engine_host_cores(), "local", 1.0, 0.0, &s->avail, err,
                          sizeof err);
    }
    if (rc == MAL_ERR_NOMEM)
        return engine_fail(MAL_ERR_NOMEM, "mal_init: no memory for the availability view");
    if (rc)
        return engine_fail(MAL_ERR_ARG, "mal_init: availability %s", err);
    return MAL_OK;
}

mal_status_t engine_policy_resolve(const settings_t *set, engine_settings_t *s)
{
    const char *text = settings_text(set, SETTING_POLICY);
    s->policy_text = settings_text_copy(set, SETTING_POLICY);
    s->availability = settings_text_copy(set, SETTING_AVAILABILITY);
    s->iterations = settings_num(set, SETTING_ITERATIONS); /* checked by settings_check */
    policy_config_default(&s->policy);
    s->policy.total_iterations = s->iterations;
    char err[320];
    bool off = false;
    mal_status_t rc = policy_config_parse(text, &s->policy, &off, err, sizeof err);
    if (rc != MAL_OK)
        return engine_fail(rc, "mal_init: policy '%s': %s", text, err);
    s->policy_on = !off && s->plan != NULL && s->plan[strspn(s->plan, " ")] == '\0';
    return read_availability(s);
}

void engine_policy_free(engine_settings_t *s)
{
    free(s->policy_text);
    free(s->availability);
    avail_free(&s->avail);
}

uint64_t engine_policy_fingerprint(const engine_settings_t *s, uint64_t hash)
{
    int64_t v[2] = {s->policy_on, s->iterations};
    hash = engine_hash(hash, v, sizeof v);
    if (s->policy_text != NULL)
        hash = engine_hash(hash, s->policy_text, strlen(s->policy_text));
    if (s->availability != NULL)
        hash = engine_hash(hash, s->availability, strlen(s->availability));
    return hash;
}
