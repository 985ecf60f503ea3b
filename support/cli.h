/* cli: what every program of the project does with its command line before anything
 * else. */
#ifndef MAL_SUPPORT_CLI_H
#define MAL_SUPPORT_CLI_H

#include <stdbool.h>

/* Whether --help or -h is among the arguments: the program then prints its usage on
 * stdout and exits with status 0, before MPI starts (no launcher needed). */
bool cli_asks_help(int argc, char **argv);

#endif
