/*
 * loss_host.c - softmax cross-entropy on the host pool (loss_host.h).
 *
 * Per row, as the kernels' xent_row and softmax_xent_bwd_rows_f32: the
 * maximum m (a NaN logit skipped, as fmax does), the first index holding
 * it, sum_k exp(x_k - m) Kahan-compensated in 16 lanes (the kernel's 8
 * lanes, a float8, twice over), each lane's compensation folded
 * in before the lanes and then the tail are added in index order. A label
 * outside [0, K) is never used as an index: NaN loss, no hit, NaN
 * gradients.
 *
 * Determinism: a pool item is a run of whole rows, and a row's results
 * depend on that row alone; the forward writes each row's loss and hit to
 * ws and the calling thread then adds them in row order (Kahan for the
 * losses; the hits are exact), so the bits do not depend on the thread
 * count or on which thread took which item. AVX-512 only (loss_host.h);
 * the bits differ from the kernels' by the exp's rounding and the lanes.
 *
 * Accuracy, against src/check/loss.c's budget (exp within 4 ulp, a mean
 * within (2 + log2 wg) eps of sum |term|): ct_v_exp is within 1 ulp and
 * glibc's logf within 1, division is IEEE, and one Kahan sum over the rows
 * is within ~2 eps of the sum of magnitudes, so the results sit inside the
 * kernels' tolerances.
 */
#include "host/loss_host.h"

#include <math.h>
#include <stdint.h>

#include "host/host_work.h"

#ifdef CT_HOST_X86
#include "host/vmath512.h"
#endif

/* logits per pool item, at least one row: short rows go in runs */
#define XH_ITEM 4096u

typedef struct xh {
    size_t N, K, rows; /* rows per item */
    float scale;       /* backward: dloss_scale / N */
    float *out;        /* forward: ws (2 N), row losses then row hits; backward: dx (N, K) */
    const float *x;
    const int32_t *labels;
} xh;

static inline void kahan(float *s, float *comp, float v)
{
    float y = v - *comp;
    float t = *s + y;
    *comp = (t - *s) - y;
    *s = t;
}

static int bad_label(int32_t lab, size_t K)
{
    return lab < 0 || (size_t)lab >= K;
}

/* ---- scalar helpers ---- */

/* fmax (a NaN operand loses to a number) without the call fmaxf makes on
 * baseline x86-64, so the lanes below vectorize */
static inline float max_num(float m, float x)
{
    return ((x > m) | (m != m)) ? x : m;
}

/* in 8 lanes as the kernel's row_max (the maximum is the same in any order) */
static float row_max(const float *row, size_t K)
{
    size_t K8 = K / 8 * 8;
    float m = row[0];
    if (K8) {
        float m8[8];
        for (int l = 0; l < 8; l++)
            m8[l] = row[l];
        for (size_t k = 8; k < K8; k += 8)
            for (int l = 0; l < 8; l++)
                m8[l] = max_num(m8[l], row[k + l]);
        for (int l = 0; l < 8; l++)
            m = max_num(m, m8[l]);
    }
    for (size_t k = K8; k < K; k++)
        m = max_num(m, row[k]);
    return m;
}

/* ---- AVX-512: the same passes, 16 logits a vector, the tail masked ---- */

#ifdef CT_HOST_X86
static CT_AVX512 inline float row_max512(const float *row, size_t K)
{
    /* max_ps returns its second operand when either is NaN: a NaN logit
     * leaves the running maximum as it was, as fmax */
    __m512 acc = _mm512_set1_ps(-INFINITY);
    size_t k = 0;
    for (; k + 16 <= K; k += 16)
        acc = _mm512_max_ps(_mm512_loadu_ps(row + k), acc);
    if (k < K) {
        __mmask16 t = ct_tail16(K - k);
        acc = _mm512_mask_max_ps(acc, t, _mm512_maskz_loadu_ps(t, row + k), acc);
    }
    float m = _mm512_reduce_max_ps(acc);
    /* all NaN or -inf: the scalar fold says which (NaN when all are NaN) */
    return m == -INFINITY ? row_max(row, K) : m;
}

