/*
 * test_devclass - the device-class table (src/cl/devclass.c) for devices
 * described by hand, so every kind of device is covered without owning it:
 * an integrated GPU (GPU type, shared host memory) gets the GPU class and
 * CLBlast; a CPU device the CPU class, the host BLAS and the host-side ops;
 * the overrides (CLTRAIN_KERNELS, CLTRAIN_GEMM, CLTRAIN_CONV) within their
 * limits; and bad values are errors naming the variable. No OpenCL needed.
 */
#include <stdlib.h>
#include <string.h>

#include "cl/devclass.h"
#include "cltrain/common.h"
#include "tcheck.h"

static ct_device_info device(ct_device_type type, int unified)
{
    ct_device_info d;
    memset(&d, 0, sizeof d);
    d.type = type;
    d.host_unified_memory = unified;
    snprintf(d.name, sizeof d.name, "%s%s", ct_device_type_str(type), unified ? " (shared memory)" : "");
    return d;
}

static ct_devclass resolve(ct_device_type type, int unified, ct_kernels k, ct_gemm_path g, int conv,
                           int *status)
{
    ct_device_info d = device(type, unified);
    ct_devclass c;
    char why[512];
    *status = ct_devclass_resolve(&d, k, g, conv, &c, why, sizeof why);
    return c;
}

static void is_gpu_class(const ct_devclass *c, ct_gemm_path gemm, const char *what)
{
    CHECK(c->kernels == CT_KERNELS_GPU, "%s: kernels %s", what, ct_kernels_str(c->kernels));
    CHECK(c->gemm == gemm, "%s: GEMM %s", what, ct_gemm_path_str(c->gemm));
    CHECK(!c->row_kernels && c->fuse_bias_act && !c->host_conv && !c->host_pool,
          "%s: row %d fuse %d host conv %d host pool %d", what, c->row_kernels, c->fuse_bias_act,
          c->host_conv, c->host_pool);
}

