/*
 * runtime.h - the context behind the public handle, the kernel program
 * registry (one program per cl_kernels/<name>.cl, each built together with
 * a generated prelude and common.cl) and kernel launch helpers.
 */
#ifndef CT_CL_RUNTIME_H
#define CT_CL_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "cltrain/context.h"
#include "cltrain/device.h"
#include "cltrain/gemm.h"
#include "cltrain/opencl.h"
#include "cl/devclass.h"
#include "core/error.h"
#include "core/util.h"
#include "kernel_list.h" /* generated: #define CT_PROGRAMS(X) X(fill) X(...) */

/* Programs built from another program's source, at their first use only:
 * (variant, base, CT_OPS16, CT_ACT16). CT_OPS16 (1 bf16, 2 fp16) gives a
 * product's program 16-bit matrix operands: its kernels round each operand
 * they load to the format and sum in float32. CT_ACT16 (same codes) gives
 * a program 16-bit activation storage: the arguments its kernels type
 * ct_at (common.cl) hold activations or their gradients as bf16 or fp16
 * bit patterns, loaded to float and rounded to nearest even when stored;
 * parameters, reductions and scratch stay float32 (ct_program_store). */
#define CT_PROGRAM_VARIANTS(X)                                                                    \
    X(gemm_bf16, gemm, 1, 0) X(gemm_fp16, gemm, 2, 0) X(gemm_reg_bf16, gemm_reg, 1, 0)            \
    X(gemm_reg_fp16, gemm_reg, 2, 0) X(conv_igemm_bf16, conv_igemm, 1, 0)                         \
    X(conv_igemm_fp16, conv_igemm, 2, 0) X(act_sbf16, act, 0, 1) X(act_sfp16, act, 0, 2)          \
    X(eltwise_sbf16, eltwise, 0, 1) X(eltwise_sfp16, eltwise, 0, 2)                              \
    X(batchnorm_sbf16, batchnorm, 0, 1) X(batchnorm_sfp16, batchnorm, 0, 2)                      \
    X(conv_igemm_sbf16, conv_igemm, 1, 1) X(conv_igemm_sfp16, conv_igemm, 2, 2)                  \
    X(shortcut_sbf16, shortcut, 0, 1) X(shortcut_sfp16, shortcut, 0, 2)                          \
    X(pool_sbf16, pool, 0, 1) X(pool_sfp16, pool, 0, 2)                                          \
    X(loss_sbf16, loss, 0, 1) X(loss_sfp16, loss, 0, 2)                                          \
    X(dropout_sbf16, dropout, 0, 1) X(dropout_sfp16, dropout, 0, 2)                              \
    X(gemm_sbf16, gemm, 1, 1) X(gemm_sfp16, gemm, 2, 2)                                          \
    X(gemm_reg_sbf16, gemm_reg, 1, 1) X(gemm_reg_sfp16, gemm_reg, 2, 2)                          \
    X(splitk_sbf16, splitk, 0, 1) X(splitk_sfp16, splitk, 0, 2)                                  \
    X(layernorm_sbf16, layernorm, 0, 1) X(layernorm_sfp16, layernorm, 0, 2)                      \
    X(embedding_sbf16, embedding, 0, 1) X(embedding_sfp16, embedding, 0, 2)                      \
    X(posembed_sbf16, posembed, 0, 1) X(posembed_sfp16, posembed, 0, 2)                          \
    X(dense_sbf16, dense, 0, 1) X(dense_sfp16, dense, 0, 2)                                      \
    X(attention_sbf16, attention, 0, 1) X(attention_sfp16, attention, 0, 2)

enum ct_program_id {
#define CT_X(name) CT_PROG_##name,
    CT_PROGRAMS(CT_X)
#undef CT_X
    CT_PROG_BASE_COUNT, /* the programs of cl_kernels/, then their variants */
    CT_PROG_VARIANTS_ = CT_PROG_BASE_COUNT - 1, /* so that the first variant is CT_PROG_BASE_COUNT */
#define CT_V(name, base, ops16, act16) CT_PROG_##name,
    CT_PROGRAM_VARIANTS(CT_V)
#undef CT_V
    CT_PROG_COUNT
};

/* Bumped whenever the cache file layout or the way keys are made changes. */
#define CT_CACHE_FORMAT_VERSION 1u

/* State an upper floor keeps per context (the host thread pool and
 * scratch of src/host/host_work.c): the floor owns one static ct_ext_kind,
 * whose address is the key, and ct_context_free calls its release hook, so
 * the context never calls up the floors. */
