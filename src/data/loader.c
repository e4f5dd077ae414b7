/*
 * loader.c - the batch loader. With prefetching, one worker thread and two
 * staging slots: the caller holds one slot (the batch it is working on)
 * while the worker fills the other with the next batch, in order. All
 * shared state is guarded by one mutex; the worker decodes outside it, and
 * ct_loader_start_epoch waits for it to go idle before it rewrites the
 * order the worker reads. A decoding error travels back in the slot (status
 * and message, since ct_last_error is per thread) and is raised again on
 * the caller's thread by ct_loader_next. Decoding includes reading and
 * decoding the files of an image folder (CT_STORE_FILES), so that work runs
 * on the worker too, overlapping the caller's step; with threads > 1 a
 * batch's files are decoded by a pool of that many threads (the worker is
 * one of them), each sample into its own row with its own augmentation, so
 * the batches do not depend on the thread count.
 *
 * A file that does not decode is an error naming it, or, with the
 * dataset's bad=skip (ds->skip_bad), it is counted and left out: after the
 * batch is decoded, one pass in sample order replaces it by a sample drawn
 * from (seed, epoch, its index) where batches are whole (drop_last: the
 * training loader), or drops it from the batch (the evaluation loaders).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/pool.h"
#include "core/util.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/rng.h"

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_HELD };

typedef struct slot {
    float *x;        // (batch, C, H, W); NULL for text
    int32_t *tok;    // (T, batch) text only
    int32_t *y;      // (batch); language-model data (T, batch); NULL for regression data
    float *t;        // (batch, K) regression targets; NULL otherwise
    size_t *index;   // (batch)
    int *st;         // (batch) image folders: each sample's decoding status
    char **why;      // (batch) the message of a sample that failed, else NULL
    size_t bad;      /* files skipped in this batch (bad=skip) */
    char *bad_msg;   // (CT_ERROR_MAX) the first one's message
    size_t n, number;
    int state;
    int status;
    char *msg;       // (CT_ERROR_MAX) the worker's error message
} slot;

struct ct_loader {
    const ct_dataset *ds;
    ct_loader_options o;
    size_t per;          /* floats per sample; token ids for text */
    size_t label_per;    /* labels per sample of image data (H W per pixel) */
    size_t seq;          /* T for text, else 0 */
    size_t *perm;        // (N) the epoch's order of the whole dataset
    size_t *mine;        // (count) this rank's part of it
    size_t count, nbatches;
    uint64_t epoch;
    int started;
    slot slots[2];
    int held;            /* the slot the caller holds, or -1 */
    size_t next_fill, next_deliver;
    int failed;          /* the epoch stopped at an error: repeat it */
    int fail_status;
    char *fail_msg;      // (CT_ERROR_MAX)
    /* prefetching */
    int threaded;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int quit, busy, resetting, fill_stopped;
    ct_pool *pool;       /* threads > 1 on image folders: decodes a batch's files */
    size_t bad;          /* files skipped in the batches delivered this epoch */
    char *bad_msg;       // (CT_ERROR_MAX) the first one's message
};

void ct_loader_defaults(ct_loader_options *o)
{
    memset(o, 0, sizeof *o);
    o->batch = 64;
    o->shuffle = 1;
    o->prefetch = 1;
}

/* Text: sample i's ids (and LM targets) into column i of the (T, batch)
 * blocks; the columns after the batch's n samples are padding. */
static void gather_tokens(const ct_loader *l, size_t start, size_t n, slot *s)
{
    const ct_dataset *ds = l->ds;
    size_t T = l->seq, B = l->o.batch;
    for (size_t i = 0; i < B; i++) {
        const int32_t *src = i < n ? ds->tokens + l->mine[start + i] * T : NULL;
        for (size_t t = 0; t < T; t++)
            s->tok[t * B + i] = src ? src[t] : CT_TOKEN_PAD;
        if (ds->lm)
            for (size_t t = 0; t < T; t++)
                s->y[t * B + i] = src ? src[t + 1] : CT_TOKEN_PAD;
        else if (i < n)
            s->y[i] = ds->labels[l->mine[start + i]];
        if (i < n)
            s->index[i] = l->mine[start + i];
    }
}

