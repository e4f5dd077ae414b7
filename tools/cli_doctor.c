/*
 * cli_doctor.c - `cltrain doctor`: what stands between this machine and
 * training on its devices. The OpenCL ICD loader in use and any other on
 * the usual paths, the ICD files and whether the library each names is
 * there, every platform and device, for the selected device the class and
 * GEMM path and why, which op families have verdicts in the kernel cache
 * (ct_verify, CT_VERIFY_READ: nothing is checked), the cache's place and
 * size, and a short measurement of GEMM GFLOP/s and copy GB/s beside the
 * device's nominal figures where they are known. Each problem line says
 * what to do; the exit status is 1 when there is one.
 */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cltrain/opencl.h>

#include "cli.h"

#define MAX_PROBLEMS 32

typedef struct doctor {
    int json;
    char problems[MAX_PROBLEMS][768];
    int nproblems;
} doctor;

static void problem(doctor *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(doctor *d, const char *fmt, ...)
{
    if (d->nproblems >= MAX_PROBLEMS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->problems[d->nproblems++], sizeof d->problems[0], fmt, ap);
    va_end(ap);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The ICD loader: the file clGetPlatformIDs came from, and any other
 * libOpenCL.so.1 on the usual paths (two loaders: the one a program gets
 * depends on its library path). */
static void loaders(doctor *d, char *loaded, size_t cap)
{
    Dl_info info;
    loaded[0] = '\0';
    char real[PATH_MAX];
    if (dladdr((void *)(uintptr_t)clGetPlatformIDs, &info) && info.dli_fname)
        snprintf(loaded, cap, "%s", realpath(info.dli_fname, real) ? real : info.dli_fname);
    static const char *const places[] = {
        "/usr/lib/x86_64-linux-gnu/libOpenCL.so.1", "/usr/lib64/libOpenCL.so.1", "/usr/lib/libOpenCL.so.1",
        "/usr/local/lib/libOpenCL.so.1", "/usr/local/cuda/lib64/libOpenCL.so.1", "/opt/rocm/lib/libOpenCL.so.1",
        "/opt/intel/oneapi/lib/libOpenCL.so.1", "/usr/lib/aarch64-linux-gnu/libOpenCL.so.1",
    };
    if (!d->json)
        printf("OpenCL ICD loader: %s\n", loaded[0] ? loaded : "(not found)");
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
        if (!realpath(places[i], real) || !strcmp(real, loaded))
            continue;
        const char *pre = getenv("LD_PRELOAD");
        if (pre && loaded[0] && strstr(pre, strrchr(loaded, '/') ? strrchr(loaded, '/') + 1 : loaded))
            continue; /* the loader in use was preloaded on purpose (Oclgrind does) */
        if (!d->json)
            printf("  another loader: %s\n", real);
        problem(d, "two OpenCL ICD loaders: %s is used, %s also exists; which one a program gets depends on "
                   "LD_LIBRARY_PATH, and they may read different ICD files. Remove one, or keep the one "
                   "that lists your drivers first on LD_LIBRARY_PATH", loaded, real);
    }
}

/* Where the dynamic linker would find lib: an absolute path as it is, a
 * bare name on LD_LIBRARY_PATH or the system's library directories. Only
 * looked for, never loaded: two drivers built on LLVM cannot share one
 * process without the ICD loader's care (and a broken one may crash it).
 * NULL if found (its path in path[cap]), else why. */
static const char *find_lib(const char *lib, char *path, size_t cap)
{
    struct stat sb;
    if (strchr(lib, '/')) {
        snprintf(path, cap, "%s", lib);
        return stat(lib, &sb) ? "no such file" : NULL;
    }
    char dirs[4096];
    const char *ld = getenv("LD_LIBRARY_PATH");
    snprintf(dirs, sizeof dirs, "%s%s/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:"
             "/usr/lib:/usr/local/lib:/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu:/usr/local/nvidia/lib64:"
             "/opt/rocm/lib:/opt/rocm/opencl/lib", ld ? ld : "", ld ? ":" : "");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(path, cap, "%s/%s", d, lib);
        if (!stat(path, &sb))
            return NULL;
    }
    path[0] = '\0';
    return "not found on LD_LIBRARY_PATH or in the system's library directories";
}

