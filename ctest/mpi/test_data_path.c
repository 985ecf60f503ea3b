/* The data path without a second process: the planner (plan.c) and the executor
 * (reconfig.c) driven through a fake transport that copies bytes between simulated
 * ranks held in this one process. Run at -n 1 (the executor's agreement needs MPI).
 *
 * For a rebalance, an expansion and a shrink over 4 simulated ranks it checks: the
 * layouts over U (empty parts for joiners and leavers, n_of_u), that the segments cover
 * every new row exactly once with the right source row, that an unchanged layout moves
 * nothing (no transport call at all), the call sequence through the table (allocate,
 * expose, pull, complete, close, free) for each action, and that two different fake
 * transports (one-sided, following the plan's mode, and two-sided, the receiver copying
 * every segment) leave the same bytes where the new layout says. A structure with a halo
 * (mal_alloc_halo) gets its rows of room around every new part, rebalanced into the
 * spare (a part emptied included) or expanded into new buffers, and no move writes
 * them. */
#include "memory.h"
#include "mpitest.h"
#include "plan.h"
#include "registry.h"
#include "registry_impl.h" /* the structures are built by hand, buffers and all */
#include "transport.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NR 4        /* simulated ranks */
#define ROWS 100    /* block rows */
#define REP_ROWS 10 /* replicated rows */
#define ROW_LEN 2   /* doubles per row */
#define RB ((int64_t)(ROW_LEN * sizeof(double)))

/* ---- the fake transports: every simulated rank's old and new buffer, and a log of the
 * calls each simulated rank made through the table ---- */

static char *sim_src[NR], *sim_dst[NR];
static int64_t sim_halo; /* the block structure's halo rows */
static char calls[NR][512];
/* Every simulated rank's buffers as direct memory of this process, per structure (0
 * block, 1 replicated): the fakes copy through the addresses, and the real rma
 * transport reaches them by cross-memory attach of this process itself. */
static engine_peer_mem_t src_peers[2][NR], dst_peers[2][NR];

static char *peer_base(const engine_remote_t *at, int peer)
{
    return (char *)(uintptr_t)at->peers[peer].base;
}

static void note(const engine_plan_t *plan, const char *what)
{
    strncat(calls[plan->me], what, sizeof calls[0] - strlen(calls[plan->me]) - 1);
}

static mal_status_t fake_allocate(engine_plan_t *plan)
{
    note(plan, "A ");
    return MAL_OK;
}

static mal_status_t fake_expose(engine_plan_t *plan, engine_side_t side)
{
    note(plan, side == ENGINE_SIDE_SRC ? "E0 " : "E1 ");
    return MAL_OK;
}

static mal_status_t fake_complete(engine_plan_t *plan, engine_side_t side, bool close)
{
    note(plan, close ? (side == ENGINE_SIDE_SRC ? "X0 " : "X1 ")
                     : (side == ENGINE_SIDE_SRC ? "C0 " : "C1 "));
    return MAL_OK;
}

static void fake_free(engine_plan_t *plan)
{
    note(plan, "F ");
}

/* One-sided: the plan's gets and puts land in the simulated peer's buffers. */
static mal_status_t sim_transfer(const engine_plan_t *plan, bool put, char *buf, int64_t bytes,
                                 int peer, int64_t disp)
{
    if (put)
        memcpy(peer_base(&plan->dst_at, peer) + disp, buf, (size_t)bytes);
    else
        memcpy(buf, peer_base(&plan->src_at, peer) + disp, (size_t)bytes);
    return MAL_OK;
}

static mal_status_t one_sided_pull(engine_plan_t *plan)
{
    note(plan, "P ");
    mal_status_t st = engine_one_sided_walk(plan, sim_transfer);
    engine_copy_local(plan);
    return st;
}

/* Two-sided: the receiver copies every incoming segment whole, whatever the mode. */
static mal_status_t two_sided_pull(engine_plan_t *plan)
{
    note(plan, "P ");
    int64_t rb = plan->row_bytes;
    for (size_t i = 0; i < plan->nrecv; i++) {
        const partition_segment_t *s = &plan->recv[i];
        if (s->peer != plan->me)
            memcpy(plan->dst + s->dst_offset * rb,
                   peer_base(&plan->src_at, s->peer) +
                       (plan->src_at.offsets[s->peer] + s->src_offset) * rb,
                   (size_t)(s->rows * rb));
    }
    engine_copy_local(plan);
    return MAL_OK;
}