/* Sample idx, augmented by its own draws, and its label into row i of s. */
static int decode_row(const ct_loader *l, size_t idx, slot *s, size_t i)
{
    const ct_dataset *ds = l->ds;
    int dy = 0, dx = 0, flip = 0;
    if (l->o.crop_pad || l->o.flip) {
        ct_rng r;
        ct_rng_seed(&r, l->o.seed, CT_RNG_AUGMENT, l->epoch, idx);
        if (l->o.crop_pad) {
            dy = (int)ct_rng_below(&r, 2 * (uint64_t)l->o.crop_pad + 1);
            dx = (int)ct_rng_below(&r, 2 * (uint64_t)l->o.crop_pad + 1);
        }
        if (l->o.flip)
            flip = (int)(ct_rng_next(&r) >> 63);
    }
    int st = ct_dataset_decode(ds, idx, l->o.crop_pad, dy, dx, flip, s->x + i * l->per);
    if (st)
        return st;
    if (ds->ntargets)
        memcpy(s->t + i * (size_t)ds->ntargets, ds->targets + idx * (size_t)ds->ntargets,
               (size_t)ds->ntargets * sizeof *s->t);
    else if (ds->pixel_labels)
        memcpy(s->y + i * l->label_per, ds->labels + idx * l->label_per, l->label_per * sizeof *s->y);
    else
        s->y[i] = ds->labels[idx];
    s->index[i] = idx;
    return CT_OK;
}

typedef struct batch_job {
    const ct_loader *l;
    slot *s;
    size_t start;
} batch_job;

/* Row i of an image folder's batch, on any thread: its status and message
 * are kept for settle_bad, since ct_last_error is per thread. */
static void decode_item(void *arg, size_t i, int thread)
{
    (void)thread;
    batch_job *j = arg;
    j->s->st[i] = decode_row(j->l, j->l->mine[j->start + i], j->s, i);
    free(j->s->why[i]);
    j->s->why[i] = j->s->st[i] ? ct_strdup(ct_last_error()) : NULL;
}

static void count_bad(slot *s, const char *why)
{
    if (!s->bad++)
        snprintf(s->bad_msg, CT_ERROR_MAX, "%s", why ? why : "out of memory");
}

/* Draws for a bad file's replacement before giving up. */
#define SUBSTITUTE_TRIES 64

/* Row i, whose file (dataset index bad_idx) did not decode, refilled by
 * samples drawn from (seed, epoch, bad_idx) until one decodes. */
static int substitute(const ct_loader *l, slot *s, size_t i, size_t bad_idx)
{
    ct_rng r;
    ct_rng_seed(&r, l->o.seed, CT_RNG_SUBSTITUTE, l->epoch, bad_idx);
    for (int k = 0; k < SUBSTITUTE_TRIES; k++) {
        int st = decode_row(l, (size_t)ct_rng_below(&r, l->ds->n), s, i);
        if (st != CT_ERR_CORRUPT && st != CT_ERR_IO && st != CT_ERR_UNSUPPORTED)
            return st;
        count_bad(s, ct_last_error());
    }
    return ct_fail(NULL, CT_ERR_CORRUPT, "%s: %d files drawn in turn to replace one that does not decode "
                   "failed too; the first: %s; HINT: check the folder (most of its files may be damaged)",
                   l->ds->name, SUBSTITUTE_TRIES, s->bad_msg);
}

/* Moves row i of the batch to row m < i. */
static void move_row(const ct_loader *l, slot *s, size_t i, size_t m)
{
    memcpy(s->x + m * l->per, s->x + i * l->per, l->per * sizeof *s->x);
    memcpy(s->y + m * l->label_per, s->y + i * l->label_per, l->label_per * sizeof *s->y);
    s->index[m] = s->index[i];
}

/* The batch's failed rows in sample order (batch positions start ..): the
 * first is the error, or with bad=skip each is counted and replaced
 * (drop_last) or dropped (*n shrinks). */
static int settle_bad(const ct_loader *l, slot *s, size_t start, size_t *n)
{
    size_t m = 0;
    for (size_t i = 0; i < *n; i++) {
        int st = s->st[i];
        if (st == CT_ERR_NO_MEMORY || (st && !l->ds->skip_bad))
            return ct_fail(NULL, st, "%s", s->why[i] ? s->why[i] : "out of memory");
        if (st) {
            count_bad(s, s->why[i]);
            if (!l->o.drop_last)
                continue;
            if ((st = substitute(l, s, i, l->mine[start + i])))
                return st;
        }
        if (m != i)
            move_row(l, s, i, m);
        m++;
    }
    if (m == 0)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: no file of a batch of %zu decodes; the first: %s; HINT: "
                       "check the folder (most of its files may be damaged)", l->ds->name, *n, s->bad_msg);
    *n = m;
    return CT_OK;
}

