/*
 * tune_measure.h - one GEMM shape on random operands, run by one candidate
 * (the built-in rule, CLBlast, cltrain's own SGEMM with given tiles and
 * k-slices, the AVX-512 or the BLAS host GEMM): its output checked, then
 * timed (src/train/tune_measure.c).
 */
#ifndef CT_TRAIN_TUNE_MEASURE_H
#define CT_TRAIN_TUNE_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "cl/runtime.h"

typedef struct tm_shape {
    int ta, tb;
    size_t m, n, k;
    double count; /* products of this shape per training step, over the models tuned */
    int conv;     /* 0: ct_gemm; 1, 2, 3: an implicit-GEMM convolution's forward, input
                     gradient, weight gradient, of geometry geom (ct_launch_rec's conv_geom) */
    int geom[15];
    int rule_tiles;      /* convolutions: what the built-in rule runs */
    size_t rule_splits;
} tm_shape;

typedef struct tm_choice {
    int pick;   /* ct_tune_pick; CT_PICK_NONE: the built-in rule */
    int tiles;  /* own: 0 big, 1 small */
    size_t splits;
} tm_choice;

/* The operands of one shape on the device and their host copies */
typedef struct tm_bufs {
    cl_mem a, b, c, d;
    float *ha, *hb, *hc0, *hc, *hd; /* convolutions: a, b, d hold x, w, dy */
    size_t lda, ldb, ldc, c_off, nc; /* C at c_off in a buffer of nc floats (guards around it) */
    size_t *samples;                 /* entries of C checked against the float64 reference */
    double *ref0, *ref5, *tol0, *tol5; /* per sample: beta 0 and beta 0.5 */
    size_t nsamples;
} tm_bufs;

int tm_alloc(ct_context *ctx, const tm_shape *s, uint64_t seed, tm_bufs *b);
void tm_free(tm_bufs *b);

/* Runs choice c on the shape: with beta 0 and beta 0.5, every entry of C
 * must be finite, the sampled ones within tolerance of the reference, the
 * guards untouched (else *ok = 0 and why says what went wrong); then timed
 * over at least min_seconds, the median per product in *ms; a candidate
 * whose first timed run takes over cutoff_ms (0: no cutoff) is not timed
 * further, that run's time in *ms (it cannot win). A candidate
 * the device or CLBlast refuses is a failed candidate, not an error: the
 * return value is not CT_OK only for errors that stop the tuner. */
int tm_measure(ct_context *ctx, const tm_shape *s, tm_bufs *b, const tm_choice *c, double min_seconds,
               double cutoff_ms, double *ms, int *ok, char *why, size_t cap);

#endif /* CT_TRAIN_TUNE_MEASURE_H */