typedef struct ct_ext_kind {
    const char *name;               /* for messages */
    void (*release)(void *state);   /* frees what ct_context_ext_set attached */
} ct_ext_kind;

#define CT_CONTEXT_EXTS 6
#define CT_HELD_MAX 32

/* One launch as the per-launch accounting lists it (bench --profile --json,
 * "launch_list"): a kernel, or a matrix product (kernel NULL, m n k set). */
typedef struct ct_launch_rec {
    const char *layer;    /* the layer running (ct_launch_layer), or NULL */
    const char *kernel;   /* kernel name; NULL for a GEMM */
    size_t global, local; /* work-items in all and per work-group */
    int64_t rd, wr;       /* bytes the launch reads and writes; -1: not stated */
    size_t m, n, k, batch, k_splits; /* a GEMM: C (m, n), depth k, products, k-slices */
    int ta, tb;           /* a GEMM: A, B transposed */
    int conv;             /* a GEMM that is an implicit-GEMM convolution (ops/conv_igemm.c):
                             1 forward, 2 input gradient, 3 weight gradient */
    int conv_geom[15];    /* its n, c_in, h, w, c_out, kh, kw, strides, pads, dilations, oh, ow */
    int tiles;            /* an own kernel's product: the ct_gemm_cl_tiles it ran */
} ct_launch_rec;

typedef struct ct_kernel_entry {
    char *name;
    int prog;
    cl_kernel kernel;
    size_t max_wg;  /* CL_KERNEL_WORK_GROUP_SIZE */
} ct_kernel_entry;

/* One kernel's time while kernel timing is on (name: a string that
 * outlives the context, as kernel names and CLBlast routines' are) */
typedef struct ct_kernel_time {
    const char *name;
    uint64_t launches;
    double seconds;
} ct_kernel_time;

struct ct_context {
    ct_device_info dev;
    cl_context cl;
    cl_command_queue queue;
    cl_command_queue transfer; /* uploads that overlap the compute queue's work */
    cl_device_id device;

    cl_program programs[CT_PROG_COUNT];
    ct_program_info pinfo[CT_PROG_COUNT];
    char *prelude;          /* generated #defines */
    char build_options[512];

    ct_kernel_entry *kernels; /* open-addressing table keyed by (prog, name) */
    size_t kernel_cap;
    size_t kernel_count;

    char *cache_dir;        /* NULL when the cache is off */
    char *kernel_dir;       /* CLTRAIN_KERNEL_DIR, or NULL */
    int cache_warned;

    ct_log_fn log;
    void *log_user;
    int log_level;

    ct_devclass cls;        /* which implementation every op uses (cl/devclass.c) */
    ct_counters count;      /* launches, blocking calls and bytes moved (ct_context_counters) */
    cl_mem ones;            /* a vector of ones for sums by GEMM (ct_ones) */
    cl_mem gemm_tmp;        /* CLBlast's temporary for padded operands (ops/gemm.c) */
    size_t gemm_tmp_bytes;
    size_t gemm_index_limit; /* the last element a CLBlast operand may reach; 0: 2^31 - 1
                                (tests lower it to reach the rebasing path) */
    int conv_direct;        /* direct convolutions allowed (CLTRAIN_CONV: 0 im2col, 1 auto,
                               2 lane: the GPU class's lane kernels on any device) */
    int precision;          /* ct_precision: the operands of matrix products */
    int act16;              /* ct_precision of activation storage (ct_context_set_act16) */
    char act16_why[192];    /* why ct_net_choose_storage kept float32 at 16-bit precision */
    ct_gemm_path gemm_asked; /* the GEMM path asked for (CLTRAIN_GEMM, ct_gemm_set_path);
                                AUTO: the class's own */
    size_t ones_n;
    /* A choice every matrix product takes, over the tuned table and the
     * built-in rules (the tuner measures candidates with it; ops/gemm.c):
     * pick a ct_tune_pick (0: none), tiles and splits for cltrain's own
     * SGEMM. */
    struct {
        int pick, tiles;
        size_t splits;
    } gemm_force;
    int tune_bypass;        /* > 0: the tuned table is not used (the tuner measures the rules) */
    struct {
        const ct_ext_kind *kind; /* NULL: a free slot */
        void *state;
    } ext[CT_CONTEXT_EXTS];  /* upper floors' state (ct_context_ext) */