int main(void)
{
    int st;
    ct_devclass c;

    /* Intel iGPUs and AMD APUs: GPU type with shared host memory */
    c = resolve(CT_DEVICE_GPU, 1, CT_KERNELS_AUTO, CT_GEMM_AUTO, 1, &st);
    CHECK(st == CT_OK, "integrated GPU: status %d", st);
    is_gpu_class(&c, CT_GEMM_CLBLAST, "integrated GPU");
    /* a discrete GPU */
    c = resolve(CT_DEVICE_GPU, 0, CT_KERNELS_AUTO, CT_GEMM_AUTO, 1, &st);
    CHECK(st == CT_OK, "discrete GPU: status %d", st);
    is_gpu_class(&c, CT_GEMM_CLBLAST, "discrete GPU");
    /* accelerators get the GPU class too */
    c = resolve(CT_DEVICE_ACCELERATOR, 0, CT_KERNELS_AUTO, CT_GEMM_AUTO, 1, &st);
    is_gpu_class(&c, CT_GEMM_CLBLAST, "accelerator");

    /* a CPU device: everything host-side */
    c = resolve(CT_DEVICE_CPU, 1, CT_KERNELS_AUTO, CT_GEMM_AUTO, 1, &st);
    CHECK(st == CT_OK && c.kernels == CT_KERNELS_CPU && c.gemm == CT_GEMM_HOST && c.row_kernels &&
          !c.fuse_bias_act && c.host_conv && c.host_pool,
          "CPU: kernels %s GEMM %s row %d fuse %d conv %d pool %d", ct_kernels_str(c.kernels),
          ct_gemm_path_str(c.gemm), c.row_kernels, c.fuse_bias_act, c.host_conv, c.host_pool);
    /* CLTRAIN_CONV=im2col turns off only the host convolution */
    c = resolve(CT_DEVICE_CPU, 1, CT_KERNELS_AUTO, CT_GEMM_AUTO, 0, &st);
    CHECK(!c.host_conv && c.host_pool && c.gemm == CT_GEMM_HOST, "CPU, im2col: conv %d pool %d",
          c.host_conv, c.host_pool);
    /* the CPU class with CLBlast: no host-side ops (they need the mapped path) */
    c = resolve(CT_DEVICE_CPU, 1, CT_KERNELS_AUTO, CT_GEMM_CLBLAST, 1, &st);
    CHECK(c.kernels == CT_KERNELS_CPU && c.row_kernels && !c.host_conv && !c.host_pool,
          "CPU + CLBlast: row %d conv %d pool %d", c.row_kernels, c.host_conv, c.host_pool);

    /* CLTRAIN_KERNELS=gpu on a CPU device (pocl, rusticl's llvmpipe): CLBlast */
    c = resolve(CT_DEVICE_CPU, 1, CT_KERNELS_GPU, CT_GEMM_AUTO, 1, &st);
    CHECK(st == CT_OK, "CPU as GPU class: status %d", st);
    is_gpu_class(&c, CT_GEMM_CLBLAST, "CPU device, GPU class");
    /* ... and with CLTRAIN_GEMM=host within that class */
    c = resolve(CT_DEVICE_CPU, 1, CT_KERNELS_GPU, CT_GEMM_HOST, 1, &st);
    is_gpu_class(&c, CT_GEMM_HOST, "CPU device, GPU class, host GEMM");
    /* CLTRAIN_KERNELS=cpu on a discrete GPU: CPU kernels, CLBlast, nothing host-side */
    c = resolve(CT_DEVICE_GPU, 0, CT_KERNELS_CPU, CT_GEMM_AUTO, 1, &st);
    CHECK(st == CT_OK && c.kernels == CT_KERNELS_CPU && c.gemm == CT_GEMM_CLBLAST && !c.host_conv &&
          !c.host_pool, "GPU as CPU class: kernels %s GEMM %s conv %d pool %d",
          ct_kernels_str(c.kernels), ct_gemm_path_str(c.gemm), c.host_conv, c.host_pool);
    /* the host GEMM path on a device that does not share host memory */
    c = resolve(CT_DEVICE_GPU, 0, CT_KERNELS_AUTO, CT_GEMM_HOST, 1, &st);
    CHECK(st == CT_ERR_UNSUPPORTED, "host GEMM on a discrete GPU: status %d", st);

    /* the environment */
    ct_kernels k;
    ct_gemm_path g;
    int conv;
    char why[512];
    setenv("CLTRAIN_KERNELS", "gpu", 1);
    setenv("CLTRAIN_GEMM", "host", 1);
    setenv("CLTRAIN_CONV", "im2col", 1);
    st = ct_devclass_env(&k, &g, &conv, why, sizeof why);
    CHECK(st == CT_OK && k == CT_KERNELS_GPU && g == CT_GEMM_HOST && conv == 0,
          "env: status %d kernels %d gemm %d conv %d", st, (int)k, (int)g, conv);
    ct_device_info igpu = device(CT_DEVICE_GPU, 1);
    CHECK(ct_device_class(&igpu, &k, &g) == CT_OK && k == CT_KERNELS_GPU && g == CT_GEMM_HOST,
          "ct_device_class with overrides: %s %s", ct_kernels_str(k), ct_gemm_path_str(g));
    setenv("CLTRAIN_CONV", "lane", 1);
    st = ct_devclass_env(&k, &g, &conv, why, sizeof why);
    CHECK(st == CT_OK && conv == 2, "env CLTRAIN_CONV=lane: status %d conv %d", st, conv);
    setenv("CLTRAIN_CONV", "winograd", 1);
    st = ct_devclass_env(&k, &g, &conv, why, sizeof why);
    CHECK(st == CT_ERR_INVALID_ARG && strstr(why, "CLTRAIN_CONV='winograd'"), "bad conv: %d %s", st, why);
    setenv("CLTRAIN_CONV", "auto", 1);
    st = ct_devclass_env(&k, &g, &conv, why, sizeof why);
    CHECK(st == CT_OK && conv == 1, "env CLTRAIN_CONV=auto: status %d conv %d", st, conv);
    setenv("CLTRAIN_KERNELS", "fpga", 1);
    st = ct_devclass_env(&k, &g, &conv, why, sizeof why);
    CHECK(st == CT_ERR_INVALID_ARG && strstr(why, "CLTRAIN_KERNELS='fpga'"), "bad kernels: %d %s", st,
          why);
    setenv("CLTRAIN_KERNELS", "auto", 1);
    setenv("CLTRAIN_GEMM", "cublas", 1);
    st = ct_devclass_env(&k, &g, &conv, why, sizeof why);
    CHECK(st == CT_ERR_INVALID_ARG && strstr(why, "CLTRAIN_GEMM"), "bad gemm: %d %s", st, why);
    unsetenv("CLTRAIN_KERNELS");
    unsetenv("CLTRAIN_GEMM");
    unsetenv("CLTRAIN_CONV");
    CHECK(ct_device_class(&igpu, &k, &g) == CT_OK && k == CT_KERNELS_GPU && g == CT_GEMM_CLBLAST,
          "ct_device_class, integrated GPU: %s %s", ct_kernels_str(k), ct_gemm_path_str(g));
    return tcheck_done("devclass");
}