static const engine_transport_t fake_one_sided = {
    .name = "fake-one-sided", .allocate = fake_allocate, .expose = fake_expose,
    .pull = one_sided_pull, .complete = fake_complete, .free = fake_free};
static const engine_transport_t fake_two_sided = {
    .name = "fake-two-sided", .allocate = fake_allocate, .expose = fake_expose,
    .pull = two_sided_pull, .complete = fake_complete, .free = fake_free};

/* ---- simulated ranks ---- */

typedef struct {
    mal_array_t block, rep;
    int64_t bounds[NR + 1], offsets[NR], rep_offsets[NR];
    int64_t caps[2][NR], rep_caps[NR];
    engine_registry_t reg;
    engine_reconfig_t rc;
} sim_rank_t;

static const engine_transfer_t rma = {.method = MAL_REDIST_RMA, .count_limit = INT64_MAX};
static const engine_transfer_t rma_get = {.method = MAL_REDIST_RMA_GET,
                                          .count_limit = INT64_MAX};

static double value(int64_t row, int k)
{
    return (double)row * ROW_LEN + k;
}

static void fill_rows(char *base, int64_t first, int64_t rows)
{
    double *d = (double *)base;
    for (int64_t i = 0; i < rows; i++)
        for (int k = 0; k < ROW_LEN; k++)
            d[i * ROW_LEN + k] = value(first + i, k);
}

/* A block structure evenly over `old_procs` ranks, in an old buffer sized to its part
 * (so a layout that moves a part's start left cannot stay in place) and a spare of every
 * row; ranks at or past old_procs are joiners without one. */
static void sim_block(sim_rank_t *s, int r, int old_procs)
{
    mal_array_t *a = &s->block;
    *a = (mal_array_t){.layout = ENGINE_LAYOUT_OWN, .distribution = MAL_BLOCK,
                       .global_rows = ROWS, .row_len = ROW_LEN, .row_bytes = RB,
                       .halo = sim_halo, .bounds = s->bounds, .offsets = s->offsets};
    strcpy(a->name, "block");
    partition_even(ROWS, old_procs, s->bounds);
    for (int q = 0; q < old_procs; q++) {
        s->offsets[q] = 0;
        s->caps[0][q] = s->bounds[q + 1] - s->bounds[q];
        s->caps[1][q] = ROWS;
    }
    a->buf[0] = a->buf[1] = (engine_buffer_t){.win = MPI_WIN_NULL};
    if (r < old_procs) {
        a->buf[0] = (engine_buffer_t){.win = MPI_WIN_NULL, .base = sim_src[r],
                                      .caps = s->caps[0], .peers = src_peers[0]};
        a->buf[1] = (engine_buffer_t){.win = MPI_WIN_NULL, .base = sim_dst[r],
                                      .caps = s->caps[1], .peers = dst_peers[0]};
        fill_rows(sim_src[r], s->bounds[r], s->bounds[r + 1] - s->bounds[r]);
    }
    s->reg = (engine_registry_t){.arrays = a};
}

/* A replicated structure after the block one (old owners hold every row past the
 * block rows in their source buffer). */
static void sim_replicated(sim_rank_t *s, int r, int old_procs)
{
    mal_array_t *a = &s->rep;
    *a = (mal_array_t){.layout = ENGINE_LAYOUT_OWN, .distribution = MAL_REPLICATED,
                       .global_rows = REP_ROWS, .row_len = ROW_LEN, .row_bytes = RB,
                       .bounds = s->bounds, .offsets = s->rep_offsets};
    strcpy(a->name, "rep");
    for (int q = 0; q < NR; q++) {
        s->rep_offsets[q] = ROWS;  /* after the block rows in the same memory */
        s->rep_caps[q] = ROWS + REP_ROWS;
    }
    a->buf[0] = a->buf[1] = (engine_buffer_t){.win = MPI_WIN_NULL};
    if (r < old_procs) {
        a->buf[0] = (engine_buffer_t){.win = MPI_WIN_NULL, .base = sim_src[r],
                                      .caps = s->rep_caps, .peers = src_peers[1]};
        fill_rows(sim_src[r] + ROWS * RB, 0, REP_ROWS);
    }
    s->block.next = a;
}