/* The ICD files the loader reads, and whether the library each names loads. */
static void icd_files(doctor *d)
{
    const char *env = getenv("OCL_ICD_VENDORS"), *dir = "/etc/OpenCL/vendors";
    struct stat sb;
    if (env && *env) {
        if (stat(env, &sb) || !S_ISDIR(sb.st_mode))
            problem(d, "OCL_ICD_VENDORS=%s is not a directory, so the loader finds no driver through it: "
                       "unset it, or point it at a directory of .icd files", env);
        else
            dir = env;
    }
    if (getenv("OCL_ICD_FILENAMES") && !d->json)
        printf("  OCL_ICD_FILENAMES=%s\n", getenv("OCL_ICD_FILENAMES"));
    if (d->json) {
        printf("\"icd_dir\": ");
        json_string(dir);
        printf(", \"icd_files\": [");
    } else {
        printf("ICD files in %s%s:\n", dir, env && !strcmp(dir, env) ? " (OCL_ICD_VENDORS)" : "");
    }
    DIR *dh = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (dh && (e = readdir(dh))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".icd"))
            continue;
        char path[PATH_MAX], lib[PATH_MAX] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (!fgets(lib, sizeof lib, f))
                lib[0] = '\0';
            fclose(f);
        }
        lib[strcspn(lib, "\r\n")] = '\0';
        char found[PATH_MAX];
        const char *why = lib[0] ? find_lib(lib, found, sizeof found) : "the file names no library";
        if (d->json) {
            printf("%s{\"file\": ", n ? ", " : "");
            json_string(path);
            printf(", \"library\": ");
            json_string(lib);
            printf(", \"found\": %s}", why ? "false" : "true");
        } else {
            printf("  %-24s %s: %s%s\n", e->d_name, lib[0] ? lib : "(empty)", why ? "NOT FOUND" : "found at ",
                   why ? "" : found);
        }
        if (!why && strstr(lib, "Rusticl") && !getenv("RUSTICL_ENABLE") && !d->json)
            printf("  %-24s (rusticl lists no device unless RUSTICL_ENABLE names its drivers, e.g. "
                   "RUSTICL_ENABLE=llvmpipe)\n", "");
        if (why)
            problem(d, "%s names %s, which is %s: install the driver package that provides it, or remove %s",
                    path, lib[0] ? lib : "nothing", why, path);
        n++;
    }
    if (dh)
        closedir(dh);
    if (d->json)
        printf("], ");
    else if (!n)
        printf("  (none)\n");
    if (!n)
        problem(d, "no ICD file in %s: no OpenCL driver is registered. Install one (pocl-opencl-icd for the CPU; "
                   "the GPU vendor's OpenCL package)", dir);
}

/* Known figures: fp32 TFLOP/s (no matrix units) and memory TB/s. */
static const struct {
    const char *name;
    double tflops, tbps;
} nominal[] = {
    { "NVIDIA H200", 67.0, 4.8 },
    { "NVIDIA H100 80GB HBM3", 67.0, 3.35 },
    { "NVIDIA A100-SXM4-80GB", 19.5, 2.04 },
    { "NVIDIA A100-SXM4-40GB", 19.5, 1.56 },
};

/* One n^3 product's seconds, or -1 */
static double gemm_once(ct_context *ctx, size_t n, cl_mem a, cl_mem b, cl_mem c)
{
    double t0 = now();
    int st = ct_gemm(ctx, 0, 0, n, n, n, 1.0f, a, 0, n, b, 0, n, 0.0f, c, 0, n);
    return st || ct_context_finish(ctx) ? -1 : now() - t0;
}

/* GEMM GFLOP/s (1024^3 products for about half a second; on a device too
 * slow for that, a simulator say, one 256^3 product) and copy GB/s (64 MiB
 * copies, read and written counted), 0 where a step failed. */
