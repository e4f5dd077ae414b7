/*
 * tune_use.h - the tuned choices a context uses (src/ops/tune_use.c): one
 * table per (device, driver, platform, device class, host BLAS), kept in
 * the kernel cache as "tuned-<key>.json" (ops/tune_file.h), read on the
 * first matrix product, and consulted by ct_gemm for each shape. The
 * CLBlast parameters it holds are handed to CLBlast when it is read.
 * CLTRAIN_TUNE=off uses none (the built-in rules).
 */
#ifndef CT_OPS_TUNE_USE_H
#define CT_OPS_TUNE_USE_H

#include <stdint.h>

#include "cl/runtime.h"
#include "ops/tune_file.h"

/* This context's identity as a table records it (device, driver,
 * platform, class, host BLAS); the rest of d zeroed. */
void ct_tune_identity(const ct_context *ctx, ct_tune_device *d);
/* Whether d was made on ctx's device, driver and class; *why says what
 * differs when not. */
int ct_tune_matches(const ct_context *ctx, const ct_tune_device *d, char *why, size_t cap);
/* The cache file of ctx's table (malloc'd), NULL when the cache is off. */
char *ct_tune_path(const ct_context *ctx);

/* The table in use (NULL: none, the cache off, or CLTRAIN_TUNE=off). */
const ct_tune_device *ct_tune_table(ct_context *ctx);
/* The entry for a shape in the table in use, or NULL. */
const ct_tune_gemm *ct_tune_lookup(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k);
/* The entry for an implicit-GEMM convolution's product (conv: 1 forward,
 * 2 input gradient, 3 weight gradient; C (m, n) over k), or NULL. */
const ct_tune_gemm *ct_tune_lookup_conv(ct_context *ctx, int conv, size_t m, size_t n, size_t k);
/* What a product runs by the tuner's word: the pick the tuner forces
 * while it measures (ctx->gemm_force), where that is `a` or `b`, the two
 * the caller runs; else the table's entry for the shape (conv 0: ct_gemm's
 * products, 1-3: the implicit-GEMM convolution's); else pick
 * CT_PICK_NONE, and the caller's own rule decides. tiles and splits go
 * with an own-kernel pick. */
typedef struct ct_tune_choice {
    int pick, tiles;
    size_t splits;
} ct_tune_choice;
ct_tune_choice ct_tune_choose(ct_context *ctx, int conv, int ta, int tb, size_t m, size_t n, size_t k, int a,
                              int b);
/* Forgets the table read, so the next lookup reads the cache again. */
void ct_tune_forget(ct_context *ctx);

/* Reads ctx's table from the cache into *d (zeroed and *found = 0 when
 * there is none; a file that does not parse is reported and treated as
 * none). */
int ct_tune_read(ct_context *ctx, ct_tune_device *d, int *found);
/* Merges d into the cache's table under an exclusive lock on
 * "tuned-<key>.lock", then writes it to a temporary file and renames it,
 * so two processes tuning at once each add their shapes and a reader
 * never sees a partial file. replace: write d as it is instead. */
int ct_tune_write(ct_context *ctx, const ct_tune_device *d, int replace);

/* Hands a table's CLBlast parameters to CLBlast for ctx's device. */
int ct_tune_apply_clblast(ct_context *ctx, const ct_tune_device *d);

#endif /* CT_OPS_TUNE_USE_H */
