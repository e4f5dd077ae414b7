/*
 * pool.h - a small thread pool for host-side work on CPU devices (each
 * context's is made by src/host/host_work.c, for the direct convolution and
 * the host max pool).
 *
 * ct_pool_run hands items 0..count-1 to the workers and the calling thread
 * from a shared counter, so a core slowed by another process does not hold
 * the others up, and returns when every item is done. Idle workers sleep on
 * a condition variable: they never spin, so they do not steal cycles from
 * the BLAS or OpenCL runtime threads that share the cores.
 */
#ifndef CT_CORE_POOL_H
#define CT_CORE_POOL_H

#include <stddef.h>

typedef struct ct_pool ct_pool;

/* fn(arg, item, thread): thread is in [0, ct_pool_threads()), so per-thread
 * scratch can be indexed by it; the caller runs as thread 0. */
typedef void (*ct_pool_fn)(void *arg, size_t item, int thread);

/* threads >= 1 (1: everything runs on the caller). Returns 0, or an errno
 * value when a thread or the memory could not be had. */
int ct_pool_create(int threads, ct_pool **out);
void ct_pool_free(ct_pool **pool);
int ct_pool_threads(const ct_pool *pool);

/* Runs fn over count items; not reentrant (one run at a time per pool). */
void ct_pool_run(ct_pool *pool, size_t count, ct_pool_fn fn, void *arg);

#endif /* CT_CORE_POOL_H */
