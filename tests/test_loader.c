/*
 * test_loader - the shuffle (pinned orders, seeds and epochs), the
 * unbiased draw, and the prefetching loader against a plain pass: batches,
 * shards and augmentation, on synthetic data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltrain/cltrain.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/rng.h"
#include "tcheck.h"
#include "tdataset.h"

/* ---- shuffle, loader, shards, augmentation ---- */

static void test_rng(void)
{
    uint64_t st = 0;
    /* splitmix64's published first output from state 0 */
    CHECK(ct_splitmix64(&st) == 0xe220a8397b1dcdafull, "splitmix64(0)");
    enum { N = 1000 };
    size_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    char seen[N];
    for (size_t i = 0; i < N; i++)
        a[i] = b[i] = i;
    ct_shuffle(a, N, 42, 0);
    memset(seen, 0, sizeof seen);
    int perm = 1, moved = 0;
    for (size_t i = 0; i < N; i++) {
        perm &= a[i] < N && !seen[a[i]];
        if (a[i] < N)
            seen[a[i]] = 1;
        moved += a[i] != i;
    }
    CHECK(perm, "the shuffle is a permutation");
    CHECK(moved > N * 9 / 10, "the shuffle moved only %d of %d", moved, N);
    ct_shuffle(b, N, 42, 0);
    CHECK(!memcmp(a, b, N * sizeof *a), "same seed and epoch: same order");
    /* pinned, so an order never changes across platforms or versions */
    CHECK(a[0] == 759 && a[1] == 509 && a[999] == 269, "shuffle(1000, 42, 0) starts %zu %zu ends %zu",
          a[0], a[1], a[999]);
    for (size_t i = 0; i < N; i++)
        b[i] = i;
    ct_shuffle(b, N, 42, 1);
    CHECK(memcmp(a, b, N * sizeof *a) != 0, "another epoch: another order");
    for (size_t i = 0; i < N; i++)
        b[i] = i;
    ct_shuffle(b, N, 43, 0);
    CHECK(memcmp(a, b, N * sizeof *a) != 0, "another seed: another order");
    free(a);
    free(b);
    /* ct_rng_below is unbiased enough to see: 60000 draws of 6 */
    ct_rng r;
    ct_rng_seed(&r, 1, 2, 3, 4);
    int count[6] = { 0 };
    for (int i = 0; i < 60000; i++)
        count[ct_rng_below(&r, 6)]++;
    for (int k = 0; k < 6; k++)
        /* 10000 +- 5 standard deviations (91) */
        CHECK(abs(count[k] - 10000) < 460, "below(6) gave %d x %d", count[k], k);
}

typedef struct pass {
    size_t nb, ns;
    float *x;
    int32_t *y;
    size_t *idx;
    size_t *sizes;
} pass;

/* Every batch of one epoch, concatenated. */
static int run_epoch(ct_loader *l, uint64_t epoch, size_t per, pass *p)
{
    size_t cap = ct_loader_samples(l);
    memset(p, 0, sizeof *p);
    p->x = malloc(cap * per * sizeof *p->x);
    p->y = malloc(cap * sizeof *p->y);
    p->idx = malloc(cap * sizeof *p->idx);
    p->sizes = malloc((ct_loader_batches(l) + 1) * sizeof *p->sizes);
    int st = ct_loader_start_epoch(l, epoch);
    for (;;) {
        ct_batch b;
        if (st || (st = ct_loader_next(l, &b)) != 0)
            break;
        if (b.n == 0)
            break;
        CHECK(b.number == p->nb, "batch number %zu, want %zu", b.number, p->nb);
        CHECK(p->ns + b.n <= cap && p->nb < ct_loader_batches(l), "too many samples");
        if (p->ns + b.n > cap || p->nb >= ct_loader_batches(l))
            break;
        memcpy(p->x + p->ns * per, b.x, b.n * per * sizeof *b.x);
        memcpy(p->y + p->ns, b.y, b.n * sizeof *b.y);
        memcpy(p->idx + p->ns, b.index, b.n * sizeof *b.index);
        p->sizes[p->nb++] = b.n;
        p->ns += b.n;
    }
    return st;
}

static void pass_free(pass *p)
{
    free(p->x);
    free(p->y);
    free(p->idx);
    free(p->sizes);
}

static int same_pass(const pass *a, const pass *b, size_t per)
{
    return a->nb == b->nb && a->ns == b->ns && !memcmp(a->sizes, b->sizes, a->nb * sizeof *a->sizes) &&
           !memcmp(a->x, b->x, a->ns * per * sizeof *a->x) && !memcmp(a->y, b->y, a->ns * sizeof *a->y) &&
           !memcmp(a->idx, b->idx, a->ns * sizeof *a->idx);
}