static void measure(ct_context *ctx, double *gflops, double *gbps, int *size)
{
    *gflops = *gbps = 0;
    *size = 1024;
    const size_t n = 1024, bytes = n * n * sizeof(float), cb = (size_t)64 << 20;
    cl_mem a = NULL, b = NULL, c = NULL, s = NULL, t = NULL;
    if (!ct_buffer_create(ctx, bytes, &a) && !ct_buffer_create(ctx, bytes, &b) && !ct_buffer_create(ctx, bytes, &c)) {
        double small = gemm_once(ctx, 64, a, b, c) < 0 ? -1 : gemm_once(ctx, 256, a, b, c);
        if (small > 0.05) {
            *gflops = 2.0 * 256.0 * 256.0 * 256.0 / small * 1e-9;
            *size = 256;
        } else if (small > 0 && gemm_once(ctx, n, a, b, c) > 0) {
            int reps = 0;
            double t0 = now(), one = 0;
            while (one >= 0 && now() - t0 < 0.5) {
                one = gemm_once(ctx, n, a, b, c);
                reps++;
            }
            if (one >= 0)
                *gflops = 2.0 * (double)n * n * n * reps / (now() - t0) * 1e-9;
        }
    }
    if (!ct_buffer_create(ctx, cb, &s) && !ct_buffer_create(ctx, cb, &t)) {
        cl_command_queue q = ct_context_queue(ctx);
        cl_int err = clEnqueueCopyBuffer(q, s, t, 0, 0, cb, 0, NULL, NULL);
        err = err ? err : clFinish(q);
        int reps = 0;
        double t0 = now();
        while (!err && now() - t0 < 0.3) {
            err = clEnqueueCopyBuffer(q, s, t, 0, 0, cb, 0, NULL, NULL);
            err = err ? err : clFinish(q);
            reps++;
        }
        if (!err && reps)
            *gbps = 2.0 * (double)cb * reps / (now() - t0) * 1e-9;
    }
    ct_buffer_release(&a), ct_buffer_release(&b), ct_buffer_release(&c);
    ct_buffer_release(&s), ct_buffer_release(&t);
}

/* The kernel cache: files and bytes. */
static void cache_size(const char *dir, long *files, double *mib)
{
    *files = 0, *mib = 0;
    DIR *dh = dir ? opendir(dir) : NULL;
    struct dirent *e;
    while (dh && (e = readdir(dh))) {
        char p[PATH_MAX];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (!stat(p, &sb) && S_ISREG(sb.st_mode))
            (*files)++, *mib += (double)sb.st_size / 1048576.0;
    }
    if (dh)
        closedir(dh);
}

static void device_line(doctor *d, const ct_device_info *v, int first)
{
    ct_kernels k = CT_KERNELS_AUTO;
    ct_gemm_path g = CT_GEMM_AUTO;
    ct_device_class(v, &k, &g);
    const char *env = getenv("CLTRAIN_KERNELS");
    const char *why = env && strcmp(env, "auto") ? "CLTRAIN_KERNELS says so"
                      : v->type == CT_DEVICE_CPU ? "a CPU device"
                                                 : "a GPU or accelerator";
    if (d->json) {
        printf("%s{\"device\": \"%u:%u\", \"type\": \"%s\", \"name\": ", first ? "" : ", ", v->platform_index,
               v->device_index, ct_device_type_str(v->type));
        json_string(v->name);
        printf(", \"platform\": ");
        json_string(v->platform_name);
        printf(", \"driver\": ");
        json_string(v->driver_version);
        printf(", \"opencl_c\": ");
        json_string(v->opencl_c_version);
        printf(", \"compute_units\": %u, \"clock_mhz\": %u, \"memory_mib\": %.0f, \"fp16\": %s, \"fp64\": %s, "
               "\"kernels\": \"%s\", \"gemm\": \"%s\", \"why\": \"%s\"}", v->compute_units, v->max_clock_mhz,
               (double)v->global_mem_bytes / 1048576.0, v->fp16 ? "true" : "false", v->fp64 ? "true" : "false",
               ct_kernels_str(k), ct_gemm_path_str(g), why);
    } else {
        printf("  %u:%u %-5s %s | %s | driver %s | %s | %u CU @ %u MHz | %.0f MiB | fp16 %s, fp64 %s\n"
               "        kernels %s, GEMM %s (%s)\n", v->platform_index, v->device_index,
               ct_device_type_str(v->type), v->name, v->platform_name, v->driver_version, v->opencl_c_version,
               v->compute_units, v->max_clock_mhz, (double)v->global_mem_bytes / 1048576.0,
               v->fp16 ? "yes" : "no", v->fp64 ? "yes" : "no", ct_kernels_str(k), ct_gemm_path_str(g), why);
    }
}

