/*
 * dropout.c - reference dropout, in double, with the mask drawn exactly as
 * the kernels draw it (counter (i / 4, 1, seed_hi, stream), key
 * (seed_lo, 0x5eed), word i % 4).
 */
#include "core/philox.h"
#include "ref/dropout.h"

/* out[i] = keep_i ? in[i] * scale : 0 (keep_i itself when in is NULL). Reads in[i]
 * before writing out[i], so out may alias in. */
static void masked(double *out, const double *in, size_t n, float p, uint64_t seed,
                   uint32_t stream, double scale)
{
    const uint32_t key[2] = { (uint32_t)seed, 0x5eedu };
    uint32_t r[4] = { 0, 0, 0, 0 };
    for (size_t i = 0; i < n; i++) {
        if (i % 4 == 0) {
            const uint32_t ctr[4] = { (uint32_t)(i / 4), 1u, (uint32_t)(seed >> 32), stream };
            ct_philox4x32(ctr, key, r);
        }
        int keep = ct_philox_u01(r[i % 4]) >= p;
        out[i] = keep ? (in ? in[i] * scale : 1.0) : 0.0;
    }
}

void ct_ref_dropout_mask(double *keep, size_t n, float p, uint64_t seed, uint32_t stream)
{
    masked(keep, NULL, n, p, seed, stream, 1.0);
}

static void apply(double *out, const double *in, size_t n, float p, uint64_t seed, uint32_t stream)
{
    masked(out, in, n, p, seed, stream, ct_dropout_scale(p));
}

void ct_ref_dropout_forward(double *y, const double *x, size_t n, float p, uint64_t seed,
                            uint32_t stream)
{
    apply(y, x, n, p, seed, stream);
}

void ct_ref_dropout_backward(double *dx, const double *dy, size_t n, float p, uint64_t seed,
                             uint32_t stream)
{
    apply(dx, dy, n, p, seed, stream);
}