/* Decodes batch b of the epoch into s; runs on the worker or the caller. */
static int decode_batch(const ct_loader *l, size_t b, slot *s)
{
    const ct_dataset *ds = l->ds;
    size_t start = b * l->o.batch;
    size_t n = l->count - start < l->o.batch ? l->count - start : l->o.batch;
    if (l->o.test_fail_batch && b + 1 == l->o.test_fail_batch)
        return ct_fail(NULL, CT_ERR_INTERNAL,
                       "%s: decoding batch %zu of epoch %llu failed: injected by the loader's "
                       "test hook",
                       ds->name, b, (unsigned long long)l->epoch);
    if (l->seq) {
        gather_tokens(l, start, n, s);
        s->n = n;
        s->number = b;
        return CT_OK;
    }
    s->bad = 0;
    if (ds->storage == CT_STORE_FILES) {
        batch_job j = { l, s, start };
        if (l->pool)
            ct_pool_run(l->pool, n, decode_item, &j);
        else
            for (size_t i = 0; i < n; i++)
                decode_item(&j, i, 0);
        int st = settle_bad(l, s, start, &n);
        if (st)
            return st;
    } else {
        for (size_t i = 0; i < n; i++) {
            int st = decode_row(l, l->mine[start + i], s, i);
            if (st)
                return st;
        }
    }
    s->n = n;
    s->number = b;
    return CT_OK;
}

