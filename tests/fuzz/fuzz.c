/*
 * fuzz.c - scratch files for the targets whose parsers read paths.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "fuzz.h"

static char scratch[4096];

static void remove_scratch(void)
{
    if (scratch[0])
        rmdir(scratch); /* the targets unlink their own files */
}

const char *fuzz_path(const char *name)
{
    static char path[4200];
    if (!scratch[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(scratch, sizeof scratch, "%s/cltrain-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(scratch)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(remove_scratch);
    }
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    return path;
}

int fuzz_write(const char *path, const uint8_t *data, size_t size, int gz)
{
    if (gz) {
        gzFile g = gzopen(path, "wb1");
        if (!g)
            return -1;
        int ok = size == 0 || gzwrite(g, data, (unsigned)size) == (int)size;
        return gzclose(g) == Z_OK && ok ? 0 : -1;
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = size == 0 || fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok ? 0 : -1;
}

char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        if (size)
            memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}
