/* Initialisation, configuration, method selection and cross-rank agreement. */
#include "engine.h"
#include "settings.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

mal_status_t mal_config_init(mal_config_t *config)
{
    engine_enter("mal_config_init");
    if (config == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_config_init: config is NULL");
    settings_defaults(config);
    return MAL_OK;
}

const char *mal_redist_name(mal_redist_t method)
{
    switch (method) {
    case MAL_REDIST_DEFAULT: return "default";
    case MAL_REDIST_RMA: return "rma";
    case MAL_REDIST_ALLTOALLV: return "alltoallv";
    case MAL_REDIST_P2P: return "p2p";
    case MAL_REDIST_RMA_GET: return "rma-get";
    case MAL_REDIST_SHMEM: return "shmem";
    }
    return "unknown";
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

/* Settings every rank must share: capacities, layouts and chunking are computed by
 * each rank for all ranks, so a rank with other values would address windows wrongly. */
static uint64_t settings_fingerprint(const mal_config_t *c, mal_redist_t method,
                                     int64_t limit)
{
    int64_t v[3] = {c->min_rows, limit, (int64_t)method};
    uint64_t h = engine_hash(ENGINE_HASH_SEED, &c->headroom, sizeof c->headroom);
    return engine_hash(h, v, sizeof v);
}

/* The transport's settings: method, memory and count limit (settings.c's table). */
static mal_status_t resolve_transfer(const mal_config_t *cfg, engine_transfer_t *xfer)
{
    int memory = MAL_MEMORY_DIRECT;
    mal_status_t st = engine_resolve_method(cfg->redist, &xfer->method,
                                            "mal_init: config->redist");
    if (!st)
        st = setting_number(SETTING_MAX_COUNT, &xfer->count_limit);
    if (!st)
        st = setting_choice(SETTING_MEMORY, (int)cfg->memory, "mal_init: config->memory",
                            &memory);
    xfer->direct = memory == MAL_MEMORY_DIRECT;
    xfer->shmem = xfer->method == MAL_REDIST_SHMEM;
    return st;
}

/* Settings, plan and method: everything mal_init validates, on this rank. */
static mal_status_t resolve_all(const mal_config_t *cfg, engine_transfer_t *xfer,
                                engine_settings_t *settings, schedule_t *schedule)
{
    mal_status_t st = settings_check(cfg);
    if (!st)
        st = engine_reconf_timeout_check();
    if (!st)
        st = resolve_transfer(cfg, xfer);
    if (!st)
        st = engine_settings_resolve(cfg, settings);
    char err[256];
    if (!st && schedule_parse(settings->plan, schedule, err, sizeof err) != 0)
        st = engine_fail(MAL_ERR_ARG, "mal_init: plan '%s': %s", settings->plan, err);
    /* A plan this launcher or MPI library cannot carry out without hanging is refused
     * now, not at its iteration (platform.c). */
    if (!st)
        st = engine_platform_check(schedule, xfer->direct);
    return st;
}

/* The SHMEM transport: started once every rank agreed on it. Its PE set is fixed (for
 * the rest of the process, even in a later mal_init on MPI), so a plan that adds or
 * releases processes is refused now rather than at its iteration. */
static mal_status_t start_transport(mal_redist_t method)
{
    if (method != MAL_REDIST_SHMEM && !engine_shmem_active())
        return MAL_OK;
    for (size_t i = 0; i < engine.pol.schedule.count; i++)
        if (engine.pol.schedule.actions[i].kind != SCHEDULE_REBALANCE)
            return engine_fail(MAL_ERR_UNSUPPORTED, "mal_init: plan entry %zu (iteration %lld) "
                               "adds or releases processes, which SHMEM (MAL_REDIST=shmem) "
                               "cannot: its PE set is fixed", i + 1,
                               (long long)engine.pol.schedule.actions[i].iteration);
    return method == MAL_REDIST_SHMEM ? engine_shmem_start(engine.comm) : MAL_OK;
}

static void release_state(void)
{
    engine_settings_free(&engine.procs.settings);
    schedule_free(&engine.pol.schedule);
    engine_free_values();
}

mal_status_t mal_init(MPI_Comm comm, const mal_config_t *config)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    engine_enter("mal_init"); /* after mal_config_init, which names itself */
    if (engine.initialized)
        return engine_fail(MAL_ERR_ALREADY_INITIALIZED, "mal_init called twice");
    if (config != NULL)
        cfg = *config;
    engine_set_logging(cfg.log_errors);
    /* A process libmal spawned has started: SIGTERM means what it always does again. */
    engine_spawn_guard_end();
    MPI_Comm dup, parent = MPI_COMM_NULL;
    mal_status_t st = check_comm(comm);
    if (!st)
        MPI_Comm_get_parent(&parent);
    if (!st && parent != MPI_COMM_NULL)
        return engine_join(parent, &cfg);
    if (st || (st = engine_mpi_check(MPI_Comm_dup(comm, &dup), "mal_init: MPI_Comm_dup")))
        return st;
    /* Errors inside libmal become status codes, not aborts: a failed rebalance must
     * leave the application running with its data. */
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    engine = (engine_state_t){.comm = dup, .config = cfg, .procs.initial = true};
    MPI_Comm_rank(dup, &engine.rank);
    MPI_Comm_size(dup, &engine.size);
    /* Validate after the duplication, so a rank with a bad setting fails together with
     * the others instead of leaving them in a collective. */
    engine_transfer_t xfer = {.method = MAL_REDIST_RMA};
    st = resolve_all(&cfg, &xfer, &engine.procs.settings, &engine.pol.schedule);
    engine.xfer.direct = xfer.direct;
    uint64_t fp = st ? 0 : engine_settings_fingerprint(
        &engine.procs.settings, settings_fingerprint(&cfg, xfer.method, xfer.count_limit));
    st = engine_agree(st, fp, "mal_init (config, MAL_REDIST, MAL_MAX_COUNT, plan, spawn)");
    if (!st)
        st = engine_agree(start_transport(xfer.method), 0, "mal_init (SHMEM transport)");
    if (!st)
        st = engine_mpi_check(MPI_Comm_dup(comm, &engine.procs.job), "mal_init: MPI_Comm_dup");
    if (st) {
        release_state();
        MPI_Comm_free(&engine.comm);
        engine = (engine_state_t){.comm = MPI_COMM_NULL};
        return st;
    }
    engine.initialized = true;
    engine.xfer = xfer;
    engine.stats.last.method = xfer.method;
    engine.mon = engine_monitor_init(&engine.procs.settings, engine.procs.initial,
                                     engine.iteration, engine.rank == 0);
    if (engine.rank == 0 && engine.procs.settings.summary && engine_platform_probed())
        engine_platform_announce();
    if (engine.rank == 0 && engine.procs.settings.summary)
        engine_spawn_bound_notice();
    engine.pol.start_seconds = MPI_Wtime();
    return MAL_OK;
}

mal_status_t mal_finalize(void)
{
    engine_enter("mal_finalize");
    if (!engine.initialized)
        return engine_fail(MAL_ERR_NOT_INITIALIZED, "mal_finalize called before mal_init");
    while (engine.reg.arrays != NULL) {
        mal_array_t *a = engine.reg.arrays;
        engine.reg.arrays = a->next;
        engine_array_destroy(a);
    }
    engine_csr_free_all();
    engine_monitor_finalize(&engine.mon);
    engine_spawn_end_stuck();
    if (engine.comm != MPI_COMM_NULL)
        MPI_Comm_free(&engine.comm);
    /* MPI finalizes whole jobs: meet the rest of this one (parked if released). */
    engine_park(engine.procs.removed);
    MPI_Comm_free(&engine.procs.job);
    release_state();
    engine = (engine_state_t){.comm = MPI_COMM_NULL};
    engine_set_logging(true);
    return MAL_OK;
}

bool mal_is_initialized(void)
{
    return engine.initialized;
}

MPI_Comm mal_comm(void)
{
    return engine.initialized ? engine.comm : MPI_COMM_NULL;
}

mal_status_t mal_set_redist(mal_redist_t method)
{
    mal_status_t st = engine_require_init("mal_set_redist");
    mal_redist_t resolved = MAL_REDIST_RMA;
    if (st || (st = engine_resolve_method(method, &resolved, "mal_set_redist: method")))
        return st;
    if (resolved == MAL_REDIST_SHMEM && !engine.xfer.shmem)
        return engine_fail(MAL_ERR_UNSUPPORTED, "mal_set_redist: shmem is chosen at mal_init "
                           "(MAL_REDIST=shmem or config->redist), which starts SHMEM and puts "
                           "structures on the symmetric heap%s",
                           mal_redist_supported(MAL_REDIST_SHMEM)
                               ? "" : "; this libmal was built without OpenSHMEM");
    engine.xfer.method = resolved;
    return MAL_OK;
}

mal_redist_t mal_get_redist(void)
{
    return engine.initialized ? engine.xfer.method : MAL_REDIST_DEFAULT;
}

mal_status_t mal_last_rebalance(mal_rebalance_stats_t *stats)
{
    mal_status_t st = engine_require_init("mal_last_rebalance");
    if (st)
        return st;
    if (stats == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_last_rebalance: stats is NULL");
    *stats = engine.stats.last;
    return MAL_OK;
}

int mal_buffer_count(void)
{
    return engine.initialized ? engine.reg.windows : 0;
}

const char *mal_memory_name(const mal_array_t *array)
{
    if (!engine.initialized || array == NULL)
        return "none";
    return engine_buffer_kind(&array->buf[array->current]);
}

const char *mal_csr_memory_name(const mal_csr_t *matrix)
{
    return mal_memory_name(matrix != NULL ? matrix->values : NULL);
}

uint64_t engine_hash(uint64_t hash, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++)
        hash = (hash ^ p[i]) * 1099511628211ULL;
    return hash;
}

mal_status_t engine_agree(mal_status_t local, uint64_t fingerprint, const char *call)
{
    return engine_agree_in(engine.comm, local, fingerprint, call);
}

mal_status_t engine_agree_in(MPI_Comm comm, mal_status_t local, uint64_t fingerprint,
                             const char *call)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    /* One MAX-allreduce carries: worst status, a failing rank, and the fingerprint's
     * max and min (as max of its negation); 62 bits keep the negation in range. */
    int64_t fp = (int64_t)(fingerprint >> 2);
    int64_t v[4] = {-(int64_t)local, local ? rank : -1, fp, -fp};
    int rc = PMPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_MAX, comm);
    if (local)
        return local;
    if (rc != MPI_SUCCESS)
        return engine_mpi_check(rc, call);
    if (v[0] != 0)
        return engine_fail(MAL_ERR_REMOTE, "%s: rank %lld failed: %s", call,
                           (long long)v[1], mal_strerror((mal_status_t)-v[0]));
    if (v[2] != -v[3])
        return engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks", call);
    return MAL_OK;
}
