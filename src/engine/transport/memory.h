/* The transport layer's memory (transport/): a structure's buffers as peers reach them and
 * their lifecycle (buffer.c), direct memory (direct.c), windows over libmal's memory
 * (window.c), the OpenSHMEM runtime (shmem.c) and the MPI library's configuration
 * (platform.c). The transfers themselves are in transport.h. */
#ifndef MAL_TRANSPORT_MEMORY_H
#define MAL_TRANSPORT_MEMORY_H

#include "platform.h"
#include "schedule.h"
#include "transport.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One of the two buffers of a structure: memory other ranks can pull from without any
 * setup at rebalance time. Direct memory (every rank on one node: private memory that
 * peers copy by cross-memory attach, direct.c), an MPI window, or (SHMEM transport) a
 * symmetric-heap allocation, whose local address is also every PE's address of it. */
typedef struct {
    MPI_Win win;      /* MPI_WIN_NULL when absent, direct or symmetric   */
    char *base;       /* local memory of the buffer                      */
    int64_t *caps;    /* capacity in rows of every rank (same everywhere) */
    bool symmetric;   /* allocated with shmem_malloc                     */
    engine_peer_mem_t *peers; /* direct: every rank's process and base   */
    engine_peer_mem_t *near;  /* a window: the ranks of this host reached
                               * by cross-memory attach (pid 0: not one),
                               * NULL when none is                      */
    bool own;                 /* a window created over private memory
                               * libmal mapped (window.c)               */
    size_t mapped;    /* direct: bytes mapped at base                    */
    bool pending;     /* not a buffer, only this process's direct memory
                       * kept from one (caps: the old capacities over the
                       * new communicator where known, else NULL), which
                       * the next allocation of the structure reuses     */
    bool borrowed;    /* direct: its memory still belongs to another buffer
                       * of this process (the donor) until the move that
                       * needs it commits                               */
    bool lent;        /* direct: its memory now belongs to another buffer:
                       * freeing it must not unmap it                   */
    bool crossed;     /* data have crossed between ranks through it: its
                       * first-transfer costs are paid (the model's cold
                       * bandwidth applies until then)                    */
} engine_buffer_t;

/* ---- A structure's buffers (buffer.c) ----
 * Direct memory, a window or a symmetric block, every page populated when allocated, so
 * no first touch lands in a move (a reconfiguration's new memory excepted: see
 * engine_private_map_or_borrow). `count` is the caller's count of the buffers present in
 * this process (mal_buffer_count): an allocation adds one, a free takes one away. */

/* Whether the buffer holds memory (a window, direct memory or a symmetric block). */
bool engine_buffer_present(const engine_buffer_t *buf);
/* The application's allocation (mal_alloc_window and the like) over `comm`, mal_comm(),
 * collective; `caps` must be the same on every rank (MAL_ERR_MISMATCH otherwise). Under
 * the SHMEM method a symmetric block (`comm` spans every PE). `announce`: rank 0 says
 * once where structures live. */
mal_status_t engine_buffer_alloc(MPI_Comm comm, int *count, const engine_transfer_t *xfer,
                                 engine_buffer_t *buf, int64_t row_bytes, const int64_t *caps,
                                 bool announce);
/* A reconfiguration's new buffer over `comm`, collective; `caps` as above. `donor`: this
 * process's spare of the structure (its memory is borrowed where large enough), NULL on a
 * joining process. */
mal_status_t engine_buffer_alloc_in(MPI_Comm comm, int *count, const engine_transfer_t *xfer,
                                    engine_buffer_t *buf, int64_t row_bytes,
                                    const int64_t *caps, const engine_buffer_t *donor);
/* Give `buf` (over `comm`, mal_comm()) the capacities `caps`: direct memory is kept by
 * the ranks it still fits, otherwise the buffer is freed and allocated again (a
 * symmetric block when `symmetric`). Collective; on failure the buffer is absent on
 * every rank. */
mal_status_t engine_buffer_regrow(MPI_Comm comm, int *count, const engine_transfer_t *xfer,
                                  engine_buffer_t *buf, int64_t row_bytes, const int64_t *caps,
                                  bool symmetric);
/* Collective over the buffer's communicator for a window or a symmetric block. */
void engine_buffer_free(int *count, engine_buffer_t *buf);
/* libmal's memory under `b` (direct, or a window over it) kept, as no buffer any more,
 * for the structure's next allocation (pending, with `caps`, the capacities over the
 * new communicator where known, taken over). Direct memory leaves `b` empty; a window's
 * memory is only lent, its window freed later with the others (engine_buffer_free). */
engine_buffer_t engine_buffer_keep(int *count, engine_buffer_t *b, int64_t *caps);
/* Whether rank `rank`'s direct memory of `buf` (a buffer or kept memory) already holds
 * `cap` rows: a new buffer of that capacity maps nothing there. For the model. */
