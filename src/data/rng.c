/*
 * rng.c - splitmix64 and xoshiro256** (Blackman and Vigna, "Scrambled
 * linear pseudorandom number generators", 2021), and the Fisher-Yates
 * shuffle built on them.
 */
#include "data/rng.h"

uint64_t ct_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void ct_rng_seed(ct_rng *r, uint64_t seed, uint64_t stream, uint64_t epoch, uint64_t index)
{
    /* Each key is folded into a fresh splitmix64 output, so (1, 2) and
     * (2, 1) land on unrelated states. */
    uint64_t st = seed;
    uint64_t h = ct_splitmix64(&st);
    st = h ^ stream;
    h = ct_splitmix64(&st);
    st = h ^ epoch;
    h = ct_splitmix64(&st);
    st = h ^ index;
    for (int k = 0; k < 4; k++)
        r->s[k] = ct_splitmix64(&st);
    /* xoshiro's one forbidden state; splitmix64 all but never yields it */
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
        r->s[0] = 1;
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t ct_rng_next(ct_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t ct_rng_below(ct_rng *r, uint64_t n)
{
    /* Reject the lowest 2^64 mod n outputs: what remains is a whole
     * number of copies of [0, n). */
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t x = ct_rng_next(r);
        if (x >= threshold)
            return x % n;
    }
}

void ct_shuffle(size_t *perm, size_t n, uint64_t seed, uint64_t epoch)
{
    ct_rng r;
    ct_rng_seed(&r, seed, CT_RNG_SHUFFLE, epoch, 0);
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)ct_rng_below(&r, i);
        size_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
}