    /* Buffers whose host mappings persist from one host op to the next
     * (the CPU class's net arenas: ct_hold_register); any other command on
     * the queue first unmaps them (ct_hold_release), so a kernel never runs
     * on a mapped buffer. */
    struct {
        cl_mem mem;
        size_t bytes;
        void *ptr; /* NULL: not mapped now */
    } held[CT_HELD_MAX];
    int nheld;
    int nheld_mapped;

    /* Per-launch accounting: the bytes the next launch touches as its
     * launcher states them (ct_launch_bytes), and while recording is on, one
     * record per launch (ct_launch_record). */
    struct {
        int64_t rd, wr;      /* -1: not stated */
        const char *layer;
        int on;
        int mute;            /* > 0: launches inside one recorded product, not listed */
        ct_launch_rec *recs;
        size_t n, cap;
    } lrec;

    /* Kernel timing (ct_ktime_start): while on, every launch waits for its
     * end and adds its time to its name's entry; queue_profiling: the queue
     * gives event times (CL_QUEUE_PROFILING_ENABLE), else the host clock
     * times each launch from enqueue to end. */
    int queue_profiling;
    int live;               /* counted among the live contexts (cl/context.c) */
    struct {
        int on;
        ct_kernel_time *t;
        size_t n, cap;
    } ktime;

    char last_error[CT_ERROR_MAX];
};

void ct_log(struct ct_context *ctx, int level, const char *fmt, ...) CT_PRINTF(3, 4);

/* The state attached for `kind`, or NULL. */
void *ct_context_ext(const struct ct_context *ctx, const ct_ext_kind *kind);
/* Attaches `state` for `kind` (NULL: detaches); what was attached before is
 * the caller's to free. CT_ERR_INTERNAL when every slot is taken. */
int ct_context_ext_set(struct ct_context *ctx, const ct_ext_kind *kind, void *state);

/* src/cl/devclass.c: the class from CLTRAIN_KERNELS / CLTRAIN_GEMM /
 * CLTRAIN_CONV, with `wish` (not AUTO) over CLTRAIN_KERNELS. */
int ct_devclass_init(struct ct_context *ctx, ct_kernels wish);

/* Counting what a step costs the host (see ct_counters). */
static inline void ct_count_blocking(struct ct_context *ctx)
{
    ctx->count.blocking_calls++;
}

static inline void ct_count_h2d(struct ct_context *ctx, size_t bytes)
{
    ctx->count.h2d_bytes += bytes;
}

/* Held host mappings (the table in struct ct_context). Registering does
 * nothing outside the CPU class's host-op contexts (host_pool) or when the
 * table is full: the buffer is then mapped and unmapped per op as before. */
void ct_hold_register(struct ct_context *ctx, cl_mem mem);
/* Unmaps mem if held and forgets it: before releasing it. */
int ct_hold_forget(struct ct_context *ctx, cl_mem mem);
/* The table's index of mem, or -1. */
int ct_hold_index(const struct ct_context *ctx, cl_mem mem);
/* Unmaps every held mapping (not blocking: enqueued before what the caller
 * enqueues next). Every enqueue other than a host op's map calls it. */
int ct_hold_release(struct ct_context *ctx);
static inline int ct_hold_sync(struct ct_context *ctx)
{
    return ctx->nheld_mapped ? ct_hold_release(ctx) : 0;
}

/* Waits for an event; counted as a blocking call only when the event had
 * not completed yet (the host actually waited for the device). */
int ct_event_wait(struct ct_context *ctx, cl_event ev, const char *what);

/* src/cl/device.c: fills one device's record. */
int ct_device_query(cl_platform_id platform, cl_device_id device, unsigned p, unsigned d,
                    ct_device_info *info);

/* src/cl/program.c */
extern const char *const ct_program_names[CT_PROG_COUNT];
/* The program that runs base's kernels at the context's precision (its
 * 16-bit variant, or base itself in float32 or where it has none); with
 * 16-bit activation storage its storage variant where it has one. */
int ct_program_for(const struct ct_context *ctx, int base);
/* The program that runs base's kernels with the context's activation
 * storage (ct_context_set_act16): its CT_ACT16 variant, or base itself
 * in float32. -1 where base has no such variant (the caller refuses). */
int ct_program_store(const struct ct_context *ctx, int base);
/* src/cl/context.c: activations and their gradients stored as ct_precision
 * act16 (bf16, fp16; FP32: float) by every op called on ctx: the ops take
 * their programs through ct_program_store and refuse where they have no
 * 16-bit form. GPU class only (its kernels; the CPU class's host loops and
 * chunk kernels read floats), with the products on the device (the host
 * BLAS reads floats). Parameters, their gradients and the
 * optimizer's state stay float32. */
