/*
 * cltrain/context.h - a context: one OpenCL device, its queue, its compiled
 * kernel programs (built from the embedded .cl sources, cached on disk) and
 * its last error.
 *
 * A context is used from one thread at a time. Data-parallel training makes
 * one context per device, so devices of different platforms work together.
 */
#ifndef CLTRAIN_CONTEXT_H
#define CLTRAIN_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "cltrain/common.h"
#include "cltrain/device.h"
#include "cltrain/opencl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ct_context ct_context;

enum ct_log_level { CT_LOG_ERROR = 0, CT_LOG_WARN = 1, CT_LOG_INFO = 2, CT_LOG_DEBUG = 3 };
typedef void (*ct_log_fn)(void *user, int level, const char *message);

enum ct_cache_mode {
    CT_CACHE_AUTO = 0,  /* on, unless CLTRAIN_CACHE=off */
    CT_CACHE_ON = 1,
    CT_CACHE_OFF = 2,
};

/* The device class: which implementation every op uses on a context. The
 * CPU class runs the host BLAS, the direct host convolution, the host max
 * pool and per-row kernels; the GPU class runs CLBlast and work-group
 * kernels, with nothing on the host inside a training step. AUTO decides by
 * CL_DEVICE_TYPE (never by shared host memory: integrated GPUs are GPUs);
 * CLTRAIN_KERNELS=cpu|gpu overrides. */
typedef enum ct_kernels {
    CT_KERNELS_AUTO = 0,
    CT_KERNELS_CPU = 1,
    CT_KERNELS_GPU = 2,
} ct_kernels;

/* How matrix products run (ct_gemm): CLBlast on the device, or the host's
 * BLAS on mapped buffers (devices sharing host memory). AUTO: the host on
 * the CPU class, CLBlast on the GPU class; CLTRAIN_GEMM overrides within the
 * class. */
typedef enum ct_gemm_path {
    CT_GEMM_AUTO = 0,
    CT_GEMM_CLBLAST = 1,
    CT_GEMM_HOST = 2,
} ct_gemm_path;

typedef struct ct_context_options {
    const char *device;     /* a selector (ct_device_select) naming one device; NULL: CLTRAIN_DEVICE, else best */
    const char *cache_dir;  /* NULL: CLTRAIN_CACHE_DIR, else $XDG_CACHE_HOME/cltrain, else ~/.cache/cltrain */
    const char *kernel_dir; /* NULL: CLTRAIN_KERNEL_DIR; .cl files there replace the embedded ones */
    const char *build_options; /* extra OpenCL compiler options, appended to "-cl-std=CL1.2" */
    int cache;              /* enum ct_cache_mode */
    int lazy_kernels;       /* build each program at its first use instead of at creation */
    int profiling;          /* create the queue with CL_QUEUE_PROFILING_ENABLE */
    ct_log_fn log;          /* NULL: messages are dropped (the library never prints) */
    void *log_user;
    int log_level;          /* messages above this level are dropped; default CT_LOG_WARN */
    int kernels;            /* enum ct_kernels; AUTO: CLTRAIN_KERNELS, else by the device type */
} ct_context_options;

CT_API void ct_context_defaults(ct_context_options *options);

/* Creates a context on the selected device. Unless options->lazy_kernels is
 * set, every kernel program is built (or loaded from the cache) here, so a
 * compiler error surfaces at once (the matrix products' 16-bit variants at
 * their first use, or with ct_context_build_all). On failure *ctx is NULL and
 * ct_last_error() says why. */
CT_API int ct_context_create(const ct_context_options *options, ct_context **ctx);
CT_API void ct_context_free(ct_context **ctx);

/* The last error raised through this context, or "" if none. */
CT_API const char *ct_context_last_error(const ct_context *ctx);

CT_API const ct_device_info *ct_context_device(const ct_context *ctx);
CT_API cl_context ct_context_cl(const ct_context *ctx);
CT_API cl_command_queue ct_context_queue(const ct_context *ctx);

/* The device class a context uses (CT_KERNELS_CPU or CT_KERNELS_GPU), and a
 * way to change it (the GEMM path is kept where the new class allows it). */
