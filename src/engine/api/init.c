/* mal_config_init, mal_init, mal_finalize and mal_set_redist: the settings resolved and
 * agreed by every rank, the transport started, the state set up and torn down. */
#include "api.h"
#include "core.h"
#include "memory.h"
#include "monitor.h"
#include "join.h"
#include "pool.h"
#include "procs.h"
#include "spawning.h"
#include "reconf.h"
#include "registry.h"
#include "settings.h"
#include "platform.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The end of the structure of the first mal.h that had a size: every later one starts
 * with those fields, so a configuration is at least that long. */
#define CONFIG_FIRST_SIZE (offsetof(mal_config_t, async) + sizeof(int))

/* Whether a structure of `size` bytes is one this library can read. */
static mal_status_t config_size_check(size_t size, const char *call)
{
    if (size < CONFIG_FIRST_SIZE)
        return engine_fail(MAL_ERR_ARG, "%s: a mal_config_t of %zu bytes: at least %zu "
                           "expected (fill it with mal_config_init first)", call, size,
                           (size_t)CONFIG_FIRST_SIZE);
    if (size > sizeof(mal_config_t))
        return engine_fail(MAL_ERR_ARG, "%s: a mal_config_t of %zu bytes, this libmal's "
                           "has %zu: the program was built against a newer mal.h", call,
                           size, sizeof(mal_config_t));
    return MAL_OK;
}

mal_status_t mal_config_init_size(mal_config_t *config, size_t size)
{
    engine_enter("mal_config_init");
    if (config == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_config_init: config is NULL");
    mal_status_t st = config_size_check(size, "mal_config_init");
    if (st)
        return st;
    mal_config_t defaults;
    settings_defaults(&defaults);
    defaults.size = size;
    memcpy(config, &defaults, size); /* only the fields the caller knows */
    return MAL_OK;
}

mal_status_t (mal_config_init)(mal_config_t *config)
{
    return mal_config_init_size(config, sizeof(mal_config_t));
}

mal_status_t engine_resolve_method(mal_redist_t requested, mal_redist_t *method,
                                   const char *call)
{
    int m = MAL_REDIST_RMA;
    mal_status_t st = setting_choice(SETTING_REDIST, (int)requested, call, &m);
    if (!st)
        *method = (mal_redist_t)m;
    return st;
}

static mal_status_t check_comm(MPI_Comm comm)
{
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag)
        return engine_fail(MAL_ERR_MPI, "mal_init: MPI is not initialised");
    if (comm == MPI_COMM_NULL)
        return engine_fail(MAL_ERR_ARG, "mal_init: comm is MPI_COMM_NULL");
    int inter = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return engine_fail(MAL_ERR_ARG, "mal_init: comm must be an intracommunicator");
    return MAL_OK;
}

/* Settings, plan and method: everything mal_init validates, on this rank, into the
 * settings object and what the layers derive from it. */
static mal_status_t resolve_all(const mal_config_t *cfg, engine_state_t *e)
{
    mal_status_t st = settings_check(cfg);
    if (!st)
        st = engine_reconf_timeout_check();
    if (!st)
        st = settings_resolve(cfg, &e->settings);
    if (st)
        return st;
    engine_parts_t parts = engine_parts_of(e);
    st = engine_state_derive(&parts, false);
    const engine_settings_t *settings = &e->conf;
    char err[320];
    /* Every entry checked now, rather than when it fires, against the process counts
     * the plan's own changes can leave it (docs/guide/malleable.md, "The plan"). */
    int procs = 1;
    MPI_Comm_size(e->group.comm, &procs);
    if (!st && (schedule_parse(settings->plan, &e->pol.schedule, err, sizeof err) != 0 ||
                schedule_check(&e->pol.schedule, procs, err, sizeof err) != 0))
        st = engine_fail(MAL_ERR_ARG, "mal_init: plan '%s': %s", settings->plan, err);
    /* A plan this launcher or MPI library cannot carry out without hanging is refused
     * now, not at its iteration (platform.c). */
    if (!st)
        st = engine_platform_check(&e->pol.schedule, e->xfer.direct);
    return st;
}

