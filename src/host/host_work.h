/*
 * host_work.h - what host-side ops on CPU devices share per context: a
 * thread pool (core/pool.h) and per-thread scratch, made at first use and
 * freed with the context (attached as a context extension, cl/runtime.h).
 * The direct convolution (conv_host.h) and the host max pool (pool_host.h)
 * run on it.
 */
#ifndef CT_HOST_HOST_WORK_H
#define CT_HOST_HOST_WORK_H

#include "core/pool.h"
#include "host/hostmap.h"
#include "ops/ops.h"

#if defined(__x86_64__) || defined(__i386__)
#define CT_HOST_X86 1
/* compiled for AVX2 + FMA; called only where ct_host_avx2_fma() says so */
#define CT_AVX2 __attribute__((target("avx2,fma")))
/* compiled for AVX-512; called only where ct_host_avx512() says so */
#define CT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,bmi2")))
/* compiled for AVX-512 with AVX512_BF16; called only where ct_host_avx512_bf16() says so */
#define CT_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,avx2,fma,bmi2")))
/* compiled for AMX tiles with bf16 and AVX-512; called only where ct_host_amx() says so */
#define CT_AMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,avx2,fma,bmi2")))
#endif

#define CT_HOST_BIG_SLOTS 6
/* the big slots ct_gemm's AVX-512 host path packs A and B into (0-3: the
 * direct convolution's) */
#define CT_HOST_BIG_GEMM_A 4
#define CT_HOST_BIG_GEMM_B 5
/* the row ops' per-call partial sums (layer norm's column sums): slot 0,
 * which the convolutions too only use within a call */
#define CT_HOST_BIG_ROWS 0

typedef struct ct_host_work {
    ct_pool *pool;
    int threads;
    float **scratch;   /* per thread, 64-byte aligned */
    size_t *scratch_n; /* floats */
    int *cached;       /* per thread: the image whose padded planes are in scratch */
    float *wpack;      /* packed weights */
    size_t wpack_n;
    int *toff;         /* tap offsets */
    size_t toff_n;
    float *big[CT_HOST_BIG_SLOTS]; /* shared (not per thread) buffers, grown on demand */
    size_t big_n[CT_HOST_BIG_SLOTS];
} ct_host_work;

/* The context's pool and scratch, with at least per_thread floats of
 * scratch per thread, wpack_n packed weights and `taps` tap offsets; every
 * thread's `cached` is reset to -1. Threads: as many as the device has
 * compute units (pocl: the cores), or CLTRAIN_THREADS. */
int ct_host_work_get(ct_context *ctx, size_t per_thread, size_t wpack_n, size_t taps,
                     ct_host_work **out);

/* What a host op starts with: the context's pool (no scratch asked) in
 * *pool, and r[0..n) mapped into *hm (ct_hmap_map; the op ends with
 * ct_hmap_unmap). */
int ct_host_begin(ct_context *ctx, ct_hmap_range *r, int n, ct_hmap *hm, ct_pool **pool,
                  const char *what);

/* Shared buffer `slot` (0 .. CT_HOST_BIG_SLOTS - 1) of hw with room for n floats, 64-byte
 * aligned; it keeps its size between calls (no page faults per call). */
int ct_host_work_big(ct_context *ctx, ct_host_work *hw, int slot, size_t n, float **out);

/* The pool's thread count once it exists, else the device's compute units. */
int ct_host_work_threads(const ct_context *ctx);

/* Whether this CPU has AVX2 and FMA (0 off x86). */
int ct_host_avx2_fma(void);

/* Whether the host kernels use AVX-512 (F, BW, DQ, VL; and BMI2, which
 * every CPU with those has): the CPU has it and
 * CLTRAIN_HOST_ISA is not "avx2" (which keeps the AVX2 kernels, to compare
 * or to check them on an AVX-512 machine). */
int ct_host_avx512(void);

/* Whether bf16 products use the CPU's AVX512_BF16 dot products (vdpbf16ps):
 * ct_host_avx512(), the CPU has them, and they pay here
 * (ct_host_bf16_dot_speed() >= CT_BF16_DOT_PAYS) or CLTRAIN_HOST_ISA is
 * "avx512bf16" (which takes them whatever they cost); CLTRAIN_HOST_ISA
 * "avx512" keeps AVX-512 without them. Without them bf16 operands are
 * rounded and run through the float32 FMAs. */
int ct_host_avx512_bf16(void);

/* Whether bf16 products run on AMX tiles (TDPBF16PS: a 16 x 16 block of
 * float32 sums of 32 bf16 products per instruction): ct_host_avx512(), the
 * CPU has AMX-TILE and AMX-BF16, the kernel granted this process the tile
 * state (arch_prctl ARCH_REQ_XCOMP_PERM, asked once; Linux 5.16 and later),
 * and CLTRAIN_HOST_ISA is not "avx512" or "avx512bf16" (which keep the
 * vector kernels). AMX is the default wherever it is granted: the GEMMs
 * (gemm512.h) and the same-width stride-1 convolutions (conv_amx.h) take
 * it; the other direct convolutions keep their vector tiles. */
int ct_host_amx(void);

/* Multiply-adds per second of vdpbf16ps over those of the FMA on this
 * core, measured once per process (isa_probe.c): about 2 where the dot
 * products run at the FMA's rate (Zen 4), about 1 where at half of it
 * (Sapphire Rapids); 0 without AVX512_BF16 or AVX-512. The pair packing
 * costs, so they are taken from 1.25. */
double ct_host_bf16_dot_speed(void);
#define CT_BF16_DOT_PAYS 1.25

#endif /* CT_HOST_HOST_WORK_H */
