/*
 * test_runtime - device enumeration, context creation, the binary cache
 * (miss, hit, corrupt/truncated/foreign files rejected and rebuilt, a new key
 * for new build options, an unwritable directory, CLTRAIN_CACHE=off), and
 * CLTRAIN_KERNEL_DIR (a broken kernel's error carries the build log).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cl/runtime.h"
#include "tcheck.h"
#include "tensor.h"

static char tmp_root[] = "/tmp/cltrain-test-XXXXXX";
static int warnings;
static char last_warning[2048];

static void count_log(void *user, int level, const char *msg)
{
    (void)user;
    if (level <= CT_LOG_WARN) {
        warnings++;
        snprintf(last_warning, sizeof last_warning, "%s", msg);
    }
}

/* A context on the default device with its cache in `dir`; builds the fill
 * program only and returns how it came to be. */
static ct_program_origin build_fill(const char *dir, const char *options, int cache,
                                    const char *kernel_dir, int *status, char *key_out)
{
    ct_context_options o;
    ct_context_defaults(&o);
    o.lazy_kernels = 1;
    o.cache_dir = dir;
    o.cache = cache;
    o.build_options = options;
    o.kernel_dir = kernel_dir;
    o.log = count_log;
    ct_context *ctx = NULL;
    *status = ct_context_create(&o, &ctx);
    if (*status)
        return CT_PROGRAM_NOT_BUILT;
    cl_program p;
    *status = ct_program_get(ctx, CT_PROG_fill, &p);
    ct_program_info info;
    ct_context_program_info(ctx, CT_PROG_fill, &info);
    if (key_out)
        snprintf(key_out, 65, "%s", info.cache_key);
    if (*status)
        snprintf(last_warning, sizeof last_warning, "%s", ct_context_last_error(ctx));
    /* the program must also run: fill a buffer and read it back */
    if (!*status) {
        cl_mem m = NULL;
        float v[5] = { 0 };
        ct_buf b = { NULL, 1 };
        if (ct_buffer_create(ctx, sizeof v, &m) == CT_OK) {
            b.mem = m;
            cl_uint n = 3;
            float val = 2.5f;
            size_t g[1] = { 3 };
            int st = CT_RUN(ctx, CT_PROG_fill, "fill_f32", 1, g, NULL, CT_ARG(b.mem), CT_ARG(b.off),
                            CT_ARG(n), CT_ARG(val));
            CHECK(st == CT_OK, "fill_f32: %s", ct_context_last_error(ctx));
            ct_buffer_read(ctx, m, 0, sizeof v, v);
            CHECK(v[1] == 2.5f && v[3] == 2.5f, "fill_f32 wrote %g %g", v[1], v[3]);
            ct_buffer_release(&m);
        }
    }
    ct_program_origin origin = info.origin;
    ct_context_free(&ctx);
    return origin;
}

static char *cache_file(const char *dir, const char *key)
{
    static char path[8400];
    snprintf(path, sizeof path, "%s/fill-%s.clbin", dir, key);
    return path;
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    if (f) {
        fwrite(p, 1, n, f);
        fclose(f);
    }
}