/* The selected device: verdicts, cache, a short measurement. */
static void selected(doctor *d, const char *sel)
{
    ct_context *ctx = open_context(sel, OPEN_LAZY);
    if (!ctx) {
        problem(d, "no context on device '%s' (the message above says why): pick another with --device "
                   "(cltrain --devices lists them)", sel ? sel : "(default)");
        if (d->json)
            printf("\"selected\": null, ");
        return;
    }
    const ct_device_info *v = ct_context_device(ctx);
    int host = ct_gemm_get_path(ctx) == CT_GEMM_HOST;
    double bf16_speed = 0;
    int bf16_dot = host && ct_host_bf16_dot(&bf16_speed), bf16_amx = host && ct_host_bf16_amx();
    ct_verify_result r;
    int vst = ct_verify(ctx, NULL, CT_VERIFY_READ, &r);
    char err[1024] = "";
    if (vst)
        snprintf(err, sizeof err, "%s", ct_context_last_error(ctx));
    long files = 0;
    double mib = 0, gflops = 0, gbps = 0;
    int size = 0;
    const char *cdir = ct_context_cache_dir(ctx);
    cache_size(cdir, &files, &mib);
    measure(ctx, &gflops, &gbps, &size);
    double nt = 0, nb = 0;
    for (size_t i = 0; i < sizeof nominal / sizeof nominal[0]; i++)
        if (!strcmp(nominal[i].name, v->name))
            nt = nominal[i].tflops, nb = nominal[i].tbps;
    ct_tune_status ts;
    if (ct_tune_get_status(ctx, &ts))
        memset(&ts, 0, sizeof ts);
    char since[40] = "-", tuned_at[40] = "-";
    time_t w = (time_t)r.cached_since;
    time_t tw = (time_t)ts.tuned;
    struct tm ttm;
    if (ts.tuned && gmtime_r(&tw, &ttm))
        strftime(tuned_at, sizeof tuned_at, "%Y-%m-%d %H:%M UTC", &ttm);
    struct tm tmv;
    if (r.cached_since && gmtime_r(&w, &tmv))
        strftime(since, sizeof since, "%Y-%m-%d %H:%M UTC", &tmv);
    if (d->json) {
        printf("\"selected\": {\"device\": \"%u:%u\", \"kernels\": \"%s\", \"gemm\": \"%s\", \"verified\": ",
               v->platform_index, v->device_index, ct_kernels_str(ct_context_kernels(ctx)),
               ct_gemm_path_str(ct_gemm_get_path(ctx)));
        json_string(r.cached);
        printf(", \"verified_since\": %lld, \"unverified\": ", (long long)r.cached_since);
        json_string(r.unverified);
        printf(", \"failed\": ");
        json_string(r.failed);
        printf(", \"cache_dir\": ");
        if (cdir)
            json_string(cdir);
        else
            printf("null");
        printf(", \"cache_files\": %ld, \"cache_mib\": %.1f, \"tuned\": %s, \"tuned_shapes\": %d, "
               "\"tuned_unchecked\": %d, \"tuned_clblast\": %s, \"tuned_since\": %lld, \"tuned_models\": ",
               files, mib, ts.found ? "true" : "false", ts.shapes, ts.unchecked, ts.clblast ? "true" : "false",
               (long long)ts.tuned);
        json_string(ts.models);
        printf(", \"gemm_gflops\": %.1f, \"copy_gbps\": %.1f, \"nominal_tflops\": %.1f, \"nominal_tbps\": %.2f",
               gflops, gbps, nt, nb);
        if (host)
            printf(", \"host_gemm\": \"%s\", \"host_gemm_all\": %s, \"host_blas\": \"%s\", \"bf16_dot\": %s, "
                   "\"bf16_dot_speed\": %.2f, \"bf16_amx\": %s", ct_host_gemm_str(),
                   ct_host_gemm_all() ? "true" : "false", ct_host_blas_core(), bf16_dot ? "true" : "false",
                   bf16_speed, bf16_amx ? "true" : "false");
        printf("}, ");
    } else {
        printf("Device %u:%u %s: kernels %s, GEMM %s\n", v->platform_index, v->device_index, v->name,
               ct_kernels_str(ct_context_kernels(ctx)), ct_gemm_path_str(ct_gemm_get_path(ctx)));
        if (host && !strcmp(ct_host_gemm_str(), "avx512"))
            printf("  host products: cltrain's AVX-512 SGEMM for %s (OpenBLAS's kernels: %s)\n"
                   "  bf16 products: %s; %s: %s (AVX512_BF16 dot products at %.2fx the "
                   "FMA's multiply-adds here)\n",
                   ct_host_gemm_all() ? "all of them" : "the larger ones, the host BLAS for the rest",
                   ct_host_blas_core(),
                   bf16_amx   ? "AMX tiles (and the same-width stride-1 convolutions)"
                   : bf16_dot ? "AVX512_BF16 dot products"
                              : "rounded operands on the FMAs",
                   bf16_amx ? "other direct convolutions" : "direct convolutions",
                   bf16_dot ? "AVX512_BF16 dot products" : "rounded operands on the FMAs", bf16_speed);
        else if (host)
            printf("  host products: the host BLAS (OpenBLAS's kernels: %s)\n", ct_host_blas_core());
        printf("  verified op families: %s%s%s%s\n", r.cached[0] ? r.cached : "none",
               r.cached[0] ? " (since " : "", r.cached[0] ? since : "", r.cached[0] ? ")" : "");
        printf("  not verified yet: %s%s\n", r.unverified[0] ? r.unverified : "none",
               r.unverified[0] ? " (train checks what its model uses first; so does cltrain verify)" : "");
        printf("  kernel cache: %s (%ld files, %.1f MiB)\n", cdir ? cdir : "off", files, mib);
        if (ts.found)
            printf("  tuned: %d shapes (%d picked other than the built-in rule%s%s), %s, since %s: %s\n"
                   "        %s\n", ts.shapes, ts.changed, ts.unchecked ? ", unchecked imports: " : "",
                   ts.unchecked ? "checked on first use" : "", ts.clblast ? "CLBlast parameters tuned"
                                                                          : "CLBlast's own parameters",
                   tuned_at, ts.models[0] ? ts.models : "(no model finished)", ts.path);
        else
            printf("  tuned: nothing yet (CLBlast runs with its database's parameters, or its defaults for a "
                   "device it does not know; the built-in rules pick the GEMM kernel): `cltrain tune --model M%s%s` "
                   "measures the models you train (about a minute each), `cltrain tune --import FILE` takes a file "
                   "from the same device and driver\n", sel ? " --device " : "", sel ? sel : "");
        printf("  measured: GEMM %d^3 %.4g GFLOP/s, copy %.3g GB/s", size, gflops, gbps);
        if (nt > 0)
            printf(" (nominal %.0f TFLOP/s fp32, %.2f TB/s)", nt, nb);
        printf("\n");
    }
    if (vst)
        problem(d, "%s", err);
    if (!cdir)
        problem(d, "the kernel cache is off: every start builds the kernels and checks them again. Set "
                   "CLTRAIN_CACHE_DIR to a writable directory");
    if (!gflops || !gbps)
        problem(d, "the measurement failed on this device (%s): run `cltrain selftest --device %u:%u`",
                ct_context_last_error(ctx), v->platform_index, v->device_index);
    ct_context_free(&ctx);
}

