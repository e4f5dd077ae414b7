/*
 * imgindex.c - an image folder's index file (src/data/imgindex.h): a strict
 * line parser (every count, number and name checked, the digest last, so a
 * cut or edited file is an error naming its line), the writer, and reading
 * and writing files (a temporary file renamed over the old one, so a reader
 * never sees half an index).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "data/imgindex.h"

#define MAGIC "cltrain-imagefolder-index 1"
#define MAX_INDEX_BYTES ((size_t)1 << 32)
#define MAX_ENTRIES ((size_t)1 << 31)

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void free_split(ct_imgsplit *s)
{
    free(s->dir);
    for (size_t i = 0; s->classes && i < s->nclasses; i++)
        free(s->classes[i]);
    free(s->classes);
    for (size_t i = 0; s->files && i < s->nfiles; i++)
        free(s->files[i].name);
    free(s->files);
    memset(s, 0, sizeof *s);
}

void ct_imgindex_free(ct_imgindex *ix)
{
    if (!ix)
        return;
    for (int i = 0; i < CT_IMGINDEX_MAX_SPLITS; i++)
        free_split(&ix->split[i]);
    ix->nsplits = 0;
}

const ct_imgsplit *ct_imgindex_find(const ct_imgindex *ix, const char *dir)
{
    for (int i = 0; i < ix->nsplits; i++)
        if (!strcmp(ix->split[i].dir, dir))
            return &ix->split[i];
    return NULL;
}

static int name_ok(const char *s, size_t n)
{
    if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '/' || s[i] == '\n' || s[i] == '\0')
            return 0;
    return 1;
}

/* A split folder: a name, or "." (DIR itself). */
static int dir_ok(const char *s, size_t n)
{
    return (n == 1 && s[0] == '.') || name_ok(s, n);
}

/* ---- parsing ---- */

typedef struct cursor {
    const char *p, *end;
    const char *path;
    size_t line;
    const char *at;   /* the current line */
    size_t len;
} cursor;

static int next_line(cursor *c)
{
    c->line++;
    if (c->p >= c->end)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu: the index ends early (no 'end' line); HINT: delete it "
                       "to rebuild it", c->path, c->line);
    const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    if (!nl)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu: the last line has no newline (a cut file?); HINT: delete "
                       "it to rebuild it", c->path, c->line);
    c->at = c->p;
    c->len = (size_t)(nl - c->p);
    c->p = nl + 1;
    return CT_OK;
}

static int bad_line(const cursor *c, const char *want)
{
    return ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu: expected %s; HINT: the index is damaged or not one cltrain "
                   "wrote: delete it to rebuild it", c->path, c->line, want);
}

/* A decimal number of at most 19 digits, no sign or leading zeros, up to sp. */
static int take_number(const char **p, const char *end, uint64_t max, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    size_t digits = 0;
    while (s < end && *s >= '0' && *s <= '9' && digits < 20) {
        v = v * 10 + (uint64_t)(*s - '0');
        s++;
        digits++;
    }
    if (digits == 0 || digits > 19 || (digits > 1 && **p == '0') || v > max)
        return 0;
    *p = s;
    *out = v;
    return 1;
}

