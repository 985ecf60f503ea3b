/* mal_soak's per-process leak figures (soak_probe.h). The MPI calls below create or free
 * windows, communicators, info objects, datatypes and groups; each forwards to its
 * PMPI_ entry point and counts what it made or released. Only successful calls that
 * return a real handle count (MPI_Comm_split with MPI_UNDEFINED returns none). */
#include "soak_probe.h"

#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static long live_windows, live_comms, live_infos, live_types, live_groups;
static int parent_counted; /* MPI_Comm_get_parent hands out the same handle each call */

/* Forward `call`; on success count one more `counter` when `made` holds. */
#define COUNT_MADE(counter, made, call)         \
    do {                                        \
        int rc_ = call;                         \
        if (rc_ == MPI_SUCCESS && (made))       \
            (counter)++;                        \
        return rc_;                             \
    } while (0)

/* Forward `call` that frees *handle; count one less when it held an object. */
#define COUNT_FREED(counter, handle, null, call) \
    do {                                         \
        int held_ = *(handle) != (null);         \
        int rc_ = call;                          \
        if (rc_ == MPI_SUCCESS && held_)         \
            (counter)--;                         \
        return rc_;                              \
    } while (0)

/* ---- windows ---- */

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                     void *baseptr, MPI_Win *win)
{
    COUNT_MADE(live_windows, *win != MPI_WIN_NULL,
               PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win));
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    COUNT_MADE(live_windows, *win != MPI_WIN_NULL,
               PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win));
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    COUNT_MADE(live_windows, *win != MPI_WIN_NULL,
               PMPI_Win_create(base, size, disp_unit, info, comm, win));
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    COUNT_MADE(live_windows, *win != MPI_WIN_NULL, PMPI_Win_create_dynamic(info, comm, win));
}

int MPI_Win_free(MPI_Win *win)
{
    COUNT_FREED(live_windows, win, MPI_WIN_NULL, PMPI_Win_free(win));
}

/* ---- communicators ---- */

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    COUNT_MADE(live_comms, *newcomm != MPI_COMM_NULL, PMPI_Comm_dup(comm, newcomm));
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    COUNT_MADE(live_comms, *newcomm != MPI_COMM_NULL,
               PMPI_Comm_dup_with_info(comm, info, newcomm));
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    COUNT_MADE(live_comms, 1, PMPI_Comm_idup(comm, newcomm, request));
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    COUNT_MADE(live_comms, *newcomm != MPI_COMM_NULL,
               PMPI_Comm_split(comm, color, key, newcomm));
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    COUNT_MADE(live_comms, *newcomm != MPI_COMM_NULL,
               PMPI_Comm_split_type(comm, split_type, key, info, newcomm));
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    COUNT_MADE(live_comms, *newcomm != MPI_COMM_NULL, PMPI_Comm_create(comm, group, newcomm));
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    COUNT_MADE(live_comms, *newcomm != MPI_COMM_NULL,
               PMPI_Comm_create_group(comm, group, tag, newcomm));
}

int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                   MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    COUNT_MADE(live_comms, *intercomm != MPI_COMM_NULL,
               PMPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm,
                               array_of_errcodes));
}

int MPI_Comm_spawn_multiple(int count, char *commands[], char **argvs[], const int maxprocs[],
                            const MPI_Info infos[], int root, MPI_Comm comm,
                            MPI_Comm *intercomm, int array_of_errcodes[])
{
    COUNT_MADE(live_comms, *intercomm != MPI_COMM_NULL,
               PMPI_Comm_spawn_multiple(count, commands, argvs, maxprocs, infos, root, comm,
                                        intercomm, array_of_errcodes));
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm bridge_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    COUNT_MADE(live_comms, *newintercomm != MPI_COMM_NULL,
               PMPI_Intercomm_create(local_comm, local_leader, bridge_comm, remote_leader,
                                     tag, newintercomm));
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    COUNT_MADE(live_comms, *newintracomm != MPI_COMM_NULL,
               PMPI_Intercomm_merge(intercomm, high, newintracomm));
}

int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *newcomm)
{
    COUNT_MADE(live_comms, *newcomm != MPI_COMM_NULL,
               PMPI_Comm_accept(port_name, info, root, comm, newcomm));
}

int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    COUNT_MADE(live_comms, *newcomm != MPI_COMM_NULL,
               PMPI_Comm_connect(port_name, info, root, comm, newcomm));
}

int MPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    COUNT_MADE(live_comms, *intercomm != MPI_COMM_NULL, PMPI_Comm_join(fd, intercomm));
}