int cmd_doctor(const cli_args *a)
{
    doctor d;
    memset(&d, 0, sizeof d);
    d.json = a->json;
    char loaded[PATH_MAX];
    if (d.json)
        printf("{");
    loaders(&d, loaded, sizeof loaded);
    if (d.json) {
        printf("\"loader\": ");
        json_string(loaded);
        printf(", ");
    }
    icd_files(&d);
    ct_device_info *devs = NULL;
    size_t n = 0;
    int st = ct_device_list(&devs, &n);
    if (d.json)
        printf("\"devices\": [");
    else
        printf("Devices:\n");
    if (st) {
        problem(&d, "%s", ct_last_error());
    } else {
        for (size_t i = 0; i < n; i++)
            device_line(&d, &devs[i], i == 0);
        if (!n)
            problem(&d, "the drivers registered list no device: check the GPU's kernel driver (dmesg, the "
                        "device nodes under /dev) and that this user may open them");
    }
    if (d.json)
        printf("], ");
    if (!st && n)
        selected(&d, a->device);
    ct_device_list_free(&devs);
    if (d.json) {
        printf("\"problems\": [");
        for (int i = 0; i < d.nproblems; i++) {
            printf("%s", i ? ", " : "");
            json_string(d.problems[i]);
        }
        printf("]}\n");
    } else {
        printf("%d problem%s%s\n", d.nproblems, d.nproblems == 1 ? "" : "s", d.nproblems ? ":" : "");
        for (int i = 0; i < d.nproblems; i++)
            printf("  - %s\n", d.problems[i]);
    }
    return d.nproblems ? 1 : 0;
}
