/*
 * rng.h - the data layer's random numbers: splitmix64 to expand seeds and
 * xoshiro256** to draw. Integer-only arithmetic on uint64_t, so a shuffle or
 * an augmentation is bit-identical on every platform and compiler; every
 * stream is keyed by (seed, stream, epoch, index) rather than advanced
 * across calls, so a sample's draws do not depend on who decodes it or when.
 */
#ifndef CT_DATA_RNG_H
#define CT_DATA_RNG_H

#include <stddef.h>
#include <stdint.h>

/* Stream tags keep the shuffle, the augmentation and synthetic data apart
 * even when they share a seed. */
enum {
    CT_RNG_SHUFFLE = 1,
    CT_RNG_AUGMENT = 2,
    CT_RNG_SYNTHETIC = 3,
    CT_RNG_SPLIT = 4, /* train/test splits of text datasets */
    CT_RNG_SUBSTITUTE = 5, /* image folders, bad=skip: samples in place of files that fail */
    CT_RNG_STATS = 6, /* image folders: the sample the normalization statistics come from */
};

typedef struct ct_rng {
    uint64_t s[4];
} ct_rng;

/* One splitmix64 step: advances *state and returns the mixed output. */
uint64_t ct_splitmix64(uint64_t *state);
/* A generator keyed by the four values (hashed through splitmix64). */
void ct_rng_seed(ct_rng *r, uint64_t seed, uint64_t stream, uint64_t epoch, uint64_t index);
/* xoshiro256** next output. */
uint64_t ct_rng_next(ct_rng *r);
/* Uniform in [0, n) without modulo bias; n >= 1. */
uint64_t ct_rng_below(ct_rng *r, uint64_t n);

/* Fisher-Yates shuffle of perm (n entries, any contents) with the
 * generator of (seed, CT_RNG_SHUFFLE, epoch, 0). */
void ct_shuffle(size_t *perm /* (n) */, size_t n, uint64_t seed, uint64_t epoch);

#endif /* CT_DATA_RNG_H */