static void *worker(void *arg)
{
    ct_loader *l = arg;
    pthread_mutex_lock(&l->mu);
    while (!l->quit) {
        int free_slot = -1;
        if (l->started && !l->resetting && !l->fill_stopped && l->next_fill < l->nbatches)
            for (int i = 0; i < 2 && free_slot < 0; i++)
                if (l->slots[i].state == SLOT_FREE)
                    free_slot = i;
        if (free_slot < 0) {
            pthread_cond_wait(&l->cv, &l->mu);
            continue;
        }
        slot *s = &l->slots[free_slot];
        size_t b = l->next_fill++;
        s->state = SLOT_FILLING;
        l->busy = 1;
        pthread_mutex_unlock(&l->mu);
        int st = decode_batch(l, b, s);
        if (st)
            snprintf(s->msg, CT_ERROR_MAX, "%s", ct_last_error());
        pthread_mutex_lock(&l->mu);
        l->busy = 0;
        s->status = st;
        s->number = b;
        s->state = SLOT_READY;
        if (st)
            l->fill_stopped = 1;
        pthread_cond_broadcast(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

void ct_loader_free(ct_loader **pl)
{
    if (!pl || !*pl)
        return;
    ct_loader *l = *pl;
    if (l->threaded) {
        pthread_mutex_lock(&l->mu);
        l->quit = 1;
        pthread_cond_broadcast(&l->cv);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->thread, NULL);
        pthread_cond_destroy(&l->cv);
        pthread_mutex_destroy(&l->mu);
    }
    for (int i = 0; i < 2; i++) {
        free(l->slots[i].x);
        free(l->slots[i].tok);
        free(l->slots[i].y);
        free(l->slots[i].t);
        free(l->slots[i].index);
        free(l->slots[i].msg);
        free(l->slots[i].st);
        free(l->slots[i].bad_msg);
        if (l->slots[i].why)
            for (size_t k = 0; k < l->o.batch; k++)
                free(l->slots[i].why[k]);
        free(l->slots[i].why);
    }
    ct_pool_free(&l->pool);
    free(l->bad_msg);
    free(l->perm);
    free(l->mine);
    free(l->fail_msg);
    free(l);
    *pl = NULL;
}

int ct_loader_create(const ct_dataset *ds, const ct_loader_options *o, ct_loader **out)
{
    CT_VALIDATE(NULL, out);
    *out = NULL;
    CT_VALIDATE(NULL, ds && o);
    int world = o->world > 1 ? o->world : 1;
    if (o->batch < 1 || o->world < 0 || o->rank < 0 || o->rank >= world)
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "loader batch %zu, rank %d of world %d; HINT: the batch must be >= 1 and "
                       "the rank in [0, world)",
                       o->batch, o->rank, o->world);
    if (o->crop_pad < 0 || o->crop_pad > 1024 || ((o->crop_pad || o->flip) && ds->h * ds->w == 1))
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "%s: crop padding %d%s; HINT: crop and flip augment images (H, W > 1), with "
                       "a padding in [0, 1024]",
                       ds->name, o->crop_pad, o->flip ? " with flips" : "");
    size_t blk = o->shard_block > 1 ? o->shard_block : 1, round = blk * (size_t)world;
    if (blk > 1 && blk > SIZE_MAX / (size_t)world)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "loader shard block %zu is too large", blk);
    size_t usable = o->even_shards ? ds->n - ds->n % round : ds->n;
    /* whole rounds give every rank blk positions; the rest go to the first ranks in turn */
    size_t rest = usable % round, before = (size_t)o->rank * blk;
    size_t count = usable / round * blk + (rest > before ? (rest - before < blk ? rest - before : blk) : 0);
    if (count == 0)
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "%s: rank %d of %d gets no samples of %zu; HINT: use fewer ranks", ds->name,
                       o->rank, world, ds->n);
    size_t nbatches = count / o->batch + (!o->drop_last && count % o->batch ? 1 : 0);
    if (nbatches == 0)
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "%s: %zu samples per epoch make no full batch of %zu; HINT: use a smaller "
                       "batch or keep the last partial batch",
                       ds->name, count, o->batch);
    size_t per = ct_dataset_sample_size(ds);
    if (o->batch > SIZE_MAX / sizeof(float) / per)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "loader batch %zu is too large", o->batch);
    if (ds->pixel_labels && (o->crop_pad || o->flip))
        return ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: a label per pixel with crops or mirrors: the labels would not "
                       "move with the pixels; HINT: train without augmentation (--no-augment)", ds->name);

    ct_loader *l = calloc(1, sizeof *l);
    if (!l)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    l->ds = ds;
    l->o = *o;
    l->o.world = world;
    l->per = per;
    l->label_per = (size_t)ct_dataset_labels_per_sample(ds);
    l->seq = ds->storage == CT_STORE_TOKENS ? (size_t)ds->seq : 0;
    l->count = count;
    l->nbatches = nbatches;
    l->held = -1;
    l->perm = malloc(ds->n * sizeof *l->perm);
    l->mine = malloc(count * sizeof *l->mine);
    l->fail_msg = malloc(CT_ERROR_MAX);
    l->bad_msg = malloc(CT_ERROR_MAX);
    int ok = l->perm && l->mine && l->fail_msg && l->bad_msg;
    if (ok)
        l->bad_msg[0] = 0;
    int nslots = o->prefetch ? 2 : 1;
    for (int i = 0; i < nslots && ok; i++) {
        slot *s = &l->slots[i];
        if (l->seq) {
            s->tok = malloc(o->batch * per * sizeof *s->tok);
            s->y = malloc(o->batch * (ds->lm ? per : 1) * sizeof *s->y);
        } else {
            s->x = malloc(o->batch * per * sizeof *s->x);
            if (ds->ntargets)
                s->t = malloc(o->batch * (size_t)ds->ntargets * sizeof *s->t);
            else
                s->y = malloc(o->batch * (size_t)ct_dataset_labels_per_sample(ds) * sizeof *s->y);
        }
        s->index = malloc(o->batch * sizeof *s->index);
        s->msg = malloc(CT_ERROR_MAX);
        ok = (s->x || s->tok) && (s->y || s->t) && s->index && s->msg;
        if (ok && ds->storage == CT_STORE_FILES) {
            s->st = calloc(o->batch, sizeof *s->st);
            s->why = calloc(o->batch, sizeof *s->why);
            s->bad_msg = malloc(CT_ERROR_MAX);
            ok = s->st && s->why && s->bad_msg;
        }
        s->state = SLOT_FREE;
    }
    if (!ok) {
        ct_loader_free(&l);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for batches of %zu x %zu floats",
                       o->batch, per);
    }
    if (o->threads > 1 && ds->storage == CT_STORE_FILES) {
        int e = ct_pool_create(o->threads, &l->pool);
        if (e) {
            ct_loader_free(&l);
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "cannot start %d decoding threads: %s; HINT: use fewer "
                           "(--loader-threads)", o->threads, strerror(e));
        }
    }
    if (o->prefetch) {
        int e = pthread_mutex_init(&l->mu, NULL);
        if (!e && (e = pthread_cond_init(&l->cv, NULL)) != 0)
            pthread_mutex_destroy(&l->mu);
        if (!e && (e = pthread_create(&l->thread, NULL, worker, l)) != 0) {
            pthread_cond_destroy(&l->cv);
            pthread_mutex_destroy(&l->mu);
        }
        if (e) {
            ct_loader_free(&l);
            return ct_fail(NULL, CT_ERR_NO_MEMORY,
                           "cannot start the prefetch thread: %s; HINT: load without prefetching",
                           strerror(e));
        }
        l->threaded = 1;
    }
    *out = l;
    return CT_OK;
}

/* The epoch's order and this rank's part of it. */
static void make_order(ct_loader *l)
{
    size_t n = l->ds->n, world = (size_t)l->o.world;
    for (size_t i = 0; i < n; i++)
        l->perm[i] = i;
    if (l->o.shuffle)
        ct_shuffle(l->perm, n, l->o.seed, l->epoch);
    size_t blk = l->o.shard_block > 1 ? l->o.shard_block : 1;
    for (size_t k = 0; k < l->count; k++)
        l->mine[k] = l->perm[((k / blk) * world + (size_t)l->o.rank) * blk + k % blk];
}

