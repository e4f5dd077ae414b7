/*
 * blasctl.c - OpenBLAS's threads (blasctl.h), through symbols looked up in
 * the process: openblas_set_num_threads, openblas_get_num_threads,
 * blas_thread_shutdown_ (exported by OpenBLAS 0.3's pthread builds) and
 * openblas_get_corename.
 */
#include "core/blasctl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static void (*set_threads)(int);
static int (*get_threads)(void);
static int (*shutdown_threads)(void);
static char *(*corename)(void);
static pthread_once_t lookup_once = PTHREAD_ONCE_INIT, quiet_once = PTHREAD_ONCE_INIT;

static void lookup(void)
{
    void *self = dlopen(NULL, RTLD_LAZY);
    if (!self)
        return;
    void (*set)(int) = NULL;
    int (*get)(void) = NULL;
    int (*stop)(void) = NULL;
    *(void **)(&set) = dlsym(self, "openblas_set_num_threads");
    *(void **)(&get) = dlsym(self, "openblas_get_num_threads");
    *(void **)(&stop) = dlsym(self, "blas_thread_shutdown_");
    if (set && get)
        set_threads = set, get_threads = get, shutdown_threads = stop;
    *(void **)(&corename) = dlsym(self, "openblas_get_corename");
    dlclose(self);
}

int ct_blas_is_openblas(void)
{
    pthread_once(&lookup_once, lookup);
    return set_threads != NULL;
}

/* Data-parallel replicas call the BLAS from a thread each at once: the
 * thread count is global, so the first of the overlapping holders sets it
 * to 1 and the last one gives back what the first found. (Each restoring
 * its own would give one replica's later calls OpenBLAS's threaded path
 * while another replica still held it at one: other bits from run to run.) */
static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;
static int holders, held_prev;

int ct_blas_single(void)
{
    if (!ct_blas_is_openblas())
        return 0;
    pthread_mutex_lock(&hold_mu);
    if (holders++ == 0) {
        held_prev = get_threads();
        if (held_prev != 1)
            set_threads(1);
    }
    int prev = held_prev > 0 ? held_prev : 1;
    pthread_mutex_unlock(&hold_mu);
    return prev;
}

void ct_blas_restore(int prev)
{
    if (prev < 1)
        return;
    pthread_mutex_lock(&hold_mu);
    if (holders > 0 && --holders == 0 && held_prev > 1)
        set_threads(held_prev);
    pthread_mutex_unlock(&hold_mu);
}

static void quiet(void)
{
    if (ct_blas_is_openblas() && shutdown_threads)
        shutdown_threads();
}

void ct_blas_quiet(void)
{
    pthread_once(&quiet_once, quiet);
}

const char *ct_blas_core_name(void)
{
    pthread_once(&lookup_once, lookup);
    return corename ? corename() : NULL;
}