CT_API ct_kernels ct_context_kernels(const ct_context *ctx);
CT_API int ct_context_set_kernels(ct_context *ctx, ct_kernels kernels);
CT_API const char *ct_kernels_str(ct_kernels kernels);
/* The precision of matrix products' operands: float32, or bf16 (the
 * operands rounded to bf16, to nearest even; every product exact and the
 * sums in float32, as PyTorch's bf16 autocast does), through AVX512_BF16's
 * dot products where the CPU has them; or fp16 (the operands rounded to
 * IEEE half, to nearest even, past 65504 to Inf: products exact, sums
 * float32, no faster on CPUs without half arithmetic). Both run on the CPU class with the
 * host GEMM on a CPU with AVX-512 (CT_ERR_UNSUPPORTED elsewhere, naming
 * what is missing). Direct host convolutions stay float32. */
typedef enum ct_precision { CT_PRECISION_FP32 = 0, CT_PRECISION_BF16 = 1, CT_PRECISION_FP16 = 2 } ct_precision;
CT_API int ct_context_set_precision(ct_context *ctx, ct_precision precision);
CT_API ct_precision ct_context_precision(const ct_context *ctx);
CT_API const char *ct_precision_str(ct_precision precision);
/* The class and GEMM path a context on `dev` would use, with the
 * environment's overrides (CLTRAIN_KERNELS, CLTRAIN_GEMM) applied. */
CT_API int ct_device_class(const ct_device_info *dev, ct_kernels *kernels, ct_gemm_path *gemm);

/* What the host asked of the device since the context was made: kernel
 * launches (a CLBlast routine counts as one), blocking calls (clFinish,
 * blocking reads, writes and maps, waits on events that had not completed)
 * and bytes copied host to device and device to host. */
typedef struct ct_counters {
    uint64_t launches;
    uint64_t blocking_calls;
    uint64_t h2d_bytes;
    uint64_t d2h_bytes;
} ct_counters;
CT_API void ct_context_counters(const ct_context *ctx, ct_counters *counters);

/* Waits until every command queued on the context has finished. */
CT_API int ct_context_finish(ct_context *ctx);

/* How one kernel program came to be ready. */
typedef enum ct_program_origin {
    CT_PROGRAM_NOT_BUILT = 0,
    CT_PROGRAM_CACHE_HIT = 1,      /* loaded from a cached binary */
    CT_PROGRAM_COMPILED = 2,       /* compiled from source: cache miss, or cache off */
    CT_PROGRAM_CACHE_REJECTED = 3, /* a cached file was corrupt, truncated or foreign; recompiled */
} ct_program_origin;

typedef struct ct_program_info {
    const char *name;        /* the .cl file's base name: "eltwise" for cl_kernels/eltwise.cl */
    ct_program_origin origin;
    double build_seconds;    /* wall time of the build or cache load */
    size_t source_bytes;     /* prelude + common.cl + the program's own source */
    int from_kernel_dir;     /* the source came from CLTRAIN_KERNEL_DIR */
    char cache_key[65];      /* hex SHA-256 of the cache key material; "" if the cache is off */
} ct_program_info;

/* The number of kernel programs the library holds (those of cl_kernels/,
 * then the 16-bit variants of the matrix products': gemm_bf16, ...). */
CT_API size_t ct_program_count(void);

/* Builds every program not yet built. */
CT_API int ct_context_build_all(ct_context *ctx);

/* How program `index` (0 .. ct_program_count()-1) was built in this context. */
CT_API int ct_context_program_info(const ct_context *ctx, size_t index, ct_program_info *info);

/* The directory the binary cache uses, or NULL when the cache is off. */
CT_API const char *ct_context_cache_dir(const ct_context *ctx);

/* Device buffers. Offsets and sizes are in bytes. */
CT_API int ct_buffer_create(ct_context *ctx, size_t bytes, cl_mem *buffer);
CT_API void ct_buffer_release(cl_mem *buffer);
CT_API int ct_buffer_write(ct_context *ctx, cl_mem buffer, size_t offset, size_t bytes, const void *src);
CT_API int ct_buffer_read(ct_context *ctx, cl_mem buffer, size_t offset, size_t bytes, void *dst);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_CONTEXT_H */
