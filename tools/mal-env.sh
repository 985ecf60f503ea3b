# The project's MPI run settings, in one place: sourced by tools/malrun, which ctest,
# the benchmarks and docs/benchmarks.md use. Every value is a default: set the variable in your
# environment to override it. MAL_MPI (malrun sets it) says which MPI's settings: Open
# MPI's (the OMPI_, PMIX_ and SMA_ ones) or MPICH's (none of its own: Hydra runs as root,
# oversubscribes and binds nothing by default); the rest are both's.
#
# Why each one (see docs/design.md, platform facts):
# - Debian's openmpi-mca-params.conf disables UCX (pml = ^ucx, osc = ^ucx,pt2pt); libmal
#   needs the UCX one-sided component, and pml ucx only starts with tls/devices = any.
# - Containers run as root; spawning needs free slots (oversubscribe).
# - More processes than cores: yield when idle and do not bind, or a collective takes
#   milliseconds instead of microseconds.
# - A spawn the MPI runtime loses (docs/design.md, the spawn hang) leaves a process that
#   never finishes MPI_Init; libmal ends it with exit(0) when the job ends, which mpirun
#   accepts as a normal end only with orte_allowed_exit_without_sync.
# - PMIx keeps every job's data in its clients' hash tables (gds hash) instead of two
#   shared-memory segments per job: 40-50 kB instead of ~200 kB of memory per spawned job
#   in every process, and no lost spawn start measured with it (docs/design.md).
# - OpenSHMEM (MAL_REDIST=shmem, launched with MPIEXEC=oshrun): its finalize crashed
#   under osc rdma until libmal pinned the UCX library of its hook (src/engine/transport/shmem.c);
#   osc ucx above avoids it anyway. The symmetric heap is 256 MiB
#   unless SMA_SYMMETRIC_SIZE says otherwise: too small for the benchmark, whose all-to-one
#   pattern needs about 2.25x its --size per PE at 2 PEs (docs/guide/library.md). 8G covers
#   --size 1073741824 and more. It is reserved, not touched: only the pages libmal uses
#   become resident.
# - Symbols bound at load time (LD_BIND_NOW): once, in CI, an OpenSHMEM finalize crashed
#   in the dynamic linker's lazy lookup, called from an Open MPI progress thread while the
#   main thread was closing components (docs/design.md, platform facts). Binding at load
#   leaves that thread no lookup to do; it costs ~20 ms per launch.
# - UCX's tcp transport in 256 KiB segments (its default is 8 KiB): across the two
#   emulated hosts MPI_Get/MPI_Put of 77 MiB took 57-80 ms with the default and 12-15 ms
#   with it (rma; alltoallv and p2p unchanged at 37 ms; bench/link_settings.sh,
#   docs/benchmarks.md, "Several hosts: figures"). Only the tcp transport reads them; malrun forwards them to other
#   hosts (mpiexec passes UCX_* variables on only with -x).
: "${LD_BIND_NOW:=1}"
: "${UCX_TCP_TX_SEG_SIZE:=256k}"
: "${UCX_TCP_RX_SEG_SIZE:=256k}"
export LD_BIND_NOW UCX_TCP_TX_SEG_SIZE UCX_TCP_RX_SEG_SIZE
# Open MPI 5 (PRRTE, PMIx 5; Debian 13) renamed the launcher's settings: its major version,
# from its launcher's first line ("mpiexec.openmpi (Open MPI) 5.0.7"; 4.1 says "(OpenRTE)
# 4.1.4"), picks the names. MAL_OMPI_MAJOR overrides it.
if [ "${MAL_MPI:-openmpi}" = openmpi ]; then
    : "${MAL_OMPI_MAJOR:=$(mpiexec.openmpi --version 2>/dev/null |
        sed -n '1s/^[^)]*) \([0-9]*\)[.].*/\1/p')}"
    : "${OMPI_ALLOW_RUN_AS_ROOT:=1}"
    : "${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:=1}"
    : "${OMPI_MCA_pml:=ucx}"
    : "${OMPI_MCA_pml_ucx_tls:=any}"
    : "${OMPI_MCA_pml_ucx_devices:=any}"
    : "${OMPI_MCA_osc:=ucx}"
    : "${OMPI_MCA_mpi_yield_when_idle:=1}"
    : "${PMIX_MCA_gds:=hash}"
    : "${SMA_SYMMETRIC_SIZE:=8G}"
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_pml \
        OMPI_MCA_pml_ucx_tls OMPI_MCA_pml_ucx_devices OMPI_MCA_osc \
        OMPI_MCA_mpi_yield_when_idle PMIX_MCA_gds SMA_SYMMETRIC_SIZE
    if [ "${MAL_OMPI_MAJOR:-4}" -ge 5 ] 2>/dev/null; then
        # - PRRTE's names for oversubscription, binding and exit without finalize.
        # - coll han (5's default for some collectives) deadlocks MPI_Intercomm_create
        #   over processes of different jobs, which every expansion calls (docs/design.md,
        #   "Open MPI 5"; libmal disables it at load too, src/engine/platform/openmpi.c).
        : "${PRTE_MCA_rmaps_default_mapping_policy:=:oversubscribe}"
        : "${PRTE_MCA_hwloc_default_binding_policy:=none}"
        : "${PRTE_MCA_prte_allowed_exit_without_sync:=1}"
        : "${OMPI_MCA_coll:=^han}"
        export PRTE_MCA_rmaps_default_mapping_policy PRTE_MCA_hwloc_default_binding_policy \
            PRTE_MCA_prte_allowed_exit_without_sync OMPI_MCA_coll
    else
        : "${OMPI_MCA_rmaps_base_oversubscribe:=1}"
        : "${OMPI_MCA_hwloc_base_binding_policy:=none}"
        : "${OMPI_MCA_orte_allowed_exit_without_sync:=1}"
        export OMPI_MCA_rmaps_base_oversubscribe OMPI_MCA_hwloc_base_binding_policy \
            OMPI_MCA_orte_allowed_exit_without_sync
    fi
fi