static void reset_memory(void)
{
    uint64_t bytes = (uint64_t)((ROWS + REP_ROWS) * RB);
    for (int r = 0; r < NR; r++) {
        for (int i = 0; i < 2; i++) {
            src_peers[i][r] = (engine_peer_mem_t){.pid = getpid(), .size = bytes,
                                                  .base = (uint64_t)(uintptr_t)sim_src[r]};
            dst_peers[i][r] = (engine_peer_mem_t){.pid = getpid(), .size = bytes - i * ROWS * RB,
                                                  .base = (uint64_t)(uintptr_t)
                                                      (sim_dst[r] + i * ROWS * RB)};
        }
        memset(sim_src[r], 0xff, (size_t)((ROWS + REP_ROWS) * RB));
        memset(sim_dst[r], 0xff, (size_t)((ROWS + REP_ROWS) * RB));
        calls[r][0] = '\0';
    }
}

/* Across communicators the target is a new buffer over N (engine_plan_targets); here
 * it is the simulated rank's second buffer (the replicated rows after the block ones),
 * with the new parts where the planner put them. */
static void sim_targets(engine_reconfig_t *rc)
{
    for (int i = 0; i < rc->count; i++) {
        engine_move_t *m = &rc->moves[i];
        if (rc->n_of_u[rc->me_u] < 0)
            continue;
        char *base = peer_base(&(engine_remote_t){.peers = dst_peers[i]}, rc->me_u);
        m->plan.dst = base + m->new_offsets[rc->me_u] * RB;
        m->plan.dst_at = (engine_remote_t){.win = MPI_WIN_NULL, .peers = dst_peers[i],
                                           .base = base, .offsets = m->new_offsets};
    }
}

/* Every new row of the block structure arrives exactly once, from the rank that held
 * it, at its place in the new part. */
static void check_segments(sim_rank_t *sim, const char *what)
{
    const engine_move_t *m0 = &sim[0].rc.moves[0];
    int n = sim[0].rc.n_u;
    for (int r = 0; r < n; r++) {
        const engine_move_t *m = &sim[r].rc.moves[0];
        int64_t rows = m0->new_bounds[r + 1] - m0->new_bounds[r], covered = 0;
        char *seen = calloc((size_t)rows + 1, 1);
        for (size_t k = 0; k < m->plan.nrecv; k++) {
            const partition_segment_t *s = &m->plan.recv[k];
            for (int64_t i = 0; i < s->rows; i++) {
                int64_t row = s->dst_offset + i;
                CHECK(row >= 0 && row < rows && !seen[row], "%s: rank %d row %lld twice or "
                      "outside its part", what, r, (long long)row);
                if (row >= 0 && row < rows)
                    seen[row] = 1;
                CHECK(m0->old_bounds[s->peer] + s->src_offset + i == m0->new_bounds[r] + row,
                      "%s: rank %d row %lld from the wrong source row", what, r,
                      (long long)row);
                covered++;
            }
        }
        CHECK(covered == rows, "%s: rank %d gets %lld of its %lld rows", what, r,
              (long long)covered, (long long)rows);
        free(seen);
    }
}

/* The new parts hold the rows the new layout gives them. */
static void check_data(sim_rank_t *sim, const char *what)
{
    const engine_move_t *m0 = &sim[0].rc.moves[0];
    for (int r = 0; r < sim[0].rc.n_u; r++) {
        const double *d = (const double *)(sim_dst[r] + m0->new_offsets[r] * RB);
        int64_t bad = 0;
        for (int64_t row = m0->new_bounds[r]; row < m0->new_bounds[r + 1]; row++)
            for (int k = 0; k < ROW_LEN; k++)
                bad += d[(row - m0->new_bounds[r]) * ROW_LEN + k] != value(row, k);
        CHECK(bad == 0, "%s: rank %d has %lld wrong values", what, r, (long long)bad);
    }
}

/* Plan and execute on every simulated rank in turn. Sources are never written (the
 * targets are the second buffers), so running the ranks one after another is the same
 * as running them together. */
static void run(sim_rank_t *sim, int n_u, bool plan_targets)
{
    for (int r = 0; r < n_u; r++) {
        engine_reconfig_t *rc = &sim[r].rc;
        mal_status_t st = engine_plan_all(rc);
        CHECK(st == MAL_OK, "plan on rank %d: %s", r, mal_error_message());
        if (plan_targets)
            st = engine_plan_targets(rc);
        else
            sim_targets(rc);
        CHECK(st == MAL_OK, "targets on rank %d: %s", r, mal_error_message());
        engine_execute_expose_sources(rc->moves, rc->count);
        if (rc->changed)
            st = engine_execute(rc->moves, rc->count, MPI_COMM_SELF, MAL_OK, "test");
        CHECK(st == MAL_OK, "execute on rank %d: %s", r, mal_error_message());
    }
}

