/*
 * attn_host.c - attention's masked softmax and its backward on the host
 * pool (attn_host.h), AVX-512 CPUs.
 *
 * Why: as a pocl kernel a work-item walked a row of T scores, so the 16
 * work-items of a vector read 16 rows T floats apart (gathers and
 * scattered exps), between two host products that each drained the queue
 * and handed the cores over: the gpt's softmax took 12 ms of a 29 ms
 * attention forward per layer (64 x 4 heads of 128 x 128 scores).
 *
 * Per row, 16 keys a vector, the tail masked: the maximum over the row's
 * keys (the same in any order), exp(s - max) from host/vmath512.h (within 1
 * ulp of the kernel's exp), their sum in 16 lanes added in a fixed order,
 * then one multiply by 1 / sum; the backward's dot product likewise. A
 * pool item is a run of whole (sample, head) blocks, and a row's results
 * depend on that row alone: the bits do not depend on the thread count.
 * Against the kernels only the sum's order and the exp's rounding change,
 * inside src/check/attention.c's tolerance (it bounds chains of float sums
 * over T terms, whatever their order).
 */
#include "host/attn_host.h"

#include <math.h>

#include "host/host_work.h"
#include "host/hostmap.h"
#ifdef CT_HOST_X86
#include "host/vmath512.h"
#endif

/* scores per pool item, at least one (sample, head) block */
#define AH_ITEM 8192u

typedef struct ah {
    size_t rows, T, per; /* rows per item: whole blocks of T */
    int causal;
    float *s;            /* forward: scores -> P; backward: dP -> dS */
    const float *p;
} ah;

#ifdef CT_HOST_X86
static CT_AVX512 void fwd_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const ah *h = arg;
    size_t T = h->T, r0 = item * h->per, r1 = r0 + h->per < h->rows ? r0 + h->per : h->rows;
    for (size_t r = r0; r < r1; r++) {
        size_t len = h->causal ? r % T + 1 : T;
        float *row = h->s + r * T;
        __m512 vm = _mm512_set1_ps(-INFINITY);
        for (size_t j = 0; j < len; j += 16) {
            __mmask16 t = ct_tail16(len - j);
            vm = _mm512_mask_max_ps(vm, t, _mm512_maskz_loadu_ps(t, row + j), vm);
        }
        vm = _mm512_set1_ps(_mm512_reduce_max_ps(vm));
        __m512 vs = _mm512_setzero_ps();
        for (size_t j = 0; j < len; j += 16) {
            __mmask16 t = ct_tail16(len - j);
            __m512 e = ct_v_exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, row + j), vm));
            vs = _mm512_mask_add_ps(vs, t, vs, e);
            _mm512_mask_storeu_ps(row + j, t, e);
        }
        const __m512 vi = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(vs)), z = _mm512_setzero_ps();
        for (size_t j = 0; j < T; j += 16) {
            __mmask16 t = ct_tail16(T - j);
            __mmask16 in = j < len ? ct_tail16(len - j) : 0;
            /* keys past len (the causal mask) are written 0 */
            _mm512_mask_storeu_ps(row + j, t, _mm512_mask_mul_ps(z, in, _mm512_maskz_loadu_ps(in, row + j), vi));
        }
    }
}

static CT_AVX512 void bwd_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const ah *h = arg;
    size_t T = h->T, r0 = item * h->per, r1 = r0 + h->per < h->rows ? r0 + h->per : h->rows;
    for (size_t r = r0; r < r1; r++) {
        size_t len = h->causal ? r % T + 1 : T;
        float *row = h->s + r * T;
        const float *pr = h->p + r * T;
        __m512 vd = _mm512_setzero_ps();
        for (size_t j = 0; j < len; j += 16) {
            __mmask16 t = ct_tail16(len - j);
            vd = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(t, row + j), _mm512_maskz_loadu_ps(t, pr + j), vd);
        }
        const __m512 dot = _mm512_set1_ps(_mm512_reduce_add_ps(vd)), z = _mm512_setzero_ps();
        for (size_t j = 0; j < T; j += 16) {
            __mmask16 t = ct_tail16(T - j);
            __mmask16 in = j < len ? ct_tail16(len - j) : 0;
            __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(in, pr + j),
                                     _mm512_sub_ps(_mm512_maskz_loadu_ps(in, row + j), dot));
            _mm512_mask_storeu_ps(row + j, t, _mm512_mask_mov_ps(z, in, v));
        }
    }
}
#endif /* CT_HOST_X86 */

int ct_attn_host_ok(const ct_context *ctx, size_t rows, size_t T)
{
    return ctx->cls.host_pool && ct_host_avx512() && rows * T >= CT_ATTN_HOST_MIN;
}

static int run(ct_context *ctx, int bwd, ct_buf s, ct_buf p, size_t rows, size_t T, int causal)
{
    const char *what = bwd ? "attention softmax backward (host)" : "attention softmax (host)";
    ct_hmap_range r[2] = { { s.mem, s.off, rows * T, 1, NULL }, { bwd ? p.mem : NULL, p.off, rows * T, 0, NULL } };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 2, &hm, &pool, what);
    if (st)
        return st;
    size_t blocks = T * T >= AH_ITEM ? 1 : AH_ITEM / (T * T);
    ah h = { .rows = rows, .T = T, .per = blocks * T, .causal = causal, .s = r[0].host, .p = r[1].host };
#ifdef CT_HOST_X86
    ct_pool_run(pool, (rows + h.per - 1) / h.per, bwd ? bwd_item : fwd_item, &h);
#else
    (void)pool, (void)h;
    st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "%s: not built for this CPU", what);
#endif
    return ct_hmap_unmap(ctx, &hm, st, what);
}

int ct_attn_host_softmax_forward(ct_context *ctx, ct_buf p, size_t rows, size_t T, int causal)
{
    return run(ctx, 0, p, (ct_buf){ NULL, 0 }, rows, T, causal);
}

int ct_attn_host_softmax_backward(ct_context *ctx, ct_buf d, ct_buf p, size_t rows, size_t T, int causal)
{
    return run(ctx, 1, d, p, rows, T, causal);
}
