/*
 * isa_probe.c - whether AVX512_BF16's dot products pay on this CPU
 * (host_work.h's ct_host_bf16_dot_speed), and whether AMX tiles are there
 * and granted (ct_host_amx).
 *
 * vdpbf16ps does two multiply-adds per 32-bit lane, an FMA one; which is
 * faster depends on the core, not on the CPUID bits: Zen 4 issues it as
 * fast as an FMA (twice the multiply-adds per cycle), Sapphire Rapids at
 * half the FMA's rate (the same multiply-adds per cycle, plus the packing
 * into pairs: the bf16 tiles ran 1.5-1.7x slower than float32 there). So
 * it is measured once per process: 12 independent chains of each
 * instruction against a broadcast operand (the tiles' shape), the faster
 * of three short runs each, interleaved (well under a millisecond in all).
 */
#include "host/host_work.h"

#include <pthread.h>
#include <time.h>

#ifdef CT_HOST_X86
#include <cpuid.h>
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
#endif

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define ITERS 20000

/* the sums are returned so that the loops are not optimized away */
static CT_AVX512BF16 float dot_loop(const volatile int *w)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
    __m512 a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
    __m512i x = _mm512_set1_epi32(0x3f803f80), y = _mm512_set1_epi32(0x3c003c00);
    for (int i = 0; i < ITERS; i++) {
        __m512bh b = (__m512bh)_mm512_set1_epi32(w[i & 7]);
#define DP(A, X) A = _mm512_dpbf16_ps(A, (__m512bh)X, b)
        DP(a0, x), DP(a1, y), DP(a2, x), DP(a3, y), DP(a4, x), DP(a5, y);
        DP(a6, x), DP(a7, y), DP(a8, x), DP(a9, y), DP(a10, x), DP(a11, y);
#undef DP
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return _mm512_reduce_add_ps(s);
}

static CT_AVX512 float fma_loop(const volatile float *w)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
    __m512 a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
    __m512 x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(0.5f);
    for (int i = 0; i < ITERS; i++) {
        __m512 b = _mm512_set1_ps(w[i & 7]);
#define FM(A, X) A = _mm512_fmadd_ps(X, b, A)
        FM(a0, x), FM(a1, y), FM(a2, x), FM(a3, y), FM(a4, x), FM(a5, y);
        FM(a6, x), FM(a7, y), FM(a8, x), FM(a9, y), FM(a10, x), FM(a11, y);
#undef FM
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return _mm512_reduce_add_ps(s);
}

static double speed;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void probe(void)
{
    static volatile int wi[8] = { 0x3f803f80, 0x3f803f80, 0x3f803f80, 0x3f803f80,
                                  0x3f803f80, 0x3f803f80, 0x3f803f80, 0x3f803f80 };
    static volatile float wf[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    static volatile float sink;
    double tf = 1e30, td = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = seconds();
        sink = fma_loop(wf);
        double t1 = seconds();
        sink = dot_loop(wi);
        double t2 = seconds();
        tf = t1 - t0 < tf ? t1 - t0 : tf;
        td = t2 - t1 < td ? t2 - t1 : td;
    }
    (void)sink;
    /* multiply-adds per second, dot products over FMAs */
    speed = td > 0 ? 2.0 * tf / td : 0;
}

double ct_host_bf16_dot_speed(void)
{
    if (!ct_host_avx512() || !__builtin_cpu_supports("avx512bf16"))
        return 0;
    pthread_once(&once, probe);
    return speed;
}

/* AMX: CPUID leaf 7's AMX-BF16 (EDX bit 22) and AMX-TILE (bit 24), the
 * OS enabling the tile state in XCR0 (bits 17 and 18), and Linux granting
 * this process the tile data (XFEATURE_XTILEDATA, 18): without the grant
 * the first tile instruction faults. */
static int amx;
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;

static void amx_probe(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 22)) || !(d & (1u << 24)))
        return;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE: xgetbv exists */
        return;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & (3u << 17)) != (3u << 17))
        return;
#if defined(__linux__) && defined(SYS_arch_prctl)
    amx = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#endif
}

int ct_host_amx(void)
{
    const char *isa = getenv("CLTRAIN_HOST_ISA");
    if (isa && (!strcmp(isa, "avx512") || !strcmp(isa, "avx512bf16")))
        return 0;
    if (!ct_host_avx512() || !__builtin_cpu_supports("avx512bf16"))
        return 0;
    pthread_once(&amx_once, amx_probe);
    return amx;
}

#else

double ct_host_bf16_dot_speed(void)
{
    return 0;
}

int ct_host_amx(void)
{
    return 0;
}

#endif