static void test_devices(void)
{
    ct_device_info *devs = NULL;
    size_t n = 0;
    int st = ct_device_list(&devs, &n);
    CHECK(st == CT_OK, "ct_device_list: %s", ct_last_error());
    CHECK(n >= 1, "no device listed");
    const char *want = getenv("CLTRAIN_TEST_DEVICES");
    if (want)
        CHECK(n == (size_t)atoi(want), "%zu devices listed, expected %s", n, want);
    for (size_t i = 0; i < n; i++) {
        CHECK(devs[i].name[0] != '\0', "device %zu has no name", i);
        CHECK(devs[i].compute_units > 0, "device %zu has no compute units", i);
        CHECK(devs[i].max_alloc_bytes > 0 && devs[i].global_mem_bytes >= devs[i].max_alloc_bytes,
              "device %zu memory sizes", i);
        CHECK(devs[i].max_work_group_size > 0, "device %zu work-group size", i);
        char sel[32];
        snprintf(sel, sizeof sel, "%u:%u", devs[i].platform_index, devs[i].device_index);
        size_t idx[4], k = 0;
        CHECK(ct_device_select(devs, n, sel, idx, 4, &k) == CT_OK && k == 1 && idx[0] == i,
              "selector %s does not pick device %zu", sel, i);
    }
    size_t idx[16], k = 0;
    CHECK(ct_device_select(devs, n, "all", idx, 16, &k) == CT_OK && k == n, "all gave %zu", k);
    char sels[4][32];
    for (size_t i = 0; i < n && i < 4; i++)
        snprintf(sels[i], sizeof sels[i], "%u:%u", devs[i].platform_index, devs[i].device_index);
    ct_device_list_free(&devs);
    CHECK(devs == NULL, "ct_device_list_free sets NULL");

    /* a context on each device */
    for (size_t i = 0; i < n && i < 4; i++) {
        ct_context_options o;
        ct_context_defaults(&o);
        const char *sel = sels[i];
        o.device = sel;
        o.lazy_kernels = 1;
        ct_context *ctx = NULL;
        st = ct_context_create(&o, &ctx);
        CHECK(st == CT_OK, "context on %s: %s", sel, ct_last_error());
        ct_context_free(&ctx);
        CHECK(ctx == NULL, "ct_context_free sets NULL");
    }
    ct_context_options o;
    ct_context_defaults(&o);
    o.device = "no-such-device-anywhere";
    ct_context *ctx = NULL;
    st = ct_context_create(&o, &ctx);
    CHECK(st == CT_ERR_NO_DEVICE && ctx == NULL, "bad selector gave %d", st);
    CHECK(strstr(ct_last_error(), "no-such-device-anywhere") && strstr(ct_last_error(), "HINT"),
          "message: %s", ct_last_error());
}

static void test_cache(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/cache/nested", tmp_root);
    char key[65], key2[65];
    int st;

    CHECK(build_fill(dir, NULL, CT_CACHE_ON, NULL, &st, key) == CT_PROGRAM_COMPILED,
          "first build is not a compile");
    CHECK(st == CT_OK && strlen(key) == 64, "status %d key '%s'", st, key);
    struct stat sb;
    CHECK(stat(cache_file(dir, key), &sb) == 0 && sb.st_size > 88, "no cache file %s",
          cache_file(dir, key));
    CHECK(build_fill(dir, NULL, CT_CACHE_ON, NULL, &st, key2) == CT_PROGRAM_CACHE_HIT,
          "second build is not a cache hit");
    CHECK(!strcmp(key, key2), "the key changed: %s vs %s", key, key2);

    /* a flipped byte in the payload */
    size_t n = 0;
    char *bytes = ct_read_file(cache_file(dir, key), &n);
    CHECK(bytes && n > 100, "cannot read the cache file");
    if (bytes) {
        bytes[n - 1] ^= 0x40;
        write_bytes(cache_file(dir, key), bytes, n);
        CHECK(build_fill(dir, NULL, CT_CACHE_ON, NULL, &st, NULL) == CT_PROGRAM_CACHE_REJECTED,
              "a corrupt payload was not rejected");
        CHECK(build_fill(dir, NULL, CT_CACHE_ON, NULL, &st, NULL) == CT_PROGRAM_CACHE_HIT,
              "the rebuilt file is not used");
        /* truncated */
        write_bytes(cache_file(dir, key), bytes, n / 2);
        CHECK(build_fill(dir, NULL, CT_CACHE_ON, NULL, &st, NULL) == CT_PROGRAM_CACHE_REJECTED,
              "a truncated file was not rejected");
        /* a header alone */
        write_bytes(cache_file(dir, key), bytes, 40);
        CHECK(build_fill(dir, NULL, CT_CACHE_ON, NULL, &st, NULL) == CT_PROGRAM_CACHE_REJECTED,
              "a short file was not rejected");
        /* foreign content */
        write_bytes(cache_file(dir, key), "GIF89a not a kernel at all", 26);
        CHECK(build_fill(dir, NULL, CT_CACHE_ON, NULL, &st, NULL) == CT_PROGRAM_CACHE_REJECTED,
              "a foreign file was not rejected");
        /* an empty file */
        write_bytes(cache_file(dir, key), "", 0);
        CHECK(build_fill(dir, NULL, CT_CACHE_ON, NULL, &st, NULL) == CT_PROGRAM_CACHE_REJECTED,
              "an empty file was not rejected");
        CHECK(st == CT_OK, "the program did not build after a rejected file");
        CHECK(build_fill(dir, NULL, CT_CACHE_ON, NULL, &st, NULL) == CT_PROGRAM_CACHE_HIT,
              "the cache did not heal");
        free(bytes);
    }

    /* other build options: another key, another file, a compile */
    CHECK(build_fill(dir, "-DCT_TEST_OPTION=1", CT_CACHE_ON, NULL, &st, key2) == CT_PROGRAM_COMPILED,
          "new build options did not compile");
    CHECK(strcmp(key, key2) != 0, "new build options kept the key");
    CHECK(stat(cache_file(dir, key), &sb) == 0, "the old entry vanished");
    CHECK(build_fill(dir, "-DCT_TEST_OPTION=1", CT_CACHE_ON, NULL, &st, NULL) == CT_PROGRAM_CACHE_HIT,
          "the new options' entry is not used");

    /* cache off: by option and by environment */
    CHECK(build_fill(dir, NULL, CT_CACHE_OFF, NULL, &st, key2) == CT_PROGRAM_COMPILED && !key2[0],
          "cache off still used the cache");
    setenv("CLTRAIN_CACHE", "off", 1);
    CHECK(build_fill(dir, NULL, CT_CACHE_AUTO, NULL, &st, key2) == CT_PROGRAM_COMPILED && !key2[0],
          "CLTRAIN_CACHE=off still used the cache");
    setenv("CLTRAIN_CACHE", "sometimes", 1);
    build_fill(dir, NULL, CT_CACHE_AUTO, NULL, &st, NULL);
    CHECK(st == CT_ERR_INVALID_ARG, "CLTRAIN_CACHE=sometimes was accepted");
    unsetenv("CLTRAIN_CACHE");

    /* an unwritable directory: one warning, no cache, the program still builds */
    warnings = 0;
    char ro[512];
    snprintf(ro, sizeof ro, "%s/readonly", tmp_root);
    mkdir(ro, 0555);
    const char *bad = geteuid() == 0 ? "/proc/cltrain-cache" : ro; /* root writes anywhere but /proc */
    CHECK(build_fill(bad, NULL, CT_CACHE_ON, NULL, &st, key2) == CT_PROGRAM_COMPILED && st == CT_OK,
          "an unwritable cache directory broke the build: %d", st);
    CHECK(warnings == 1 && strstr(last_warning, "cache disabled"), "%d warnings, last '%s'", warnings,
          last_warning);
}

