/*
 * replay.c - runs a fuzz target over corpus files without libFuzzer: every
 * argument is a file or a directory of files, each fed once to
 * LLVMFuzzerTestOneInput. Built with any compiler, so the corpora (seeds and
 * every past finding) replay in the normal and the sanitizer test suites.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fprintf(stderr, "%s: out of memory\n", path);
            fclose(f);
            return -1;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *bigger = realloc(buf, cap * 2);
        if (!bigger)
            free(buf);
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return -1;
    }
    /* an exact-size copy, so ASan sees reads past the input's end */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    size_t total = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
        return 2;
    }
    for (int a = 1; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st)) {
            perror(argv[a]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[a]))
                return 1;
            total++;
            continue;
        }
        DIR *d = opendir(argv[a]);
        if (!d) {
            perror(argv[a]);
            return 1;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                char **more = realloc(names, cap * sizeof *names);
                if (!more) {
                    fprintf(stderr, "out of memory\n");
                    return 1;
                }
                names = more;
            }
            size_t len = strlen(argv[a]) + strlen(e->d_name) + 2;
            names[n] = malloc(len);
            if (!names[n]) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
            snprintf(names[n++], len, "%s/%s", argv[a], e->d_name);
        }
        closedir(d);
        if (n == 0) {
            fprintf(stderr, "%s: an empty corpus replays nothing\n", argv[a]);
            free(names);
            return 1;
        }
        qsort(names, n, sizeof *names, by_name); /* the same order every run */
        int failed = 0;
        for (size_t i = 0; i < n; i++) {
            if (!failed && run_file(names[i]))
                failed = 1;
            free(names[i]);
        }
        free(names);
        if (failed)
            return 1;
        total += n;
    }
    printf("replayed %zu inputs without a crash or a sanitizer report\n", total);
    return 0;
}