/* The SHMEM transport: started once every rank agreed on it. Its PE set is fixed (for
 * the rest of the process, even in a later mal_init on MPI), so a plan that adds or
 * releases processes is refused now rather than at its iteration. */
static mal_status_t start_transport(const engine_state_t *e, mal_redist_t method)
{
    if (method != MAL_REDIST_SHMEM && !engine_shmem_active())
        return MAL_OK;
    const schedule_t *plan = &e->pol.schedule;
    for (size_t i = 0; i < plan->count; i++)
        if (plan->actions[i].kind != SCHEDULE_REBALANCE)
            return engine_fail(MAL_ERR_UNSUPPORTED, "mal_init: plan entry %zu (iteration %lld) "
                               "adds or releases processes, which SHMEM (MAL_REDIST=shmem) "
                               "cannot: its PE set is fixed", i + 1,
                               (long long)plan->actions[i].iteration);
    return method == MAL_REDIST_SHMEM ? engine_shmem_start(e->group.comm) : MAL_OK;
}

static void release_state(engine_state_t *e)
{
    engine_settings_free(&e->conf);
    settings_free(&e->settings);
    engine_decider_free(&e->pol);
    engine_free_values(&e->reg);
}

/* Settings, plan and transport, validated and agreed over `dup`, which `e` takes; the
 * job communicator. On failure `e` is left empty (dup freed). */
static mal_status_t start_initial(engine_state_t *e, MPI_Comm comm, MPI_Comm dup,
                                  const mal_config_t *cfg)
{
    *e = (engine_state_t){.group.comm = dup, .procs.initial = true};
    /* Validate after the duplication, so a rank with a bad setting fails together with
     * the others instead of leaving them in a collective. Every rank must share the
     * settings marked `agree` and what was derived from them: capacities, layouts and
     * chunking are computed by each rank for all ranks, and the plan decides collective
     * actions on every rank. */
    mal_status_t st = resolve_all(cfg, e);
    uint64_t fp = st ? 0 : engine_settings_fingerprint(
        &e->conf, settings_hash(&e->settings, ENGINE_HASH_SEED));
    st = engine_agree_in(e->group.comm, st, fp,
                         "mal_init (config, MAL_REDIST, MAL_MAX_COUNT, plan, spawn)");
    if (!st)
        st = engine_agree_in(e->group.comm, start_transport(e, e->xfer.method), 0,
                             "mal_init (SHMEM transport)");
    if (!st)
        st = engine_mpi_check(MPI_Comm_dup(comm, &e->procs.job), "mal_init: MPI_Comm_dup");
    if (st) {
        release_state(e);
        MPI_Comm_free(&e->group.comm);
        *e = (engine_state_t){.group.comm = MPI_COMM_NULL};
        return st;
    }
    engine_parts_t parts = engine_parts_of(e);
    engine_state_enter(&parts, &e->procs, dup);
    engine_release_start(&parts); /* the initial processes' hosts stay in a Slurm job */
    e->initialized = true;
    return MAL_OK;
}

/* A process an expansion started: its state comes with the join (procs/join.c), which
 * returns once the process is active (one spawned into the pool waits there until an
 * expansion wakes it). Rank 0 checked the plan at its mal_init. */
static mal_status_t start_joined(engine_state_t *e, MPI_Comm parent, const mal_config_t *cfg)
{
    *e = (engine_state_t){.group.comm = MPI_COMM_NULL};
    engine_parts_t parts = engine_parts_of(e);
    engine_join(&parts, &e->procs, parent, cfg);
    schedule_parse(e->conf.plan, &e->pol.schedule, NULL, 0);
    engine_monitor_begin_iteration(e->sink.mon); /* the first iteration starts now */
    e->initialized = true;
    return MAL_OK;
}

/* Rank 0's lines at mal_init, with summaries on. */
static void announce(const engine_state_t *e)
{
    if (e->group.rank == 0 && e->conf.summary && engine_platform_probed())
        engine_platform_announce();
    if (e->group.rank == 0 && e->conf.summary)
        engine_spawn_bound_notice();
    if (e->group.rank == 0 && e->conf.summary)
        engine_room_announce(&e->conf);
}