/* "WORD N" with N in [0, max]. */
static int keyed_count(cursor *c, const char *word, uint64_t max, uint64_t *out)
{
    size_t wl = strlen(word);
    const char *p = c->at + wl + 1, *end = c->at + c->len;
    if (c->len <= wl + 1 || memcmp(c->at, word, wl) || c->at[wl] != ' ' || !take_number(&p, end, max, out) ||
        p != end) {
        char want[64];
        snprintf(want, sizeof want, "'%s N' (N up to %" PRIu64 ")", word, max);
        return bad_line(c, want);
    }
    return CT_OK;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static int parse_split(cursor *c, ct_imgsplit *s)
{
    if (c->len < 7 || memcmp(c->at, "split ", 6) || !dir_ok(c->at + 6, c->len - 6))
        return bad_line(c, "'split NAME' or 'end DIGEST'");
    if (!(s->dir = dup_n(c->at + 6, c->len - 6)))
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    uint64_t k, n;
    int st;
    if ((st = next_line(c)) || (st = keyed_count(c, "classes", 1u << 24, &k)))
        return st;
    if (k == 0)
        return bad_line(c, "at least one class");
    s->classes = calloc((size_t)k, sizeof *s->classes);
    if (!s->classes)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %" PRIu64 " classes", k);
    for (size_t i = 0; i < k; i++) {
        if ((st = next_line(c)))
            return st;
        if (!name_ok(c->at, c->len))
            return bad_line(c, "a class folder's name");
        if (!(s->classes[i] = dup_n(c->at, c->len)))
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        s->nclasses = i + 1;
        if (i && strcmp(s->classes[i - 1], s->classes[i]) >= 0)
            return bad_line(c, "class names once each, in byte order");
    }
    if ((st = next_line(c)) || (st = keyed_count(c, "files", MAX_ENTRIES, &n)))
        return st;
    /* no more entries than the text has lines left: a lying count cannot allocate more */
    if (n > (uint64_t)(c->end - c->p) / 8)
        return bad_line(c, "a file count the index's lines can hold");
    s->files = calloc(n ? (size_t)n : 1, sizeof *s->files);
    if (!s->files)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %" PRIu64 " files", n);
    for (size_t i = 0; i < n; i++) {
        if ((st = next_line(c)))
            return st;
        const char *p = c->at, *end = c->at + c->len;
        uint64_t label, size, mtime;
        int neg;
        if (!take_number(&p, end, k - 1, &label) || p >= end || *p++ != ' ' ||
            !take_number(&p, end, INT64_MAX, &size) || p >= end || *p++ != ' ' ||
            (neg = p < end && *p == '-', p += neg, !take_number(&p, end, INT64_MAX, &mtime)) || p >= end ||
            *p++ != ' ' || !name_ok(p, (size_t)(end - p)))
            return bad_line(c, "'LABEL SIZE MTIME NAME' (a label below the class count)");
        ct_imgfile *f = &s->files[i];
        f->label = (int32_t)label;
        f->size = size;
        if (neg && mtime == 0)
            return bad_line(c, "a modification time without '-0'");
        f->mtime_ns = neg ? -(int64_t)mtime : (int64_t)mtime;
        if (!(f->name = dup_n(p, (size_t)(end - p))))
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        s->nfiles = i + 1;
        const ct_imgfile *prev = i ? &s->files[i - 1] : NULL;
        if (prev && (f->label < prev->label || (f->label == prev->label && strcmp(prev->name, f->name) >= 0)))
            return bad_line(c, "files in class order, then in byte order of their names, once each");
    }
    return CT_OK;
}

int ct_imgindex_parse(const char *text, size_t len, const char *path, ct_imgindex *out)
{
    memset(out, 0, sizeof *out);
    cursor c = { text, text + len, path, 0, NULL, 0 };
    int st = next_line(&c);
    if (!st && (c.len != strlen(MAGIC) || memcmp(c.at, MAGIC, c.len)))
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s:1: not an image folder index (the first line is not '%s'); "
                     "HINT: index= names the file cltrain keeps the folder's list in: delete it or name "
                     "another", path, MAGIC);
    while (!st) {
        if ((st = next_line(&c)))
            break;
        if (c.len > 4 && !memcmp(c.at, "end ", 4)) {
            const char *digest_at = c.at;
            char want[17];
            snprintf(want, sizeof want, "%016" PRIx64, fnv1a(text, (size_t)(digest_at - text)));
            if (c.len != 20 || memcmp(c.at + 4, want, 16)) {
                st = bad_line(&c, "'end' and the digest of the lines above (they were changed)");
                break;
            }
            if (c.p != c.end)
                st = ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu: text after the 'end' line; HINT: delete the index to "
                             "rebuild it", path, c.line + 1);
            else if (out->nsplits == 0)
                st = bad_line(&c, "a split section before 'end'");
            break;
        }
        if (out->nsplits == CT_IMGINDEX_MAX_SPLITS) {
            st = bad_line(&c, "'end' after two split sections");
            break;
        }
        ct_imgsplit *s = &out->split[out->nsplits++];
        if (!(st = parse_split(&c, s)) && ct_imgindex_find(out, s->dir) != s)
            st = bad_line(&c, "each split once");
    }
    if (st)
        ct_imgindex_free(out);
    return st;
}

