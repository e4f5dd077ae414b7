/*
 * cache.c - the on-disk cache of compiled program binaries.
 *
 * One file per (program, key): <dir>/<program>-<sha256 hex>.clbin, where the
 * key hashes everything that can change the binary (sources, build options,
 * device, driver and platform versions, this file format's version). Layout:
 *
 *   0   8  magic "CTKBIN\r\n"
 *   8   4  format version, little endian
 *   12  4  header size (88), little endian
 *   16 32  key digest (must equal the file name's)
 *   48  8  payload size, little endian
 *   56 32  SHA-256 of the payload
 *   88  .  payload: the driver's program binary
 *
 * Anything that does not check out is ignored (and later overwritten), never
 * handed to the driver. Files are written to a temporary name, flushed and
 * renamed, so readers never see a partial file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cl/runtime.h"
#include "core/sha256.h"

#define HEADER_SIZE 88
static const char magic[8] = { 'C', 'T', 'K', 'B', 'I', 'N', '\r', '\n' };

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static char *default_dir(void)
{
    const char *env = getenv("CLTRAIN_CACHE_DIR");
    if (env && *env)
        return ct_strdup(env);
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char buf[4096];
    if (xdg && *xdg)
        snprintf(buf, sizeof buf, "%s/cltrain", xdg);
    else if (home && *home)
        snprintf(buf, sizeof buf, "%s/.cache/cltrain", home);
    else
        return NULL;
    return ct_strdup(buf);
}

int ct_cache_setup(struct ct_context *ctx, const char *dir, int mode)
{
    ctx->cache_dir = NULL;
    const char *env = getenv("CLTRAIN_CACHE");
    if (mode == CT_CACHE_OFF)
        return CT_OK;
    if (mode == CT_CACHE_AUTO && env && (!strcmp(env, "off") || !strcmp(env, "0")))
        return CT_OK;
    if (mode == CT_CACHE_AUTO && env && *env && strcmp(env, "on") && strcmp(env, "1"))
        return ct_fail(ctx, CT_ERR_INVALID_ARG,
                       "CLTRAIN_CACHE='%s': expected 'on' or 'off'", env);

    char *path = dir && *dir ? ct_strdup(dir) : default_dir();
    if (!path) {
        ct_log(ctx, CT_LOG_WARN, "kernel cache disabled: neither CLTRAIN_CACHE_DIR, "
               "XDG_CACHE_HOME nor HOME is set");
        return CT_OK;
    }
    if (ct_make_dirs(path) || access(path, W_OK | X_OK)) {
        ct_log(ctx, CT_LOG_WARN,
               "kernel cache disabled: cannot write to %s (%s); programs will be compiled "
               "at every start. HINT: set CLTRAIN_CACHE_DIR to a writable directory",
               path, strerror(errno));
        free(path);
        return CT_OK;
    }
    ctx->cache_dir = path;
    return CT_OK;
}

char *ct_cache_path(const struct ct_context *ctx, const char *prog, const uint8_t key[32])
{
    if (!ctx->cache_dir)
        return NULL;
    char hex[65];
    ct_sha256_hex(key, hex);
    size_t n = strlen(ctx->cache_dir) + strlen(prog) + 80;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s-%s.clbin", ctx->cache_dir, prog, hex);
    return p;
}

uint8_t *ct_cache_load(struct ct_context *ctx, const char *prog, const uint8_t key[32],
                       size_t *size, int *rejected)
{
    *size = 0;
    *rejected = 0;
    char *path = ct_cache_path(ctx, prog, key);
    if (!path)
        return NULL;
    size_t n = 0;
    uint8_t *data = (uint8_t *)ct_read_file(path, &n);
    if (!data) {
        if (errno != ENOENT) {
            *rejected = 1;
            ct_log(ctx, CT_LOG_INFO, "kernel cache: cannot read %s: %s", path, strerror(errno));
        }
        free(path);
        return NULL;
    }
    const char *why = NULL;
    uint8_t digest[32];
    if (n < HEADER_SIZE)
        why = "shorter than its header";
    else if (memcmp(data, magic, sizeof magic))
        why = "bad magic";
    else if (get_le(data + 8, 4) != CT_CACHE_FORMAT_VERSION)
        why = "other format version";
    else if (get_le(data + 12, 4) != HEADER_SIZE)
        why = "bad header size";
    else if (memcmp(data + 16, key, 32))
        why = "key does not match";
    else if (get_le(data + 48, 8) != n - HEADER_SIZE)
        why = "truncated or padded payload";
    else {
        ct_sha256 s;
        ct_sha256_init(&s);
        ct_sha256_update(&s, data + HEADER_SIZE, n - HEADER_SIZE);
        ct_sha256_final(&s, digest);
        if (memcmp(digest, data + 56, 32))
            why = "payload checksum mismatch";
    }
    if (why) {
        ct_log(ctx, CT_LOG_INFO, "kernel cache: ignoring %s (%s); rebuilding", path, why);
        *rejected = 1;
        free(data);
        free(path);
        return NULL;
    }
    free(path);
    memmove(data, data + HEADER_SIZE, n - HEADER_SIZE);
    *size = n - HEADER_SIZE;
    return data;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

void ct_cache_store(struct ct_context *ctx, const char *prog, const uint8_t key[32],
                    const uint8_t *payload, size_t size)
{
    char *path = ct_cache_path(ctx, prog, key);
    if (!path)
        return;
    size_t tn = strlen(path) + 48;
    char *tmp = malloc(tn);
    if (!tmp) {
        free(path);
        return;
    }
    static _Thread_local unsigned counter;
    snprintf(tmp, tn, "%s.tmp.%ld.%u", path, (long)getpid(), counter++);

    uint8_t header[HEADER_SIZE] = { 0 };
    memcpy(header, magic, sizeof magic);
    put_le(header + 8, CT_CACHE_FORMAT_VERSION, 4);
    put_le(header + 12, HEADER_SIZE, 4);
    memcpy(header + 16, key, 32);
    put_le(header + 48, size, 8);
    ct_sha256 s;
    ct_sha256_init(&s);
    ct_sha256_update(&s, payload, size);
    ct_sha256_final(&s, header + 56);

    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    int ok = fd >= 0 && !write_all(fd, header, sizeof header) && !write_all(fd, payload, size) &&
             !fsync(fd);
    int saved = errno;
    if (fd >= 0 && close(fd))
        ok = 0;
    if (ok && rename(tmp, path))
        ok = 0, saved = errno;
    if (!ok) {
        unlink(tmp);
        if (!ctx->cache_warned)
            ct_log(ctx, CT_LOG_WARN, "kernel cache: cannot write %s: %s (the program still "
                   "works; it will be compiled again next time)", path, strerror(saved));
        ctx->cache_warned = 1;
    }
    free(tmp);
    free(path);
}