static ct_loader *loader(const ct_dataset *ds, ct_loader_options *o)
{
    ct_loader *l = NULL;
    int st = ct_loader_create(ds, o, &l);
    CHECK(st == CT_OK, "loader: %s", ct_last_error());
    return l;
}

static void test_loader(void)
{
    ct_dataset *ds = open_ok("synthetic:3,8,8:7:103:seed=5", CT_SPLIT_TRAIN);
    if (!ds)
        return;
    size_t per = 192;
    float *ref = malloc(per * sizeof *ref);
    ct_loader_options o;
    ct_loader_defaults(&o);
    o.batch = 10;
    o.seed = 11;

    /* plain batches hold the samples of the order, normalized as ct_dataset_sample does */
    for (int pf = 0; pf < 2; pf++) {
        o.prefetch = pf;
        ct_loader *l = loader(ds, &o);
        pass p;
        if (!l)
            continue;
        CHECK(run_epoch(l, 0, per, &p) == CT_OK, "epoch: %s", ct_last_error());
        CHECK(p.nb == 11 && ct_loader_batches(l) == 11 && p.sizes[10] == 3 && p.ns == 103,
              "prefetch %d: %zu batches, last of %zu", pf, p.nb, p.nb ? p.sizes[p.nb - 1] : 0);
        const size_t *order = ct_loader_order(l);
        int same = 1;
        for (size_t i = 0; i < p.ns; i++) {
            int32_t y;
            same &= p.idx[i] == order[i];
            ct_dataset_sample(ds, p.idx[i], ref, &y);
            same &= y == p.y[i] && !memcmp(ref, p.x + i * per, per * sizeof *ref);
        }
        CHECK(same, "prefetch %d: batches are the ordered samples", pf);
        pass_free(&p);
        ct_loader_free(&l);
    }
    o.drop_last = 1;
    o.prefetch = 1;
    {
        ct_loader *l = loader(ds, &o);
        pass p;
        if (l && run_epoch(l, 0, per, &p) == CT_OK)
            CHECK(p.nb == 10 && p.ns == 100, "drop_last: %zu batches, %zu samples", p.nb, p.ns);
        pass_free(&p);
        ct_loader_free(&l);
    }
    o.drop_last = 0;

    /* with augmentation: prefetching and a plain pass agree batch for batch,
     * over epochs and after an epoch abandoned half way */
    o.crop_pad = 4;
    o.flip = 1;
    {
        ct_loader_options q = o;
        q.prefetch = 0;
        ct_loader *lp = loader(ds, &o), *ls = loader(ds, &q);
        if (lp && ls) {
            ct_batch b;
            ct_loader_start_epoch(lp, 3);
            CHECK(ct_loader_next(lp, &b) == CT_OK && ct_loader_next(lp, &b) == CT_OK && b.number == 1,
                  "two batches of an abandoned epoch");
            for (uint64_t e = 0; e < 3; e++) {
                pass a, s;
                int st1 = run_epoch(lp, e, per, &a), st2 = run_epoch(ls, e, per, &s);
                CHECK(!st1 && !st2 && same_pass(&a, &s, per),
                      "epoch %llu: prefetching and plain batches differ", (unsigned long long)e);
                if (e == 1) {
                    /* epoch 1 differs from epoch 0 in order and augmentation */
                    pass z;
                    run_epoch(ls, 0, per, &z);
                    CHECK(memcmp(z.idx, s.idx, z.ns * sizeof *z.idx) != 0, "epochs share an order");
                    pass_free(&z);
                }
                pass_free(&a);
                pass_free(&s);
            }
        }
        ct_loader_free(&lp);
        ct_loader_free(&ls);
    }

    /* each augmented sample is a crop + flip of its sample, some of them not the identity */
    {
        ct_loader *l = loader(ds, &o);
        pass p;
        float *cand = malloc(per * sizeof *cand);
        int all_found = 1, shifted = 0, flipped = 0;
        if (l && run_epoch(l, 2, per, &p) == CT_OK) {
            for (size_t i = 0; i < p.ns; i++) {
                int found = 0;
                for (int fl = 0; fl < 2 && !found; fl++)
                    for (int dy = 0; dy <= 8 && !found; dy++)
                        for (int dx = 0; dx <= 8 && !found; dx++) {
                            ct_dataset_decode(ds, p.idx[i], 4, dy, dx, fl, cand);
                            if (!memcmp(cand, p.x + i * per, per * sizeof *cand)) {
                                found = 1;
                                shifted += dy != 4 || dx != 4;
                                flipped += fl;
                            }
                        }
                all_found &= found;
            }
            CHECK(all_found, "an augmented sample is no crop/flip of its source");
            CHECK(shifted > 50 && flipped > 30 && flipped < 73, "of 103 samples %d shifted, %d flipped",
                  shifted, flipped);
            pass p2;
            CHECK(run_epoch(l, 2, per, &p2) == CT_OK && same_pass(&p, &p2, per),
                  "augmentation repeats for the same epoch");
            pass_free(&p2);
        }
        free(cand);
        pass_free(&p);
        ct_loader_free(&l);
    }

    /* shards: disjoint, covering, of the shuffled order */
    for (int even = 0; even < 2; even++) {
        int hits[103] = { 0 };
        size_t total = 0;
        o.even_shards = even;
        o.world = 4;
        for (int r = 0; r < 4; r++) {
            o.rank = r;
            ct_loader *l = loader(ds, &o);
            pass p;
            if (!l)
                continue;
            if (run_epoch(l, 1, per, &p) == CT_OK) {
                size_t want = even ? 25 : (r < 3 ? 26 : 25);
                CHECK(p.ns == want, "even %d rank %d: %zu samples, want %zu", even, r, p.ns, want);
                for (size_t i = 0; i < p.ns; i++)
                    hits[p.idx[i]]++;
                total += p.ns;
            }
            pass_free(&p);
            ct_loader_free(&l);
        }
        int disjoint = 1, covered = 0;
        for (int i = 0; i < 103; i++) {
            disjoint &= hits[i] <= 1;
            covered += hits[i] == 1;
        }
        CHECK(disjoint, "even %d: shards overlap", even);
        CHECK(covered == (even ? 100 : 103) && total == (size_t)covered, "even %d: shards cover %d",
              even, covered);
    }
    o.world = 0;
    o.rank = 0;
    o.even_shards = 0;

    /* errors from the prefetch thread come back to the caller, and again */
    for (int pf = 0; pf < 2; pf++) {
        o.prefetch = pf;
        o.test_fail_batch = 3;
        ct_loader *l = loader(ds, &o);
        if (!l)
            continue;
        ct_batch b;
        ct_loader_start_epoch(l, 0);
        int s0 = ct_loader_next(l, &b), s1 = ct_loader_next(l, &b), s2 = ct_loader_next(l, &b);
        CHECK(!s0 && !s1 && s2 == CT_ERR_INTERNAL && b.n == 0, "prefetch %d: statuses %d %d %d", pf,
              s0, s1, s2);
        CHECK(strstr(ct_last_error(), "batch 2 of epoch 0") && strstr(ct_last_error(), "injected"),
              "prefetch %d: message '%s'", pf, ct_last_error());
        CHECK(ct_loader_next(l, &b) == CT_ERR_INTERNAL, "the error repeats");
        ct_loader_start_epoch(l, 1);
        CHECK(ct_loader_next(l, &b) == CT_OK && b.n == 10, "a new epoch starts afresh");
        ct_loader_free(&l); /* with the worker mid-epoch */
    }
    o.test_fail_batch = 0;

    /* bad options */
    {
        ct_loader *l = NULL;
        o.rank = 4;
        o.world = 4;
        CHECK(ct_loader_create(ds, &o, &l) == CT_ERR_INVALID_ARG && !l, "rank 4 of 4");
        o.rank = 0;
        o.world = 200;
        CHECK(ct_loader_create(ds, &o, &l) == CT_OK, "rank 0 of 200 gets one sample");
        ct_loader_free(&l);
        o.rank = 150;
        CHECK(ct_loader_create(ds, &o, &l) == CT_ERR_INVALID_ARG && strstr(ct_last_error(), "no samples"),
              "rank 150 of 200: %s", ct_last_error());
        o.rank = 0;
        o.world = 0;
        o.batch = 0;
        CHECK(ct_loader_create(ds, &o, &l) == CT_ERR_INVALID_ARG, "batch 0");
        o.batch = 200;
        o.drop_last = 1;
        CHECK(ct_loader_create(ds, &o, &l) == CT_ERR_INVALID_ARG && strstr(ct_last_error(), "no full batch"),
              "no full batch: %s", ct_last_error());
        o.batch = 10;
        o.drop_last = 0;
        CHECK(ct_loader_create(ds, &o, &l) == CT_OK && ct_loader_next(l, &(ct_batch){ 0 }) == CT_ERR_INVALID_ARG,
              "next before an epoch");
        ct_loader_free(&l);
    }
    free(ref);
    ct_dataset_free(&ds);

    /* no augmentation of plain features */
    ct_dataset *f = open_ok("synthetic:12:3:40", CT_SPLIT_TRAIN);
    ct_loader *l = NULL;
    if (f)
        CHECK(ct_loader_create(f, &o, &l) == CT_ERR_INVALID_ARG, "crop of (12, 1, 1) features");
    ct_loader_free(&l);
    ct_dataset_free(&f);
}

int main(void)
{
    test_rng();
    test_loader();
    return tcheck_done("test_loader");
}