static void test_kernel_dir(void)
{
    char kdir[512], path[600];
    snprintf(kdir, sizeof kdir, "%s/kernels", tmp_root);
    mkdir(kdir, 0755);
    int st;

    /* a working replacement is used and marked */
    snprintf(path, sizeof path, "%s/fill.cl", kdir);
    const char good[] = "__kernel void fill_f32(__global float *x, ulong off, uint n, float v)\n"
                        "{ uint i = get_global_id(0); if (i < n) x[off + i] = v; }\n";
    write_bytes(path, good, sizeof good - 1);
    CHECK(build_fill(NULL, NULL, CT_CACHE_OFF, kdir, &st, NULL) == CT_PROGRAM_COMPILED && st == CT_OK,
          "a kernel from CLTRAIN_KERNEL_DIR did not build: %s", last_warning);

    /* a broken one: the error names the program and carries the compiler's log */
    const char broken[] = "__kernel void fill_f32(__global float *x)\n{\n    x[0] = undefined_thing;\n}\n";
    write_bytes(path, broken, sizeof broken - 1);
    setenv("CLTRAIN_KERNEL_DIR", kdir, 1);
    build_fill(NULL, NULL, CT_CACHE_OFF, NULL, &st, NULL);
    unsetenv("CLTRAIN_KERNEL_DIR");
    CHECK(st == CT_ERR_BUILD, "a broken kernel gave status %d", st);
    CHECK(strstr(last_warning, "'fill'") && strstr(last_warning, "build log"),
          "the error does not name the program: %s", last_warning);
    CHECK(strstr(last_warning, "undefined_thing"), "the error lacks the build log: %s", last_warning);

    /* a directory that does not exist is an error, not a silent fallback */
    char missing[600];
    snprintf(missing, sizeof missing, "%s/no-such-dir", tmp_root);
    build_fill(NULL, NULL, CT_CACHE_OFF, missing, &st, NULL);
    CHECK(st == CT_ERR_IO && strstr(ct_last_error(), "no-such-dir"), "missing kernel dir: %d %s", st,
          ct_last_error());
}

int main(void)
{
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    test_devices();
    test_cache();
    test_kernel_dir();
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "chmod -R u+w %s; rm -rf %s", tmp_root, tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_root);
    return tcheck_done("test_runtime");
}