bool engine_buffer_holds(const engine_buffer_t *buf, int rank, int64_t cap);
/* "direct", "window", "symmetric" or "none". */
const char *engine_buffer_kind(const engine_buffer_t *buf);
/* `b` borrowed its memory from `donor`: hand it over for good (the donor's free no
 * longer unmaps it). */
void engine_buffer_settle(engine_buffer_t *b, engine_buffer_t *donor);

/* ---- Direct memory (direct.c) ---- */
/* Collective over `comm`: when `allowed` and every rank reaches every other one by
 * cross-memory attach (one host, permitted, proven), map `bytes` of private memory
 * (huge pages where the kernel has them, populated; with `lazy`, 4 KiB pages left
 * unpopulated: engine_private_map_or_borrow), or borrow `donor`'s (a direct buffer or
 * kept memory of this process, left untouched: b->borrowed) when it is large enough,
 * and learn every rank's address: *used = true. Otherwise *used = false and nothing is
 * allocated (the caller creates a window). Errors are agreed. */
mal_status_t engine_direct_alloc(MPI_Comm comm, engine_buffer_t *b, int64_t bytes,
                                 bool allowed, const engine_buffer_t *donor, bool lazy,
                                 bool *used);
/* Collective over the communicator of direct buffer `b`: ranks whose memory is smaller
 * than `bytes` map new memory, the others keep theirs; every rank learns the new
 * addresses. On failure `b` holds nothing on any rank. */
mal_status_t engine_direct_regrow(MPI_Comm comm, engine_buffer_t *b, int64_t bytes);
void engine_direct_free(engine_buffer_t *b);
/* Collective over the communicator of window buffer `b` (this rank's `bytes` at
 * b->base): the ranks of this host that this rank reaches by cross-memory attach, with
 * their addresses, in b->near (NULL when none is), when `allowed` (the direct-memory
 * setting); those pairs then move rows that way and the others through the window (a
 * job on several hosts). *all_near, the same on every rank: every rank reaches every
 * other rank of its host. Errors are agreed. */
mal_status_t engine_direct_near(MPI_Comm comm, engine_buffer_t *b, int64_t bytes,
                                bool allowed, bool *all_near);
/* Private memory for `bytes`, huge-page aligned and advised, populated: the memory of
 * direct buffers and of windows over libmal's memory. NULL when it cannot be had. */
char *engine_private_map(size_t bytes, size_t *mapped);
/* Memory for `bytes` on this rank: `donor`'s mapping when it is libmal's direct memory
 * (a buffer or kept) and large enough (*borrowed: the donor keeps it until the caller's
 * move commits, engine_buffer_settle), else engine_private_map's, or with `lazy` 4 KiB
 * pages left unpopulated. Lazy is for memory a reconfiguration maps (a newcomer's part):
 * an expansion onto another host spent 0.45 s of its 0.53 s in the newcomer populating
 * 192 MiB of huge pages the host no longer backed, and one on one host (2 -> 4, 256 MiB)
 * 0.32-0.48 s of its 0.41-0.57 s; unpopulated 4 KiB pages, faulted in by the transfer
 * that writes them, made the expansions 0.14-0.18 and 0.16 s, as fast as or faster than
 * the plain MPI baseline's (docs/design.md, "Several hosts"). The price: later copies
 * read those pages 2x slower than huge pages by cross-memory attach (a shrink 4 -> 2
 * after it: 0.03 s instead of 0.01-0.02). NULL without memory. */
char *engine_private_map_or_borrow(size_t bytes, const engine_buffer_t *donor, bool lazy,
                                   size_t *mapped, bool *borrowed);
/* Whether engine_private_map_or_borrow would borrow `donor`'s memory for `bytes` (local:
 * the donor is this process's buffer). */
bool engine_private_lends(const engine_buffer_t *donor, size_t bytes);
/* That memory grown to `bytes`, its pages kept (they may move: the new address is
 * returned), the new tail of 4 KiB pages, unpopulated. NULL, the old mapping untouched,
 * on failure. */
char *engine_private_extend(char *base, size_t mapped, size_t bytes, size_t *out);

/* ---- Windows over libmal's memory (window.c) ---- */
/* Collective over `comm` (spanning several hosts): private memory for this rank's
 * `bytes`, populated, and an MPI window created over it, when every rank reaches every
 * other rank of its host by cross-memory attach (`allowed`): those pairs never read
 * through the window, which osc ucx's shared-memory transports serve wrongly for memory
 * MPI did not allocate (docs/design.md, platform facts). A process that
 * held the structure lends its spare's memory when the part fits (`donor`, as for
 * direct memory); other memory is mapped `lazy` or populated (engine_private_map_or_borrow).
 * *used = false, nothing allocated, otherwise: the caller allocates a window. Errors are
 * agreed. */