mal_status_t mal_init(MPI_Comm comm, const mal_config_t *config)
{
    engine_state_t *e = engine_context();
    mal_config_t cfg;
    mal_config_init(&cfg);
    engine_enter("mal_init"); /* after mal_config_init, which names itself */
    if (e->initialized)
        return engine_fail(MAL_ERR_ALREADY_INITIALIZED, "mal_init called twice");
    /* The fields the program knows; the others keep their defaults. */
    mal_status_t bad = config != NULL ? config_size_check(config->size, "mal_init") : MAL_OK;
    if (bad)
        return bad;
    if (config != NULL)
        memcpy(&cfg, config, config->size);
    engine_set_logging(cfg.log_errors);
    /* A process libmal spawned has started: SIGTERM means what it always does again. */
    engine_spawn_guard_end();
    engine_finalize_bound();
    MPI_Comm dup, parent = MPI_COMM_NULL;
    mal_status_t st = check_comm(comm);
    if (!st)
        MPI_Comm_get_parent(&parent);
    if (!st && parent != MPI_COMM_NULL)
        return start_joined(e, parent, &cfg);
    if (st || (st = engine_mpi_check(MPI_Comm_dup(comm, &dup), "mal_init: MPI_Comm_dup")))
        return st;
    /* Errors inside libmal become status codes, not aborts: a failed rebalance must
     * leave the application running with its data. */
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    if ((st = start_initial(e, comm, dup, &cfg)))
        return st;
    engine_spawn_agree(dup);
    announce(e);
    /* A prefetch that cannot spawn leaves a smaller pool, said on stderr: the
     * application runs as without it. */
    engine_parts_t parts = engine_parts_of(e);
    engine_pool_start(&parts, &e->procs);
    e->pol.start_seconds = MPI_Wtime();
    return MAL_OK;
}

mal_status_t mal_finalize(void)
{
    engine_state_t *e = engine_context();
    engine_enter("mal_finalize");
    if (!e->initialized)
        return engine_fail(MAL_ERR_NOT_INITIALIZED, "mal_finalize called before mal_init");
    /* An asynchronous expansion's thread may still copy rows ahead into the spares:
     * it ends before they are freed. */
    engine_async_finish(&e->procs);
    engine_array_destroy_all(&e->reg);
    engine_csr_free_all(&e->reg);
    engine_monitor_finalize(&e->sink.mon);
    engine_pool_finalize(&e->group, &e->procs);
    engine_spawn_end_stuck();
    if (e->group.comm != MPI_COMM_NULL)
        MPI_Comm_free(&e->group.comm);
    /* MPI finalizes whole jobs: meet the rest of this one (parked if released). */
    engine_park(&e->procs, &e->conf, e->procs.removed);
    MPI_Comm_free(&e->procs.job);
    release_state(e);
    *e = (engine_state_t){.group.comm = MPI_COMM_NULL};
    engine_set_log_rank(-1);
    engine_set_logging(true);
    return MAL_OK;
}

mal_status_t mal_set_redist(mal_redist_t method)
{
    mal_status_t st = engine_require_init("mal_set_redist");
    mal_redist_t resolved = MAL_REDIST_RMA;
    if (st || (st = engine_resolve_method(method, &resolved, "mal_set_redist: method")))
        return st;
    engine_transfer_t *xfer = &engine_context()->xfer;
    if (resolved == MAL_REDIST_SHMEM && !xfer->shmem)
        return engine_fail(MAL_ERR_UNSUPPORTED, "mal_set_redist: shmem is chosen at mal_init "
                           "(MAL_REDIST=shmem or config->redist), which starts SHMEM and puts "
                           "structures on the symmetric heap%s",
                           engine_redist_supported(MAL_REDIST_SHMEM)
                               ? "" : "; this libmal was built without OpenSHMEM");
    xfer->method = resolved;
    /* The settings object says what a process that joins later moves data with. */
    engine_context()->settings.value[SETTING_REDIST].num = resolved;
    return MAL_OK;
}