static CT_AVX512 inline size_t row_argmax512(const float *row, size_t K, float m)
{
    const __m512 vm = _mm512_set1_ps(m);
    for (size_t k = 0; k < K; k += 16) {
        __mmask16 t = ct_tail16(K - k);
        unsigned eq = _mm512_mask_cmp_ps_mask(t, _mm512_maskz_loadu_ps(t, row + k), vm, _CMP_EQ_OQ);
        if (eq)
            return k + (size_t)__builtin_ctz(eq);
    }
    return K - 1;
}

/* exp(x - m) for 16 logits; x - m is at most 0 (or NaN), and ct_v_exp
 * gives 0 for any x - m below -104 (the "huge" check case: logits of
 * +-1e30) */
static CT_AVX512 inline __m512 exp_shift(__m512 v, __m512 vm)
{
    return ct_v_exp(_mm512_sub_ps(v, vm));
}

static CT_AVX512 inline __attribute__((always_inline)) float
row_expsum512(const float *row, size_t K, float m, float *out)
{
    const __m512 vm = _mm512_set1_ps(m);
    size_t K16 = K / 16 * 16;
    __m512 s = _mm512_setzero_ps(), c = _mm512_setzero_ps();
    for (size_t k = 0; k < K16; k += 16) {
        __m512 t = exp_shift(_mm512_loadu_ps(row + k), vm);
        if (out)
            _mm512_storeu_ps(out + k, t);
        __m512 y = _mm512_sub_ps(t, c);
        __m512 u = _mm512_add_ps(s, y);
        c = _mm512_sub_ps(_mm512_sub_ps(u, s), y);
        s = u;
    }
    float lanes[16], e = 0.0f, ec = 0.0f;
    _mm512_storeu_ps(lanes, _mm512_sub_ps(s, c));
    for (int l = 0; l < 16; l++)
        kahan(&e, &ec, lanes[l]);
    if (K16 < K) {
        __mmask16 t = ct_tail16(K - K16);
        __m512 v = exp_shift(_mm512_maskz_loadu_ps(t, row + K16), vm);
        if (out)
            _mm512_mask_storeu_ps(out + K16, t, v);
        _mm512_storeu_ps(lanes, v);
        for (size_t l = 0; l < K - K16; l++)
            kahan(&e, &ec, lanes[l]);
    }
    return e;
}

static CT_AVX512 void fwd_item512(void *arg, size_t item, int thread)
{
    (void)thread;
    const xh *h = arg;
    size_t K = h->K, r0 = item * h->rows, r1 = r0 + h->rows < h->N ? r0 + h->rows : h->N;
    for (size_t r = r0; r < r1; r++) {
        const float *row = h->x + r * K;
        int32_t lab = h->labels[r];
        float loss = NAN, hit = 0.0f;
        if (!bad_label(lab, K)) {
            float m = row_max512(row, K);
            hit = row_argmax512(row, K, m) == (size_t)lab ? 1.0f : 0.0f;
            loss = (m - row[lab]) + logf(row_expsum512(row, K, m, NULL));
        }
        h->out[r] = loss;
        h->out[h->N + r] = hit;
    }
}

