/* What Open MPI selected for this process, read through MPI_T (docs/design.md, "Plain
 * mpiexec"): which pml and osc components, and whether the launcher lets spawns
 * oversubscribe. MPI_T shows the requested component lists (cvars "pml", "osc"), not the
 * selected ones; what was selected shows in which components still have their version
 * variables registered ("pml_ob1_major_version"): Open MPI deregisters them when it
 * closes a component it did not select (pml) or that cannot run (osc keeps every usable
 * one: it chooses per window). MPI_T_init_thread costs 0.3 s here (it registers every
 * framework's parameters), so the probe runs only where a check needs it. Open MPI 5
 * keeps these names (its pml and osc frameworks are Open MPI's, not PRRTE's). */
#include "openmpi_impl.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Append `name` to the comma-separated list `list` of `size` bytes. */
static void list_add(char *list, size_t size, const char *name)
{
    size_t used = strlen(list);
    snprintf(list + used, size - used, "%s%s", used ? "," : "", name);
}

/* "<framework>_<component>_major_version" -> component, for pml and osc. */
static void note_component(engine_mpi_selection_t *sel, const char *var)
{
    static const char suffix[] = "_major_version";
    size_t n = strlen(var), s = sizeof suffix - 1;
    if (n <= s + 4 || strcmp(var + n - s, suffix) != 0)
        return;
    char name[64];
    size_t len = n - s - 4;
    if (len == 0 || len >= sizeof name)
        return;
    memcpy(name, var + 4, len);
    name[len] = '\0';
    if (strchr(name, '_') != NULL) /* pml_base_..., not a component */
        return;
    if (strncmp(var, "pml_", 4) == 0)
        list_add(sel->pml, sizeof sel->pml, name);
    else if (strncmp(var, "osc_", 4) == 0)
        list_add(sel->osc, sizeof sel->osc, name);
}

/* Value of a control variable bound to no object, as text (strings) or a number. */
static void read_cvar(int index, MPI_Datatype type, char *text, size_t size, long long *number)
{
    MPI_T_cvar_handle h;
    int count = 0;
    *number = 0;
    text[0] = '\0';
    if (MPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS)
        return;
    if (type == MPI_CHAR && count > 0 && (size_t)count <= size) {
        MPI_T_cvar_read(h, text);
    } else if (type != MPI_CHAR && count == 1) {
        unsigned char raw[16] = {0}; /* booleans, ints and longs: nonzero is what counts */
        int bytes = 0;
        MPI_Type_size(type, &bytes);
        if (bytes > 0 && (size_t)bytes <= sizeof raw) {
            MPI_T_cvar_read(h, raw);
            for (int i = 0; i < bytes; i++)
                *number |= raw[i];
        }
    }
    MPI_T_cvar_handle_free(&h);
}

/* Whether the launcher lets spawned processes oversubscribe the slots: --oversubscribe
 * (rmaps_base_oversubscribe) or --map-by ...:OVERSUBSCRIBE, from the environment or
 * Open MPI's parameter files, which the application reads as mpiexec does. */
static void note_launch(engine_mpi_selection_t *sel, const char *name, MPI_Datatype type,
                        int index)
{
    char text[256];
    long long number;
    if (strcmp(name, "rmaps_base_oversubscribe") == 0) {
        read_cvar(index, type, text, sizeof text, &number);
        sel->oversubscribe |= number != 0;
    } else if (strcmp(name, "rmaps_base_mapping_policy") == 0) {
        read_cvar(index, type, text, sizeof text, &number);
        const char *mod = strchr(text, ':');
        for (; mod != NULL; mod = strchr(mod + 1, ':'))
            if (strncasecmp(mod + 1, "oversubscribe", 13) == 0)
                sel->oversubscribe = true;
    }
}

static void read_control_variables(engine_mpi_selection_t *sel)
{
    int provided = 0, count = 0, level = MPI_THREAD_SINGLE;
    /* Open MPI 4.1 sets the library's thread level to what MPI_T_init_thread asks
     * (measured: MPI_Query_thread said single after it, in a program initialised with
     * MPI_THREAD_MULTIPLE, and MPI's locks go with it): ask for the level in force. */
    MPI_Query_thread(&level);
    if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS)
        return;
    MPI_T_cvar_get_num(&count);
    for (int i = 0; i < count; i++) {
        char name[256], desc[8];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        /* Variables of closed components answer with an error: skipped. */
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, desc,
                                &desc_len, &bind, &scope) != MPI_SUCCESS ||
            bind != MPI_T_BIND_NO_OBJECT)
            continue;
        note_component(sel, name);
        note_launch(sel, name, type, i);
    }
    MPI_T_finalize();
}

/* Windows on communicators spanning jobs: every osc component this process may choose
 * must decide alike on every rank (ucx and pt2pt do), and one must accept: ucx, or
 * pt2pt below MPI_THREAD_MULTIPLE (which it refuses on every rank, measured). */
static bool windows_span_jobs(const engine_mpi_selection_t *sel, int thread_level)
{
    char list[sizeof sel->osc];
    memcpy(list, sel->osc, sizeof list);
    char *save = NULL;
    bool accepts = false;
    for (char *c = strtok_r(list, ",", &save); c != NULL; c = strtok_r(NULL, ",", &save)) {
        bool pt2pt = strcmp(c, "pt2pt") == 0;
        if (strcmp(c, "ucx") != 0 && !pt2pt)
            return false;
        accepts |= !pt2pt || thread_level < MPI_THREAD_MULTIPLE;
    }
    return accepts;
}

void engine_open_mpi_probe(engine_mpi_selection_t *out, int thread_level)
{
    read_control_variables(out);
    /* Judged only where Open MPI's components were recognised. */
    out->known = out->osc[0] != '\0';
    out->windows_span_jobs = out->known && windows_span_jobs(out, thread_level);
}
