/*
 * fuzz_cache - kernel binary cache files (src/cl/cache.c): the input is the
 * file a program's cache lookup finds. A file that does not check out must
 * be rejected, never handed on; one that does must give back exactly the
 * payload it holds. Then the input is stored as a payload and must load
 * back unchanged. The same bytes are then read as a verified-kernels
 * verdict (the payload of a "verified-" entry, src/train/verify.c): it
 * parses or is refused, and a parsed one holds sane fields. Needs no
 * device: the context only carries the cache directory and a silent logger.
 */
#include <string.h>
#include <unistd.h>

#include "cl/runtime.h"
#include "core/sha256.h"
#include "fuzz.h"
#include "train/verify.h"

static void quiet(void *user, int level, const char *msg)
{
    (void)user;
    (void)level;
    (void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ct_context ctx;
    static char dir[4200];
    static uint8_t key[32];
    if (size > 1 << 20)
        return 0;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s", fuzz_path(""));
        ctx.log = quiet;
        ctx.log_level = 99;
        ct_sha256 s;
        ct_sha256_init(&s);
        ct_sha256_update(&s, "fuzz", 4);
        ct_sha256_final(&s, key);
    }
    ctx.cache_dir = dir;
    char *path = ct_cache_path(&ctx, "dense", key);
    if (!path || fuzz_write(path, data, size, 0))
        abort();
    size_t n = 0;
    int rejected = 0;
    uint8_t *payload = ct_cache_load(&ctx, "dense", key, &n, &rejected);
    FUZZ_CHECK(!payload != !rejected, "a file is neither loaded nor rejected");
    if (payload)
        FUZZ_CHECK(n + 88 == size && !memcmp(payload, data + 88, n), "the payload differs from the file's");
    free(payload);

    ct_cache_store(&ctx, "dense", key, data, size);
    payload = ct_cache_load(&ctx, "dense", key, &n, &rejected);
    FUZZ_CHECK(payload && n == size && (size == 0 || !memcmp(payload, data, size)),
               "a stored payload of %zu bytes does not load back", size);
    free(payload);
    unlink(path);
    free(path);
    ctx.cache_dir = NULL;

    ct_verdict v;
    if (!ct_verdict_parse(data, size, &v)) {
        FUZZ_CHECK(memchr(v.message, '\0', sizeof v.message) != NULL, "an unterminated verdict message");
        FUZZ_CHECK(v.when >= 0 && v.cases >= 0, "a verdict with a negative time or case count");
        FUZZ_CHECK(v.passed || v.message[0], "a failed verdict without its message");
    }
    return 0;
}