static CT_AVX512 void bwd_item512(void *arg, size_t item, int thread)
{
    (void)thread;
    const xh *h = arg;
    size_t K = h->K, r0 = item * h->rows, r1 = r0 + h->rows < h->N ? r0 + h->rows : h->N;
    const __m512 vs = _mm512_set1_ps(h->scale);
    for (size_t r = r0; r < r1; r++) {
        const float *row = h->x + r * K;
        float *drow = h->out + r * K;
        int32_t lab = h->labels[r];
        if (bad_label(lab, K)) {
            for (size_t k = 0; k < K; k += 16)
                _mm512_mask_storeu_ps(drow + k, ct_tail16(K - k), _mm512_set1_ps(NAN));
            continue;
        }
        float inv = 1.0f / row_expsum512(row, K, row_max512(row, K), drow);
        float dl = (drow[lab] * inv - 1.0f) * h->scale;
        /* (exp * inv) * scale, the kernel's two roundings in its order */
        const __m512 vi = _mm512_set1_ps(inv);
        for (size_t k = 0; k < K; k += 16) {
            __mmask16 t = ct_tail16(K - k);
            _mm512_mask_storeu_ps(drow + k, t,
                                  _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(t, drow + k), vi), vs));
        }
        drow[lab] = dl;
    }
}
#endif /* CT_HOST_X86 */

int ct_loss_host_ok(const ct_context *ctx, size_t N, size_t K)
{
    /* AVX-512 only: a scalar loop with expf per logit measured 2x slower
     * than the kernels (4096 x 10000: 46 against ~20 ms a pass) */
    return ctx->cls.host_pool && ct_host_avx512() && N * K >= CT_LOSS_HOST_MIN;
}

static size_t rows_per_item(size_t K)
{
    return K >= XH_ITEM ? 1 : XH_ITEM / K;
}

int ct_host_softmax_xent_forward(ct_context *ctx, ct_buf loss, ct_buf correct, ct_buf x,
                                 ct_buf labels, size_t N, size_t K, ct_buf ws)
{
    const char *what = "softmax cross-entropy (host)";
    /* labels are int32: the same size as the floats the ranges count */
    ct_hmap_range r[5] = { { ws.mem, ws.off, 2 * N, 1, NULL }, { loss.mem, loss.off, 1, 1, NULL },
                           { correct.mem, correct.off, 1, 1, NULL },
                           { x.mem, x.off, N * K, 0, NULL }, { labels.mem, labels.off, N, 0, NULL } };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 5, &hm, &pool, what);
    if (st)
        return st;
    size_t rows = rows_per_item(K);
    xh h = { .N = N, .K = K, .rows = rows, .out = r[0].host, .x = r[3].host,
             .labels = (const int32_t *)r[4].host };
#ifdef CT_HOST_X86
    ct_pool_run(pool, (N + rows - 1) / rows, fwd_item512, &h);
#else
    (void)pool, (void)rows;
#endif
    /* one thread, rows in order: the same bits for any thread count */
    const float *rowloss = h.out, *rowhit = h.out + N;
    float s = 0.0f, comp = 0.0f, hits = 0.0f;
    for (size_t i = 0; i < N; i++) {
        kahan(&s, &comp, rowloss[i]);
        hits += rowhit[i];
    }
    r[1].host[0] = s / (float)N;
    if (r[2].host)
        r[2].host[0] = hits;
    return ct_hmap_unmap(ctx, &hm, CT_OK, what);
}

int ct_host_softmax_xent_backward(ct_context *ctx, ct_buf dx, ct_buf x, ct_buf labels, size_t N,
                                  size_t K, float scale)
{
    const char *what = "softmax cross-entropy backward (host)";
    ct_hmap_range r[3] = { { dx.mem, dx.off, N * K, 1, NULL }, { x.mem, x.off, N * K, 0, NULL },
                           { labels.mem, labels.off, N, 0, NULL } };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 3, &hm, &pool, what);
    if (st)
        return st;
    size_t rows = rows_per_item(K);
    xh h = { .N = N, .K = K, .rows = rows, .scale = scale, .out = r[0].host, .x = r[1].host,
             .labels = (const int32_t *)r[2].host };
#ifdef CT_HOST_X86
    ct_pool_run(pool, (N + rows - 1) / rows, bwd_item512, &h);
#else
    (void)pool, (void)rows;
#endif
    return ct_hmap_unmap(ctx, &hm, CT_OK, what);
}