static void release(sim_rank_t *sim, int n_u)
{
    for (int r = 0; r < n_u; r++)
        engine_reconfig_release(&sim[r].rc);
}

static engine_reconfig_t sim_rc(sim_rank_t *s, mal_action_t action, int r, int n_u,
                                int old_procs, int n_n, const double *weights,
                                const engine_transfer_t *xfer, const engine_transport_t *tp)
{
    engine_reconfig_t rc = {.action = action, .reg = &s->reg, .xfer = xfer, .transport = tp,
                            .u = MPI_COMM_SELF, .me_u = r, .n_u = n_u, .n = MPI_COMM_SELF,
                            .me_n = r, .n_n = n_n, .old_procs = old_procs,
                            .weights = weights};
    CHECK(engine_reconfig_prepare(&rc) == MAL_OK, "prepare: %s", mal_error_message());
    return rc;
}

/* A rebalance: U = N, n_of_u the identity, the spare as target. `expect`: the calls
 * through the table (NULL for a real transport, which logs nothing). */
static void test_rebalance(const engine_transfer_t *xfer, const engine_transport_t *tp,
                           const char *expect)
{
    const double weights[NR] = {10, 30, 30, 30};
    sim_rank_t sim[NR];
    char what[96];
    snprintf(what, sizeof what, "rebalance %s via %s", mal_redist_name(xfer->method), tp->name);
    reset_memory();
    for (int r = 0; r < NR; r++) {
        sim_block(&sim[r], r, NR);
        sim[r].rc = sim_rc(&sim[r], MAL_ACTION_REBALANCE, r, NR, NR, NR, weights, xfer, tp);
        for (int q = 0; q < NR; q++)
            CHECK(sim[r].rc.n_of_u[q] == q, "%s: n_of_u[%d] = %d", what, q,
                  sim[r].rc.n_of_u[q]);
    }
    run(sim, NR, true);
    const engine_move_t *m = &sim[0].rc.moves[0];
    CHECK(sim[0].rc.changed && m->moves && !m->in_place, "%s: moves to the spare", what);
    CHECK(m->plan.mode == (xfer->method == MAL_REDIST_RMA ? ENGINE_RMA_SPLIT : ENGINE_RMA_PULL),
          "%s: mode %d", what, (int)m->plan.mode);
    for (int q = 0; q <= NR; q++)
        CHECK(m->old_bounds[q] == sim[0].bounds[q], "%s: the old layout over U is the "
              "current one", what);
    check_segments(sim, what);
    check_data(sim, what);
    release(sim, NR);
    for (int r = 0; r < NR && expect != NULL; r++)
        CHECK(strcmp(calls[r], expect) == 0, "%s: rank %d called \"%s\", not \"%s\"", what,
              r, calls[r], expect);
}

/* Every simulated rank's block structure rebalanced to `weights` through the one-sided
 * fake (the spare as target). */
static void sim_rebalance(sim_rank_t *sim, const double *weights)
{
    reset_memory();
    for (int r = 0; r < NR; r++) {
        sim_block(&sim[r], r, NR);
        sim[r].rc = sim_rc(&sim[r], MAL_ACTION_REBALANCE, r, NR, NR, NR, weights, &rma,
                           &fake_one_sided);
    }
    run(sim, NR, true);
}

/* Weights that give the current layout: nothing moves, no transport call at all. */
static void test_unchanged(void)
{
    const double weights[NR] = {1, 1, 1, 1};
    sim_rank_t sim[NR];
    sim_rebalance(sim, weights);
    for (int r = 0; r < NR; r++) {
        CHECK(!sim[r].rc.changed && !sim[r].rc.moves[0].moves, "unchanged: rank %d moves",
              r);
        CHECK(calls[r][0] == '\0', "unchanged: rank %d called \"%s\"", r, calls[r]);
    }
    release(sim, NR);
}

/* An expansion from 2 to 4: U = N, joiners empty in the old layout, old owners push,
 * replicated rows sliced over the old owners for every joiner. */