/* ---- writing ---- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

/* A word, then a number (and a newline when nl). */
static void put_num(sbuf *b, const char *word, int64_t v, int nl)
{
    char tmp[48];
    int k = snprintf(tmp, sizeof tmp, "%s%" PRId64 "%s", word, v, nl ? "\n" : " ");
    put(b, tmp, (size_t)k);
}

int ct_imgindex_format(const ct_imgindex *ix, char **text, size_t *len)
{
    sbuf b = { 0 };
    *text = NULL;
    *len = 0;
    put(&b, MAGIC "\n", strlen(MAGIC) + 1);
    for (int i = 0; i < ix->nsplits; i++) {
        const ct_imgsplit *s = &ix->split[i];
        int ok = dir_ok(s->dir, strlen(s->dir));
        for (size_t k = 0; ok && k < s->nclasses; k++)
            ok = name_ok(s->classes[k], strlen(s->classes[k]));
        for (size_t k = 0; ok && k < s->nfiles; k++)
            ok = name_ok(s->files[k].name, strlen(s->files[k].name));
        if (!ok) {
            free(b.p);
            return ct_fail(NULL, CT_ERR_INVALID_ARG, "split folder %s holds a name with a newline, which an index "
                           "cannot hold; HINT: rename it, or drop index=", s->dir);
        }
        put(&b, "split ", 6);
        put(&b, s->dir, strlen(s->dir));
        put_num(&b, "\nclasses ", (int64_t)s->nclasses, 1);
        for (size_t k = 0; k < s->nclasses; k++) {
            put(&b, s->classes[k], strlen(s->classes[k]));
            put(&b, "\n", 1);
        }
        put_num(&b, "files ", (int64_t)s->nfiles, 1);
        for (size_t k = 0; k < s->nfiles; k++) {
            const ct_imgfile *f = &s->files[k];
            put_num(&b, "", f->label, 0);
            put_num(&b, "", (int64_t)f->size, 0);
            put_num(&b, "", f->mtime_ns, 0);
            put(&b, f->name, strlen(f->name));
            put(&b, "\n", 1);
        }
    }
    char end[32];
    snprintf(end, sizeof end, "end %016" PRIx64 "\n", b.oom ? 0 : fnv1a(b.p, b.n));
    put(&b, end, strlen(end));
    if (b.oom) {
        free(b.p);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory writing an image folder index");
    }
    *text = b.p;
    *len = b.n;
    return CT_OK;
}

int ct_imgindex_read(const char *path, ct_imgindex *out, int *errno_out)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    char *buf = ct_read_file_max(path, MAX_INDEX_BYTES, &n);
    int e = buf ? 0 : errno;
    if (errno_out)
        *errno_out = e == ENOMEM || e == EIO || e == EFBIG ? 0 : e;
    int st = buf ? ct_imgindex_parse(buf, n, path, out)
             : e == ENOMEM ? ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory reading %s", path)
             : e == EIO ? ct_fail(NULL, CT_ERR_IO, "cannot read the index %s", path)
             : e == EFBIG ? ct_fail(NULL, CT_ERR_UNSUPPORTED, "the index %s is larger than %zu bytes", path,
                                    MAX_INDEX_BYTES)
                          : ct_fail(NULL, CT_ERR_IO, "cannot open the index %s: %s", path, strerror(e));
    free(buf);
    return st;
}

int ct_imgindex_write(const char *path, const ct_imgindex *ix)
{
    char *text;
    size_t len;
    int st = ct_imgindex_format(ix, &text, &len);
    if (st)
        return st;
    size_t tl = strlen(path) + 8;
    char *tmp = malloc(tl);
    if (!tmp) {
        free(text);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    }
    snprintf(tmp, tl, "%s.tmp", path);
    errno = 0;
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(text, 1, len, f) == len;
    ok = f && !fclose(f) && ok;
    int e = errno;
    if (ok && rename(tmp, path)) {
        e = errno;
        ok = 0;
    }
    if (!ok) {
        if (f)
            remove(tmp);
        st = ct_fail(NULL, CT_ERR_IO, "cannot write the index %s: %s; HINT: index= names a file in a folder "
                     "you can write to", path, strerror(e ? e : EIO));
    }
    free(tmp);
    free(text);
    return st;
}
