/* The resource view's data: which hosts a malleable job may use, of which processor
 * class, how fast and at what price (the CPPC paper's availability file, with Flex-MPI's
 * classes). Pure: text in, tables out, no MPI. Private to libmal (never installed).
 *
 * File format, one host per line, fields separated by spaces or tabs:
 *
 *     # host    cores  class  gflops_per_core  price_per_core_hour
 *     node01    4      C1     1.90             0.095
 *     big01     24     C8     4.62             0.462
 *
 * '#' starts a comment (to the end of the line); blank lines are ignored. host: 1..255
 * characters, no spaces, unique in the file; cores: integer 1..1000000; class: 1..31
 * characters; gflops_per_core: finite, > 0; price_per_core_hour: finite, >= 0. A class
 * is declared by its first host: later hosts of the same class must repeat the same
 * GFLOPS and price. Classes are numbered in order of first appearance, hosts in file
 * order. At least one host. */
#ifndef MAL_AVAIL_H
#define MAL_AVAIL_H

#include "mal_status.h"

#include <stddef.h>
#include <stdio.h>

#define AVAIL_HOST_MAX 256
#define AVAIL_CLASS_MAX 32

typedef struct {
    char name[AVAIL_CLASS_MAX];
    double gflops;          /* nominal computing power of one core               */
    double price;           /* $ per core and hour                               */
} avail_class_t;

typedef struct {
    char name[AVAIL_HOST_MAX];
    int cores;
    int cls;                /* index into avail_t.classes                         */
} avail_host_t;

typedef struct {
    avail_class_t *classes;
    int nclasses;
    avail_host_t *hosts;
    int nhosts;
} avail_t;

/* Read an availability file. Returns MAL_OK and fills *out (free with avail_free); on
 * error returns MAL_ERR_ARG, leaves *out as {0} and writes to err (errlen bytes, always
 * terminated when errlen > 0) a message naming the file and line, e.g.
 *   "FILE:3: expected 5 fields (host cores class gflops price), found 4"
 *   "FILE:3: cores 'x' is not an integer in 1..1000000"
 *   "FILE:3: gflops '0' must be a finite number > 0"
 *   "FILE:3: price '-1' must be a finite number >= 0"
 *   "FILE:7: host 'node01' already listed on line 3"
 *   "FILE:9: class 'C1' has gflops 1.9 and price 0.095 on line 2, here 2 and 0.095"
 *   "FILE:4: host name longer than 255 characters"
 *   "FILE: no host listed", "FILE: cannot open: No such file or directory"
 * and MAL_ERR_NOMEM ("FILE: out of memory") when out of memory. avail_parse does the
 * same for an open stream (name is used in messages only). Numbers follow the "C"
 * locale's format. */
mal_status_t avail_read(const char *path, avail_t *out, char *err, size_t errlen);
mal_status_t avail_parse(FILE *in, const char *name, avail_t *out, char *err, size_t errlen);

/* A view of one host: `host` with `cores` cores of class `cls` ("local" when NULL),
 * `gflops` per core (> 0) and `price` per core-hour: the default when no file is given.
 * Returns MAL_OK, MAL_ERR_ARG on bad arguments (err says which), MAL_ERR_NOMEM when out
 * of memory. */
mal_status_t avail_single(const char *host, int cores, const char *cls, double gflops,
                          double price, avail_t *out, char *err, size_t errlen);

/* Index of the host named `name`, or -1. */
int avail_find_host(const avail_t *a, const char *name);

/* Total cores of class `cls` over all hosts. */
int avail_class_cores(const avail_t *a, int cls);

/* Release what avail_read/avail_single allocated; safe on {0} and twice. */
void avail_free(avail_t *a);

#endif /* MAL_AVAIL_H */