static void test_expand(const engine_transport_t *tp)
{
    sim_rank_t sim[NR];
    reset_memory();
    for (int r = 0; r < NR; r++) {
        sim_block(&sim[r], r, 2);
        sim_replicated(&sim[r], r, 2);
        sim[r].rc = sim_rc(&sim[r], MAL_ACTION_EXPAND, r, NR, 2, NR, NULL, &rma, tp);
    }
    run(sim, NR, false);
    const engine_move_t *m = &sim[0].rc.moves[0];
    const int64_t old_u[NR + 1] = {0, 50, 100, 100, 100};
    for (int q = 0; q <= NR; q++) {
        CHECK(m->old_bounds[q] == old_u[q], "expand: old_u[%d] = %lld", q,
              (long long)m->old_bounds[q]);
        CHECK(m->new_bounds[q] == 25 * q, "expand: new_u[%d] = %lld", q,
              (long long)m->new_bounds[q]);
    }
    CHECK(m->plan.mode == ENGINE_RMA_PUSH, "expand: the old owners push");
    check_segments(sim, "expand");
    check_data(sim, "expand");
    for (int r = 0; r < NR; r++) {
        const engine_move_t *rep = &sim[r].rc.moves[1];
        const double *d = (const double *)(sim_dst[r] + (ROWS + rep->new_offsets[r]) * RB);
        int64_t bad = 0;
        for (int64_t row = 0; row < REP_ROWS; row++)
            for (int k = 0; k < ROW_LEN; k++)
                bad += d[row * ROW_LEN + k] != value(row, k);
        CHECK(bad == 0, "expand via %s: replicated copy of rank %d has %lld wrong values",
              tp->name, r, (long long)bad);
    }
    release(sim, NR);
    for (int r = 0; r < NR; r++)
        CHECK(strcmp(calls[r], "A A E1 E1 P P C1 C1 X1 X1 F F ") == 0,
              "expand: rank %d called \"%s\"", r, calls[r]);
}

/* A shrink from 4 to 3 releasing rank 1: n_of_u maps it to -1, its new part is empty,
 * the others pull. */
static void test_shrink(const engine_transport_t *tp)
{
    const int n_of_u[NR] = {0, -1, 1, 2};
    sim_rank_t sim[NR];
    reset_memory();
    for (int r = 0; r < NR; r++) {
        sim_block(&sim[r], r, NR);
        sim[r].rc = sim_rc(&sim[r], MAL_ACTION_SHRINK, r, NR, NR, 3, NULL, &rma, tp);
        memcpy(sim[r].rc.n_of_u, n_of_u, sizeof n_of_u);
        sim[r].rc.me_n = n_of_u[r];
    }
    run(sim, NR, false);
    const engine_move_t *m = &sim[0].rc.moves[0];
    CHECK(m->new_bounds[2] == m->new_bounds[1], "shrink: the leaver's new part is empty");
    CHECK(m->new_bounds[NR] == ROWS && m->new_bounds_n[3] == ROWS, "shrink: every row kept");
    CHECK(m->plan.mode == ENGINE_RMA_PULL, "shrink: the remaining ranks pull");
    CHECK(sim[1].rc.moves[0].plan.nrecv == 0, "shrink: the leaver receives nothing");
    check_segments(sim, "shrink");
    check_data(sim, "shrink");
    release(sim, NR);
    for (int r = 0; r < NR; r++)
        CHECK(strcmp(calls[r], "A E0 P C0 X0 F ") == 0, "shrink: rank %d called \"%s\"", r,
              calls[r]);
}

/* Every new part of the block structure has its halo of room inside its target buffer
 * of `caps[r]` rows, and the move left that room as reset_memory wrote it. */
static void check_halo_room(const sim_rank_t *sim, const int64_t *caps, const char *what)
{
    const engine_move_t *m = &sim[0].rc.moves[0];
    for (int r = 0; r < sim[0].rc.n_u; r++) {
        int64_t rows = m->new_bounds[r + 1] - m->new_bounds[r], off = m->new_offsets[r];
        bool room = off >= sim_halo && off + rows + sim_halo <= caps[r];
        CHECK(room, "%s: rank %d's part of %lld rows at %lld in %lld rows has no halo of %lld "
              "around it", what, r, (long long)rows, (long long)off, (long long)caps[r],
              (long long)sim_halo);
        if (!room)
            continue; /* the bytes around it are not all the buffer's */
        int64_t touched = 0;
        for (int64_t k = 1; k <= sim_halo; k++)
            for (int64_t b = 0; b < RB; b++)
                touched += (unsigned char)sim_dst[r][(off - k) * RB + b] != 0xff ||
                           (unsigned char)sim_dst[r][(off + rows + k - 1) * RB + b] != 0xff;
        CHECK(touched == 0, "%s: the move wrote %lld bytes of rank %d's halo", what,
              (long long)touched, r);
    }
}

