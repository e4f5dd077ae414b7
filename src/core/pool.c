/*
 * pool.c - the thread pool of pool.h: workers wait for a new generation of
 * work, take items from an atomic counter, and the last one to finish wakes
 * the caller.
 */
#include "core/pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct ct_pool {
    int threads;            /* workers + the caller */
    pthread_t *tid;         /* threads - 1 workers */
    int started;            /* workers actually running */
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    unsigned long generation;
    int quit;
    int busy;               /* workers still inside the current run */
    /* the current run */
    ct_pool_fn fn;
    void *arg;
    size_t count;
    atomic_size_t next;
};

static void drain(ct_pool *p, int thread)
{
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (i >= p->count)
            break;
        p->fn(p->arg, i, thread);
    }
}

typedef struct worker_arg {
    ct_pool *pool;
    int thread;
} worker_arg;

static void *worker(void *v)
{
    worker_arg *wa = v;
    ct_pool *p = wa->pool;
    int thread = wa->thread;
    free(wa);
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->generation == seen)
            pthread_cond_wait(&p->wake, &p->mu);
        if (p->quit)
            break;
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        drain(p, thread);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int ct_pool_create(int threads, ct_pool **out)
{
    *out = NULL;
    if (threads < 1)
        threads = 1;
    ct_pool *p = calloc(1, sizeof *p);
    if (!p)
        return ENOMEM;
    p->threads = threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    int err = 0;
    if (threads > 1) {
        p->tid = calloc((size_t)threads - 1, sizeof *p->tid);
        if (!p->tid)
            err = ENOMEM;
        for (int t = 1; t < threads && !err; t++) {
            worker_arg *wa = malloc(sizeof *wa);
            if (!wa) {
                err = ENOMEM;
                break;
            }
            wa->pool = p;
            wa->thread = t;
            err = pthread_create(&p->tid[t - 1], NULL, worker, wa);
            if (err) {
                free(wa);
                break;
            }
            p->started++;
        }
    }
    if (err) {
        ct_pool_free(&p);
        return err;
    }
    *out = p;
    return 0;
}

void ct_pool_free(ct_pool **pool)
{
    ct_pool *p = *pool;
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int t = 0; t < p->started; t++)
        pthread_join(p->tid[t], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->tid);
    free(p);
    *pool = NULL;
}

int ct_pool_threads(const ct_pool *pool)
{
    return pool ? pool->threads : 1;
}

void ct_pool_run(ct_pool *p, size_t count, ct_pool_fn fn, void *arg)
{
    if (!count)
        return;
    if (p->started == 0 || count == 1) {
        for (size_t i = 0; i < count; i++)
            fn(arg, i, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->count = count;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->busy = p->started;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    drain(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->busy)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
