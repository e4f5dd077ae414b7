/*
 * checkcl - every op against its host reference on an OpenCL device
 * (src/check/), for the test suite and benchmarks.
 *
 *   checkcl [--gemm host|clblast] [--seed N] [--iterations N] [--filter OP]
 *           [--bench] [--plant-bug] [--no-finite-diff] [--small] [--device SEL]
 *           [--build-options OPTS] [--precision fp32|bf16|fp16]
 *   checkcl --list
 *
 * --small runs simulator-sized cases and --build-options adds compiler
 * options to cltrain's kernels (not CLBlast's), both for Oclgrind
 * (tests/oclgrind/run_oclgrind.sh); --list prints the op names --filter
 * matches against, one a line. --precision runs the products in bf16 or
 * fp16 (the CPU class's host path), held to the formats' bounds (check.h,
 * ck_prod_atol); it skips (77) where the device cannot.
 * Exits 1 if any op fails. With --plant-bug the harness corrupts one output
 * element per op and the exit status is inverted: every op must be caught.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"

typedef struct tally {
    int ops, failed, plant;
} tally;

static void report(void *user, const ct_selftest_result *r)
{
    tally *t = user;
    t->ops++;
    t->failed += !r->passed;
    const char *verdict = r->passed ? "ok  " : "FAIL";
    if (t->plant)
        verdict = r->passed ? "MISSED" : "caught";
    printf("%-6s %-16s %4d cases %5d comparisons  max abs err %.3g  (%.3g of tolerance)",
           verdict, r->op, r->cases, r->comparisons, r->max_abs_err, r->max_rel_err);
    if (r->bench_ms > 0)
        printf("  | %s: %.3f ms, %.2f GFLOP/s, %.2f GB/s", r->bench_shape, r->bench_ms, r->gflops,
               r->gbytes);
    printf("\n");
    if (!r->passed)
        printf("       %s\n", r->message);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    ct_selftest_options so;
    ct_selftest_defaults(&so);
    const char *gemm = NULL, *device = NULL, *build_options = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--gemm") && v) gemm = v, i++;
        else if (!strcmp(a, "--device") && v) device = v, i++;
        else if (!strcmp(a, "--build-options") && v) build_options = v, i++;
        else if (!strcmp(a, "--seed") && v) so.seed = strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--iterations") && v) so.iterations = atoi(v), i++;
        else if (!strcmp(a, "--filter") && v) so.filter = v, i++;
        else if (!strcmp(a, "--bench")) so.bench = 1;
        else if (!strcmp(a, "--plant-bug")) so.plant_bug = 1;
        else if (!strcmp(a, "--no-finite-diff")) so.finite_diff = 0;
        else if (!strcmp(a, "--small")) so.small = 1;
        else if (!strcmp(a, "--precision") && v) {
            so.precision = !strcmp(v, "bf16") ? CT_PRECISION_BF16 : !strcmp(v, "fp16") ? CT_PRECISION_FP16 : CT_PRECISION_FP32;
            i++;
        }
        else if (!strcmp(a, "--list")) {
            for (const char *const *op = ct_selftest_ops(); *op; op++)
                printf("%s\n", *op);
            return 0;
        }
        else {
            fprintf(stderr, "checkcl: unknown or incomplete option '%s'\n", a);
            return 2;
        }
    }
    ct_context_options o;
    ct_context_defaults(&o);
    o.device = device;
    o.build_options = build_options;
    o.lazy_kernels = 1;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx)) {
        fprintf(stderr, "checkcl: %s\n", ct_last_error());
        return 1;
    }
    if (gemm) {
        int st = !strcmp(gemm, "host")      ? ct_gemm_set_path(ctx, CT_GEMM_HOST)
                 : !strcmp(gemm, "clblast") ? ct_gemm_set_path(ctx, CT_GEMM_CLBLAST)
                                            : CT_ERR_INVALID_ARG;
        if (st) {
            fprintf(stderr, "checkcl: --gemm %s: %s\n", gemm, ct_context_last_error(ctx));
            ct_context_free(&ctx);
            return 2;
        }
    }
    if (so.precision != CT_PRECISION_FP32) {
        /* 16-bit products need the CPU class's host GEMM on an AVX-512 CPU */
        if (ct_context_set_precision(ctx, (ct_precision)so.precision)) {
            printf("checkcl: %s: skipped\n", ct_context_last_error(ctx));
            ct_context_free(&ctx);
            return 77;
        }
        ct_context_set_precision(ctx, CT_PRECISION_FP32);
    }
    printf("checkcl on %s, GEMM path %s, seed %llu, %d iterations%s\n",
           ct_context_device(ctx)->name, ct_gemm_path_str(ct_gemm_get_path(ctx)),
           (unsigned long long)so.seed, so.iterations, so.plant_bug ? ", planted bug" : "");
    tally t = { 0, 0, so.plant_bug };
    int st = ct_selftest_run(ctx, &so, report, &t);
    int hard = st && st != CT_ERR_CORRUPT;
    if (hard)
        fprintf(stderr, "checkcl: %s\n", ct_context_last_error(ctx));
    ct_context_free(&ctx);
    printf("%d ops, %d failed\n", t.ops, t.failed);
    if (so.plant_bug)
        return (!hard && t.ops > 0 && t.failed == t.ops) ? 0 : 1;
    return st ? 1 : 0;
}