/* A rebalance of a structure with a halo, one part emptied: the old buffers are exactly
 * the parts (no room), so every part goes to the spare, with its halo inside. */
static void test_halo_rebalance(void)
{
    const double weights[NR] = {10, 0, 30, 30};
    sim_rank_t sim[NR];
    sim_halo = 2;
    sim_rebalance(sim, weights);
    const engine_move_t *m = &sim[0].rc.moves[0];
    CHECK(m->moves && !m->in_place, "halo rebalance: parts without room stayed in place");
    CHECK(m->new_bounds[2] == m->new_bounds[1], "halo rebalance: rank 1's part is not empty");
    check_segments(sim, "halo rebalance");
    check_data(sim, "halo rebalance");
    check_halo_room(sim, sim[0].caps[1], "halo rebalance");
    release(sim, NR);
    sim_halo = 0;
}

/* An expansion from 2 to 4 of a structure with a halo: new buffers of the part and both
 * halos (no headroom here), the part after the halo. */
static void test_halo_expand(void)
{
    sim_rank_t sim[NR];
    sim_halo = 3;
    reset_memory();
    for (int r = 0; r < NR; r++) {
        sim_block(&sim[r], r, 2);
        sim[r].rc = sim_rc(&sim[r], MAL_ACTION_EXPAND, r, NR, 2, NR, NULL, &rma,
                           &fake_one_sided);
    }
    run(sim, NR, false);
    const engine_move_t *m = &sim[0].rc.moves[0];
    for (int r = 0; r < NR; r++)
        CHECK(m->caps[r] == 25 + 2 * sim_halo && m->new_offsets[r] == sim_halo,
              "halo expand: rank %d gets %lld rows with its part at %lld", r,
              (long long)m->caps[r], (long long)m->new_offsets[r]);
    check_segments(sim, "halo expand");
    check_data(sim, "halo expand");
    check_halo_room(sim, m->caps, "halo expand");
    release(sim, NR);
    sim_halo = 0;
}

/* The pure part of the planner: layouts over U from the old layout and N's. */
static void test_layouts(void)
{
    const int64_t old2[3] = {0, 5, 10}, new4[5] = {0, 3, 5, 8, 10};
    const int identity[4] = {0, 1, 2, 3};
    int64_t old_u[5], new_u[5];
    engine_plan_layouts(old2, 2, identity, 4, new4, old_u, new_u);
    const int64_t want_old[5] = {0, 5, 10, 10, 10};
    for (int q = 0; q <= 4; q++)
        CHECK(old_u[q] == want_old[q] && new_u[q] == new4[q], "layouts (expand) at %d", q);
    const int64_t old4[5] = {0, 3, 5, 8, 10}, new2[3] = {0, 6, 10};
    const int leave[4] = {-1, 0, -1, 1};
    engine_plan_layouts(old4, 4, leave, 4, new2, old_u, new_u);
    const int64_t want_new[5] = {0, 0, 6, 6, 10};
    for (int q = 0; q <= 4; q++)
        CHECK(old_u[q] == old4[q] && new_u[q] == want_new[q], "layouts (shrink) at %d", q);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int r = 0; r < NR; r++) {
        sim_src[r] = malloc((size_t)((ROWS + REP_ROWS) * RB));
        sim_dst[r] = malloc((size_t)((ROWS + REP_ROWS) * RB));
    }
    test_layouts();
    test_unchanged();
    const char *split = "A E0 E1 P C1 C0 X1 X0 F ", *pull = "A E0 P C0 X0 F ";
    test_rebalance(&rma, &fake_one_sided, split);
    test_rebalance(&rma, &fake_two_sided, split);
    test_rebalance(&rma_get, &fake_one_sided, pull);
    test_rebalance(&rma_get, &fake_two_sided, pull);
    /* The real one-sided transport over direct memory (this process reads itself). */
    test_rebalance(&rma, &engine_transport_rma, NULL);
    test_rebalance(&rma_get, &engine_transport_rma, NULL);
    test_expand(&fake_one_sided);
    test_shrink(&fake_one_sided);
    test_shrink(&fake_two_sided);
    test_halo_rebalance();
    test_halo_expand();
    for (int r = 0; r < NR; r++) {
        free(sim_src[r]);
        free(sim_dst[r]);
    }
    int code = mpitest_verdict("test_data_path", "planner and executor through a fake "
                               "transport: rebalance, expand, shrink, halos");
    MPI_Finalize();
    return code;
}