/* The parent intercommunicator was made by MPI_Init; it counts once it is handed out,
 * since the process may disconnect it. */
int MPI_Comm_get_parent(MPI_Comm *parent)
{
    int rc = PMPI_Comm_get_parent(parent);
    if (rc == MPI_SUCCESS && *parent != MPI_COMM_NULL && !parent_counted) {
        parent_counted = 1;
        live_comms++;
    }
    return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
    COUNT_FREED(live_comms, comm, MPI_COMM_NULL, PMPI_Comm_free(comm));
}

int MPI_Comm_disconnect(MPI_Comm *comm)
{
    COUNT_FREED(live_comms, comm, MPI_COMM_NULL, PMPI_Comm_disconnect(comm));
}

/* ---- info objects ---- */

int MPI_Info_create(MPI_Info *info)
{
    COUNT_MADE(live_infos, *info != MPI_INFO_NULL, PMPI_Info_create(info));
}

int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    COUNT_MADE(live_infos, *newinfo != MPI_INFO_NULL, PMPI_Info_dup(info, newinfo));
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    COUNT_MADE(live_infos, *info_used != MPI_INFO_NULL, PMPI_Comm_get_info(comm, info_used));
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    COUNT_MADE(live_infos, *info_used != MPI_INFO_NULL, PMPI_Win_get_info(win, info_used));
}

int MPI_Info_free(MPI_Info *info)
{
    COUNT_FREED(live_infos, info, MPI_INFO_NULL, PMPI_Info_free(info));
}

/* ---- datatypes (the constructors libmal and the baselines use, and their kin) ---- */

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNT_MADE(live_types, 1, PMPI_Type_contiguous(count, oldtype, newtype));
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    COUNT_MADE(live_types, 1, PMPI_Type_vector(count, blocklength, stride, oldtype, newtype));
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    COUNT_MADE(live_types, 1,
               PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype));
}

int MPI_Type_indexed(int count, const int blocklengths[], const int displacements[],
                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    COUNT_MADE(live_types, 1,
               PMPI_Type_indexed(count, blocklengths, displacements, oldtype, newtype));
}

int MPI_Type_create_hindexed(int count, const int blocklengths[],
                             const MPI_Aint displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    COUNT_MADE(live_types, 1,
               PMPI_Type_create_hindexed(count, blocklengths, displacements, oldtype,
                                         newtype));
}

int MPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displacements[],
                           const MPI_Datatype types[], MPI_Datatype *newtype)
{
    COUNT_MADE(live_types, 1,
               PMPI_Type_create_struct(count, blocklengths, displacements, types, newtype));
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype)
{
    COUNT_MADE(live_types, 1, PMPI_Type_create_resized(oldtype, lb, extent, newtype));
}

int MPI_Type_dup(MPI_Datatype type, MPI_Datatype *newtype)
{
    COUNT_MADE(live_types, 1, PMPI_Type_dup(type, newtype));
}

int MPI_Type_free(MPI_Datatype *type)
{
    COUNT_FREED(live_types, type, MPI_DATATYPE_NULL, PMPI_Type_free(type));
}

/* ---- groups ---- */

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    COUNT_MADE(live_groups, *group != MPI_GROUP_NULL, PMPI_Comm_group(comm, group));
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    COUNT_MADE(live_groups, *group != MPI_GROUP_NULL, PMPI_Comm_remote_group(comm, group));
}

int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    COUNT_MADE(live_groups, *group != MPI_GROUP_NULL, PMPI_Win_get_group(win, group));
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    COUNT_MADE(live_groups, *newgroup != MPI_GROUP_NULL,
               PMPI_Group_incl(group, n, ranks, newgroup));
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    COUNT_MADE(live_groups, *newgroup != MPI_GROUP_NULL,
               PMPI_Group_excl(group, n, ranks, newgroup));
}

int MPI_Group_free(MPI_Group *group)
{
    COUNT_FREED(live_groups, group, MPI_GROUP_NULL, PMPI_Group_free(group));
}

/* ---- the figures ---- */

static long resident_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0 && sscanf(line + 6, "%ld", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb;
}

static long open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    long n = 0;
    if (d == NULL)
        return -1;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the descriptor of the listing itself */
}

void soak_probe_read(soak_probe_t *p)
{
    *p = (soak_probe_t){.rss_kb = resident_kb(), .fds = open_descriptors(),
                        .windows = live_windows, .comms = live_comms, .infos = live_infos,
                        .types = live_types, .groups = live_groups};
}