int ct_context_set_act16(struct ct_context *ctx, int act16);

/* Bytes per stored activation: 2 with 16-bit storage, else 4. */
static inline size_t ct_act_size(const struct ct_context *ctx)
{
    return ctx->act16 ? 2 : 4;
}
int ct_program_get(struct ct_context *ctx, int prog, cl_program *out);
/* A digest of every program's source as this context would build it
 * (disk kernels included), its build options and the device and driver. */
int ct_sources_digest(struct ct_context *ctx, uint8_t out[32]);
void ct_programs_release(struct ct_context *ctx);
char *ct_prelude_make(const ct_device_info *dev);

/* src/cl/cache.c: the on-disk binary cache. The digest names the file. */
int ct_cache_setup(struct ct_context *ctx, const char *dir, int mode);
/* Returns a malloc'd payload of *size bytes, or NULL on a miss; *rejected is
 * set when a file existed but could not be trusted. */
uint8_t *ct_cache_load(struct ct_context *ctx, const char *prog, const uint8_t key[32],
                       size_t *size, int *rejected);
void ct_cache_store(struct ct_context *ctx, const char *prog, const uint8_t key[32],
                    const uint8_t *payload, size_t size);
/* The path of a program's cache file (for tests and messages); malloc'd. */
char *ct_cache_path(const struct ct_context *ctx, const char *prog, const uint8_t key[32]);

/* Kernel lookup, launching. */
typedef struct ct_karg {
    size_t size;
    const void *ptr; /* NULL: `size` bytes of local memory */
} ct_karg;

#define CT_ARG(x) ((ct_karg){ sizeof(x), &(x) })
#define CT_LOCAL(bytes) ((ct_karg){ (bytes), NULL })

int ct_kernel_get(struct ct_context *ctx, int prog, const char *name, ct_kernel_entry **out);

/* The work-group size for a tree reduction: the largest power of two no
 * larger than the kernel's limit, `cap` and `want` (0: no wish). It depends
 * on the device and kernel only, so the summation order is fixed. */
int ct_kernel_pow2_wg(struct ct_context *ctx, int prog, const char *name, size_t cap, size_t want,
                      size_t *wg);

/* Launches kernel `name` of program `prog` over `global` work-items in
 * `dims` dimensions. Global sizes are rounded up to a multiple of the local
 * size, so every kernel guards its index against the true extent it is
 * passed. local == NULL picks a local size for the device. */
int ct_run(struct ct_context *ctx, int prog, const char *name, unsigned dims,
           const size_t *global, const size_t *local, size_t nargs, const ct_karg *args);

#define CT_RUN(ctx, prog, name, dims, global, local, ...)                                       \
    ct_run((ctx), (prog), (name), (dims), (global), (local),                                    \
           sizeof((ct_karg[]){ __VA_ARGS__ }) / sizeof(ct_karg), (ct_karg[]){ __VA_ARGS__ })

/* The bytes the next launch (CT_RUN or a GEMM) reads and writes, as the
 * launcher counts what its kernel touches: each tensor's elements once. A
 * launch with no statement is listed with -1. */
static inline void ct_launch_bytes(struct ct_context *ctx, size_t rd, size_t wr)
{
    ctx->lrec.rd = (int64_t)rd;
    ctx->lrec.wr = (int64_t)wr;
}

/* Names the layer whose launches follow (NULL: none), for the records. */
static inline void ct_launch_layer(struct ct_context *ctx, const char *layer)
{
    ctx->lrec.layer = layer;
}

/* Appends one record while recording is on (filling in the layer and the
 * stated bytes when r has none), and clears the statement either way. */
void ct_launch_record(struct ct_context *ctx, const ct_launch_rec *r);
/* Starts (on = 1: drops earlier records) or stops recording. */
int ct_launch_recording(struct ct_context *ctx, int on);

/* Kernel timing: start (drops earlier entries) and stop; ct_ktime_end
 * times a launch made outside ct_run (a CLBlast routine) from t0, the
 * ct_now() before it was enqueued, to the queue's end. */
void ct_ktime_start(struct ct_context *ctx);
void ct_ktime_stop(struct ct_context *ctx);
int ct_ktime_end(struct ct_context *ctx, const char *name, double t0);

/* Turns an OpenCL error into a context error naming what failed. */
int ct_cl_fail(struct ct_context *ctx, cl_int err, const char *what);

#endif /* CT_CL_RUNTIME_H */
