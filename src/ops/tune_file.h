/*
 * tune_file.h - tuned choices as JSON (src/ops/tune_file.c): the cache's
 * "tuned-<key>.json" for one device, and `cltrain tune --export` files that
 * hold one or more. Each device entry names its device, driver, platform and
 * device class, and holds the per-shape GEMM choices, the CLBlast GEMM
 * parameters chosen for the device (if any), and in exports the verdicts
 * of the kernels verified there.
 *
 *   {"format": "cltrain-tune", "version": 1, "devices": [{
 *      "device": "...", "driver": "...", "platform": "...", "class": "gpu",
 *      "host_blas": "...", "tuned": 1790000000, "models": ["resnet56@128"],
 *      "clblast": {"Xgemm": {"MWG": 64, ...}, "XgemmDirect": {...},
 *                  "GemmRoutine": {"XGEMM_MIN_INDIRECT_SIZE": 384}},
 *      "clblast_checked": true,
 *      "gemm": [{"ta": 0, "tb": 1, "m": 16, "n": 144, "k": 52224, ("conv": "dw",)
 *                "pick": "own", "tiles": "big", "splits": 64,
 *                "ms": 1.2, "default_ms": 3.4, "checked": true}],
 *      "verdicts": {"passed": ["dense", "optim"], "failed": "", "since": 1790000000}}]}
 */
#ifndef CT_OPS_TUNE_FILE_H
#define CT_OPS_TUNE_FILE_H

#include <stddef.h>
#include <stdint.h>

#define CT_TUNE_FORMAT "cltrain-tune"
#define CT_TUNE_VERSION 1
#define CT_TUNE_MAX_PARAMS 24   /* CLBlast parameters per kernel */
#define CT_TUNE_MAX_GEMM 4096   /* shapes per device */
#define CT_TUNE_MAX_DEVICES 64
#define CT_TUNE_MAX_MODELS 64

/* Which implementation runs a shape */
typedef enum ct_tune_pick {
    CT_PICK_NONE = 0, /* the built-in rule */
    CT_PICK_CLBLAST,  /* CLBlast (with the device's tuned parameters, if any) */
    CT_PICK_OWN,      /* cltrain's own SGEMM (ops/gemm_cl.h) with tiles and k-slices */
    CT_PICK_AVX512,   /* CPU class: cltrain's AVX-512 SGEMM (host/gemm512.h) */
    CT_PICK_BLAS,     /* CPU class: the host's CBLAS */
} ct_tune_pick;

const char *ct_tune_pick_str(ct_tune_pick p);

/* One GEMM shape's choice: row-major C (m, n) = op(A) op(B), depth k */
typedef struct ct_tune_gemm {
    int conv;           /* 0: a product of ct_gemm; 1, 2, 3: an implicit-GEMM convolution's
                           forward, input gradient, weight gradient (ops/conv_igemm.c) */
    int ta, tb;
    uint32_t m, n, k;
    int geom[15];       /* a convolution's n, c_in, h, w, c_out, kh, kw, strides, pads, dilations,
                           oh, ow (to check its pick on first use) */
    ct_tune_pick pick;
    int tiles;          /* CT_PICK_OWN: ct_gemm_cl_tiles (0 big, 1 small, 2 narrow: convolutions, 3 huge: products) */
    uint32_t splits;    /* CT_PICK_OWN: k-slices */
    double ms, default_ms; /* measured: the pick's and the built-in rule's */
    int checked;        /* 0: imported, its output not checked here yet */
} ct_tune_gemm;

/* One CLBlast kernel's parameters (CLBlastOverrideParameters) */
typedef struct ct_tune_params {
    char kernel[24];    /* "Xgemm", "XgemmDirect", "GemmRoutine" */
    int n;
    char names[CT_TUNE_MAX_PARAMS][32];
    uint32_t values[CT_TUNE_MAX_PARAMS];
} ct_tune_params;

typedef struct ct_tune_device {
    char device[256], driver[128], platform[256], cls[8], host_blas[128];
    int64_t tuned;      /* unix time of the last change */
    char (*models)[96]; /* "name@batch" tuned so far */
    size_t nmodels;
    ct_tune_params clblast[3];
    int nclblast;
    int clblast_checked;
    ct_tune_gemm *gemm;
    size_t ngemm;
    /* exports only: kernels verified on the device */
    int has_verdicts;
    char verdicts_passed[512];  /* comma-separated families */
    char verdicts_failed[32];
    int64_t verdicts_since;
} ct_tune_device;

typedef struct ct_tune_file {
    ct_tune_device *dev;
    size_t n;
} ct_tune_file;

/* Parses a tune file (text of n bytes, not NUL-terminated). On error,
 * CT_ERR_CORRUPT with what and where in err (the file is freed). */
int ct_tune_file_parse(const char *text, size_t n, ct_tune_file *out, char *err, size_t errcap);
/* The JSON text of f (malloc'd, NUL-terminated), NULL when out of memory. */
char *ct_tune_file_format(const ct_tune_file *f);
void ct_tune_file_free(ct_tune_file *f);
void ct_tune_device_free(ct_tune_device *d);
/* Deep copy of src into dst (dst's old contents are not freed). */
int ct_tune_device_copy(ct_tune_device *dst, const ct_tune_device *src);

/* The entry for a shape, or NULL */
const ct_tune_gemm *ct_tune_device_find(const ct_tune_device *d, int conv, int ta, int tb, size_t m, size_t n,
                                        size_t k);
/* Adds or replaces the entry for g's shape; CT_ERR_NO_MEMORY or, past
 * CT_TUNE_MAX_GEMM, CT_ERR_INVALID_ARG. */
int ct_tune_device_put(ct_tune_device *d, const ct_tune_gemm *g);
/* Adds "name@batch" to the models tuned, once. */
int ct_tune_device_add_model(ct_tune_device *d, const char *model);
int ct_tune_device_has_model(const ct_tune_device *d, const char *model);
/* Everything of src's that dst lacks or that src measured later: shapes
 * (src's replace dst's), models, and src's CLBlast parameters if it has
 * any. */
int ct_tune_device_merge(ct_tune_device *dst, const ct_tune_device *src);

#endif /* CT_OPS_TUNE_FILE_H */