int ct_loader_start_epoch(ct_loader *l, uint64_t epoch)
{
    CT_VALIDATE(NULL, l);
    if (l->threaded) {
        pthread_mutex_lock(&l->mu);
        l->resetting = 1;
        while (l->busy)
            pthread_cond_wait(&l->cv, &l->mu);
    }
    for (int i = 0; i < 2; i++)
        l->slots[i].state = SLOT_FREE;
    l->held = -1;
    l->epoch = epoch;
    make_order(l);
    l->next_fill = l->next_deliver = 0;
    l->failed = l->fill_stopped = 0;
    l->bad = 0;
    l->bad_msg[0] = 0;
    l->started = 1;
    if (l->threaded) {
        l->resetting = 0;
        pthread_cond_broadcast(&l->cv);
        pthread_mutex_unlock(&l->mu);
    }
    return CT_OK;
}

/* The delivered batch's skipped files, added to the epoch's. */
static void take_bad(ct_loader *l, const slot *s)
{
    if (s->bad && !l->bad)
        snprintf(l->bad_msg, CT_ERROR_MAX, "%s", s->bad_msg);
    l->bad += s->bad;
}

static void give(const ct_loader *l, const slot *s, ct_batch *b)
{
    b->n = s->n;
    b->number = s->number;
    b->x = s->x;
    b->y = s->y;
    b->label_per = l->seq ? 1 : l->label_per;
    b->t = s->t;
    b->ntargets = s->t ? (size_t)l->ds->ntargets : 0;
    b->index = s->index;
    b->tokens = s->tok;
    b->seq = s->tok ? l->seq : 0;
    b->stride = s->tok ? l->o.batch : 0;
}

int ct_loader_next(ct_loader *l, ct_batch *b)
{
    CT_VALIDATE(NULL, l && b);
    memset(b, 0, sizeof *b);
    if (!l->started)
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "%s: no epoch has begun; HINT: call ct_loader_start_epoch first", l->ds->name);
    if (l->failed)
        return ct_fail(NULL, l->fail_status, "%s", l->fail_msg);
    if (!l->threaded) {
        b->number = l->next_deliver;
        if (l->next_deliver >= l->nbatches)
            return CT_OK;
        int st = decode_batch(l, l->next_deliver, &l->slots[0]);
        if (st) {
            l->failed = 1;
            l->fail_status = st;
            snprintf(l->fail_msg, CT_ERROR_MAX, "%s", ct_last_error());
            return st;
        }
        l->next_deliver++;
        take_bad(l, &l->slots[0]);
        give(l, &l->slots[0], b);
        return CT_OK;
    }
    pthread_mutex_lock(&l->mu);
    if (l->held >= 0) {
        l->slots[l->held].state = SLOT_FREE;
        l->held = -1;
        pthread_cond_broadcast(&l->cv);
    }
    if (l->next_deliver >= l->nbatches) {
        b->number = l->nbatches;
        pthread_mutex_unlock(&l->mu);
        return CT_OK;
    }
    int got = -1;
    for (;;) {
        for (int i = 0; i < 2 && got < 0; i++)
            if (l->slots[i].state == SLOT_READY && l->slots[i].number == l->next_deliver)
                got = i;
        if (got >= 0)
            break;
        pthread_cond_wait(&l->cv, &l->mu);
    }
    slot *s = &l->slots[got];
    s->state = SLOT_HELD;
    l->held = got;
    l->next_deliver++;
    int st = s->status;
    if (st) {
        l->failed = 1;
        l->fail_status = st;
        snprintf(l->fail_msg, CT_ERROR_MAX, "%s", s->msg);
    }
    pthread_mutex_unlock(&l->mu);
    if (st)
        return ct_fail(NULL, st, "%s", l->fail_msg);
    take_bad(l, s);
    give(l, s, b);
    return CT_OK;
}

size_t ct_loader_samples(const ct_loader *l)
{
    return l ? l->count : 0;
}

size_t ct_loader_batches(const ct_loader *l)
{
    return l ? l->nbatches : 0;
}

const size_t *ct_loader_order(const ct_loader *l)
{
    return l && l->started ? l->mine : NULL;
}

size_t ct_loader_skipped(const ct_loader *l, const char **first)
{
    if (first)
        *first = l && l->bad ? l->bad_msg : "";
    return l ? l->bad : 0;
}