mal_status_t engine_window_own(MPI_Comm comm, engine_buffer_t *b, int64_t bytes,
                               bool allowed, const engine_buffer_t *donor, bool lazy,
                               bool *used);
/* Collective over the communicator of such a buffer: its memory grown to `bytes` where
 * it is smaller (engine_private_extend: its pages kept), its window created anew, every
 * rank's address learnt anew. On failure the buffer holds nothing on any rank. */
mal_status_t engine_window_own_regrow(MPI_Comm comm, engine_buffer_t *b, int64_t bytes);
/* Free the window, then unmap the memory (collective, as freeing any window). */
void engine_window_own_free(engine_buffer_t *b);
/* Local: `bytes` of private memory, populated, as kept memory (pending) that a later
 * engine_direct_alloc borrows where it fits. False when the memory cannot be had. */
bool engine_direct_reserve(int64_t bytes, engine_buffer_t *kept);
/* Whether the kernel gives transparent huge pages to memory that asks (THP enabled
 * "always" or "madvise"). */
bool engine_direct_huge_pages(void);

/* ---- Debug mode's stale memory (stale.c, MAL_DEBUG) ----
 * After a reconfiguration commits, the memory the application's pointers from before it
 * lead into (a structure's old buffer, kept as its spare) is made inaccessible until the
 * next reconfiguration begins; an access there writes the line given for it and aborts
 * (a SIGSEGV/SIGBUS handler, installed at the first protection, hands every other fault
 * to the handler that was there before). */

/* Protect `b`'s memory (PROT_NONE), `text` the line a fault there writes. Only libmal's
 * own memory is protected (direct memory, a window over it, memory kept from them): false
 * for MPI's windows and SHMEM's blocks, and when the kernel refuses. */
bool engine_stale_protect(const engine_buffer_t *b, const char *text);
/* Every protected range accessible again, and forgotten: before anything uses a spare
 * (a reconfiguration's start, an asynchronous expansion's copies ahead). */
void engine_stale_release_all(void);
/* The same for the ranges within [base, base + bytes), memory about to be freed. */
void engine_stale_release(const char *base, size_t bytes);

/* ---- The OpenSHMEM runtime (shmem.c; its transfers are declared in transport.h). A
 * libmal built without OpenSHMEM answers MAL_ERR_UNSUPPORTED to every call that needs
 * it. ---- */

/* Start SHMEM for mal_init over `comm`, which must span every process of the job
 * (shmem_init is collective over all of them). Idempotent within a process. */
mal_status_t engine_shmem_start(MPI_Comm comm);
/* What this build can move data with (mal_redist_supported), and libmal-pmpi's hooks
 * (mal_pmpi_attach: it is linked; mal_pmpi_finalize_shmem: the program's MPI_Finalize). */
bool engine_redist_supported(mal_redist_t method);
void engine_pmpi_attach(void);
bool engine_pmpi_finalize_shmem(void);
/* Whether libmal started SHMEM in this process (the PE set is then fixed). */
bool engine_shmem_active(void);
/* Collective over every PE: a symmetric block of `bytes` (the same on all), or an
 * error naming the heap limit. */
mal_status_t engine_shmem_alloc(size_t bytes, char **out);
void engine_shmem_free(char *base);

/* ---- the MPI library's configuration (platform.c) ---- */
/* What this process's MPI selected (its family's side, read once) and its room. */
typedef struct {
    engine_mpi_selection_t selected; /* pml, osc, their verdicts (platform/platform.h) */
    int universe;                    /* MPI_UNIVERSE_SIZE, 0 when not given            */
    int world;                       /* size of this process's MPI_COMM_WORLD          */
    int thread_level;                /* MPI_Query_thread                               */
} engine_platform_t;
const engine_platform_t *engine_platform(void);
/* MPI_UNIVERSE_SIZE, the slots the MPI runtime has for the job (cheap: no probe); 0
 * when not given or when this process was started without the launcher. */
int engine_universe_size(void);
const char *engine_thread_level_name(int level);
/* mal_init on the initial processes: refuse (MAL_ERR_UNSUPPORTED, naming the fix) a plan
 * that spawns more processes than the launcher has room for, or that spawns while
 * structures live in windows (`direct` false) an osc component cannot span. */
mal_status_t engine_platform_check(const schedule_t *plan, bool direct);
/* Before MPI_Win_allocate over `comm` (collective: the answer is the same on every
 * member): MAL_ERR_UNSUPPORTED, naming `call` and the fix, when the window would span
 * processes of different jobs with an osc component that hangs there. */
mal_status_t engine_window_allowed(MPI_Comm comm, const char *call);
/* Whether the library was probed (only where a check needed it: it costs 0.3 s). */
bool engine_platform_probed(void);
/* Rank 0's line on the MPI library (mal_init, when summaries are on and a check probed
 * it). */
void engine_platform_announce(void);

#endif /* MAL_TRANSPORT_MEMORY_H */
