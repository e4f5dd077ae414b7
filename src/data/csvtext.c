/*
 * csvtext.c - text classification from CSV files as RFC 4180 writes them
 * (the usual "label,text" files): fields separated by commas, records by
 * LF or CRLF; a field in double quotes may hold commas, line breaks and
 * doubled quotes ("" for one "). Unquoted fields are trimmed of blanks,
 * quoted ones are taken as they are; blank lines between records are
 * skipped. Strict: a quote inside an unquoted field, text after a closing
 * quote, a quote never closed, a NUL byte and a row whose field count
 * differs from the first row's are errors naming FILE:LINE:COLUMN (from
 * 1; the column counts bytes).
 *
 * Labels are integers (then they are the class ids, and the class names
 * their decimal form) when every label of the training file is one;
 * otherwise they are class names, numbered in byte order.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "data/dataset.h"
#include "data/tokenize.h"

#define MAX_CSV_BYTES ((size_t)1 << 32)
#define MAX_FIELDS 65536

typedef struct cfield {
    char *s;     /* unescaped in place, not NUL-terminated */
    size_t len;
    size_t col;  /* 1-based byte column where the field starts */
    size_t line;
} cfield;

typedef struct crow {
    cfield *f;
    size_t n, cap;
    size_t line; /* where the record starts */
} crow;

/* A parse position in the file. */
typedef struct cursor {
    const char *path;
    char *buf;
    size_t size, pos;
    size_t line, line_start;
} cursor;

static size_t col_of(const cursor *c, size_t at)
{
    return at - c->line_start + 1;
}

static int blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

static int add_field(cursor *c, crow *row, char *s, size_t len, size_t col, size_t line)
{
    if (row->n == row->cap) {
        size_t nc = row->cap ? row->cap * 2 : 16;
        cfield *nf = nc > MAX_FIELDS ? NULL : realloc(row->f, nc * sizeof *nf);
        if (!nf)
            return ct_fail(NULL, nc > MAX_FIELDS ? CT_ERR_UNSUPPORTED : CT_ERR_NO_MEMORY,
                           "%s:%zu: more than %d fields in a row", c->path, row->line, MAX_FIELDS);
        row->f = nf;
        row->cap = nc;
    }
    row->f[row->n++] = (cfield){ s, len, col, line };
    return CT_OK;
}

/* The next record into row (row->n == 0 at the end of the file). */
static int next_record(cursor *c, crow *row)
{
    char *b = c->buf;
    size_t n = c->size, p = c->pos;
    row->n = 0;
    for (;;) { /* skip blank lines */
        size_t q = p;
        while (q < n && (blank(b[q]) || b[q] == '\r'))
            q++;
        if (q < n && b[q] == '\n') {
            p = q + 1;
            c->line++;
            c->line_start = p;
            continue;
        }
        if (q == n)
            p = n;
        break;
    }
    if (p >= n) {
        c->pos = n;
        return CT_OK;
    }
    row->line = c->line;
    for (;;) {
        while (p < n && blank(b[p]))
            p++;
        size_t col = col_of(c, p), line = c->line;
        int st;
        if (p < n && b[p] == '"') {
            size_t start = ++p, out = start;
            for (;;) {
                if (p >= n)
                    return ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: the quote opened here is "
                                   "never closed; HINT: close it, and double any quote inside",
                                   c->path, line, col);
                if (b[p] == '"') {
                    if (p + 1 < n && b[p + 1] == '"') {
                        b[out++] = '"';
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                if (b[p] == '\n') {
                    c->line++;
                    c->line_start = p + 1;
                }
                b[out++] = b[p++];
            }
            if ((st = add_field(c, row, b + start, out - start, col, line)))
                return st;
            while (p < n && (blank(b[p]) || (b[p] == '\r' && (p + 1 == n || b[p + 1] == '\n'))))
                p++;
            if (p < n && b[p] != ',' && b[p] != '\n')
                return ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: text after the closing quote of "
                               "the field at column %zu; HINT: inside a quoted field, write a quote "
                               "as two",
                               c->path, c->line, col_of(c, p), col);
        } else {
            size_t start = p;
            while (p < n && b[p] != ',' && b[p] != '\n') {
                if (b[p] == '"')
                    return ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: a quote inside an unquoted "
                                   "field; HINT: quote the whole field and write each quote in it "
                                   "as two",
                                   c->path, c->line, col_of(c, p));
                p++;
            }
            size_t end = p;
            if (end > start && b[end - 1] == '\r' && (end == n || b[end] == '\n'))
                end--;
            while (end > start && blank(b[end - 1]))
                end--;
            if ((st = add_field(c, row, b + start, end - start, col, line)))
                return st;
        }
        if (p < n && b[p] == ',') {
            p++;
            continue;
        }
        if (p < n) { /* '\n' */
            p++;
            c->line++;
            c->line_start = p;
        }
        break;
    }
    c->pos = p;
    return CT_OK;
}

/* Line and column of byte offset `at` (for errors found before parsing). */
static void place_of(const char *b, size_t at, size_t *line, size_t *col)
{
    size_t l = 1, start = 0;
    for (size_t i = 0; i < at; i++)
        if (b[i] == '\n') {
            l++;
            start = i + 1;
        }
    *line = l;
    *col = at - start + 1;
}

/* NUL bytes, and invalid UTF-8 under word tokens, anywhere in the file. */
static int check_bytes(const char *path, const char *b, size_t n, int utf8)
{
    size_t line, col;
    const char *nul = memchr(b, 0, n);
    size_t limit = nul ? (size_t)(nul - b) : n;
    if (utf8)
        for (size_t i = 0; i < limit;) {
            uint32_t cp;
            size_t k = ct_utf8_decode((const unsigned char *)b + i, limit - i, &cp);
            if (!k) {
                place_of(b, i, &line, &col);
                return ct_fail(NULL, CT_ERR_CORRUPT,
                               "%s:%zu:%zu: invalid UTF-8 at byte offset %zu (byte %02x); HINT: "
                               "word tokens read UTF-8 text: convert the file (iconv -f LATIN1 -t "
                               "UTF-8, say) or use tokens=byte, which takes any bytes",
                               path, line, col, i, (unsigned char)b[i]);
            }
            i += k;
        }
    if (nul) {
        place_of(b, limit, &line, &col);
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: a NUL byte at byte offset %zu: not a text "
                       "file", path, line, col, limit);
    }
    return CT_OK;
}

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static int field_is(const cfield *f, const char *s)
{
    return strlen(s) == f->len && !memcmp(f->s, s, f->len);
}

/* The column a spec value names: a header name, else a 0-based index. */
static int find_column(const char *path, const char *what, const char *want, const crow *hdr,
                       size_t nfields, size_t *col)
{
    if (hdr)
        for (size_t i = 0; i < hdr->n; i++)
            if (field_is(&hdr->f[i], want)) {
                *col = i;
                return CT_OK;
            }
    if (all_digits(want)) {
        errno = 0;
        unsigned long v = strtoul(want, NULL, 10);
        if (!errno && v < nfields) {
            *col = v;
            return CT_OK;
        }
    }
    return ct_fail(NULL, CT_ERR_INVALID_ARG,
                   "%s: no %s column '%s'%s; HINT: %s= takes a header name or a 0-based column "
                   "index below %zu",
                   path, what, want, hdr ? "" : " (the file has no header row)", what, nfields);
}

/* One CSV file's rows: text and label fields. */
typedef struct table {
    char *buf;
    ct_text_item *items; // (n) label not yet set
    cfield *labels;      // (n)
    size_t n;
} table;

static void table_free(table *t)
{
    free(t->buf);
    free(t->items);
    free(t->labels);
    memset(t, 0, sizeof *t);
}

static int read_table(const ct_text_spec *s, const char *path, table *t)
{
    ct_gzin in;
    size_t size = 0, cap = 0, nfields = 0, tcol = 0, lcol = 0;
    uint64_t extra = 0;
    crow row = { 0 }, hdr = { 0 };
    memset(t, 0, sizeof *t);
    int st = ct_gzin_open(&in, path);
    if (st)
        return st;
    st = ct_gzin_read_alloc(&in, MAX_CSV_BYTES, (uint8_t **)&t->buf, &size);
    if (!st && size == MAX_CSV_BYTES)
        st = ct_gzin_count_rest(&in, &extra);
    ct_gzin_close(&in);
    if (!st && extra)
        st = ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: larger than %zu bytes", path, MAX_CSV_BYTES);
    int words = s->tokens == CT_TOKENS_WORD;
    if (s->given && s->given->tokenizer)
        words = s->given->tokenizer->kind == CT_TOKENS_WORD;
    if (!st)
        st = check_bytes(path, t->buf, size, words);
    cursor c = { path, t->buf, size, 0, 1, 0 };
    int header = s->header;
    if (header < 0)
        header = !all_digits(s->text_col) || (s->label_col && !all_digits(s->label_col));
    const char *label_col = s->label_col ? s->label_col : "0";
    for (int first = 1; !st;) {
        if ((st = next_record(&c, first && header ? &hdr : &row)))
            break;
        crow *r = first && header ? &hdr : &row;
        if (r->n == 0)
            break;
        if (first) {
            nfields = r->n;
            if (nfields < 2) {
                st = ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:1: %zu field, want a label and a text; "
                             "HINT: fields are separated by commas", path, r->line, nfields);
                break;
            }
            if ((st = find_column(path, "text", s->text_col, header ? &hdr : NULL, nfields, &tcol)) ||
                (st = find_column(path, "label", label_col, header ? &hdr : NULL, nfields, &lcol)))
                break;
            if (tcol == lcol) {
                st = ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: text= and label= name the same column "
                             "%zu", path, tcol);
                break;
            }
            first = 0;
            if (header)
                continue;
        }
        if (r->n != nfields) {
            size_t col = r->n > nfields ? r->f[nfields].col : 1;
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: %zu fields, want %zu as in the first "
                         "row; HINT: quote fields that hold commas",
                         path, r->n > nfields ? r->f[nfields].line : r->line, col, r->n, nfields);
            break;
        }
        const cfield *lf = &r->f[lcol], *tf = &r->f[tcol];
        if (lf->len == 0) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: the label is empty", path, lf->line,
                         lf->col);
            break;
        }
        if (t->n == cap) {
            size_t nc = cap ? cap * 2 : 1024;
            ct_text_item *ni = realloc(t->items, nc * sizeof *ni);
            if (ni)
                t->items = ni;
            cfield *nl = ni ? realloc(t->labels, nc * sizeof *nl) : NULL;
            if (nl)
                t->labels = nl;
            if (!ni || !nl) {
                st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory reading %s at line %zu", path,
                             r->line);
                break;
            }
            cap = nc;
        }
        t->items[t->n] = (ct_text_item){ path, tf->s, tf->len, r->line, 0 };
        t->labels[t->n++] = *lf;
    }
    if (!st && t->n == 0)
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: no data rows", path);
    free(row.f);
    free(hdr.f);
    if (st)
        table_free(t);
    return st;
}

/* A label as an integer id, if it is one. */
static int label_int(const cfield *f, long *out)
{
    if (f->len == 0 || f->len > 10)
        return 0;
    long v = 0;
    for (size_t i = 0; i < f->len; i++) {
        if (f->s[i] < '0' || f->s[i] > '9')
            return 0;
        v = v * 10 + (f->s[i] - '0');
    }
    if (v > INT32_MAX - 1)
        return 0;
    *out = v;
    return 1;
}

static char *field_dup(const cfield *f)
{
    char *p = malloc(f->len + 1);
    if (p) {
        memcpy(p, f->s, f->len);
        p[f->len] = 0;
    }
    return p;
}

static int by_field(const void *pa, const void *pb)
{
    const cfield *a = *(const cfield *const *)pa, *b = *(const cfield *const *)pb;
    int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* Class names from the training table's labels: integers, or names in
 * byte order. *numeric says which. */
static int make_classes(const ct_text_spec *s, const table *t, char ***names, int *classes,
                        int *numeric)
{
    long v, top = -1;
    *names = NULL;
    *numeric = 1;
    for (size_t i = 0; i < t->n && *numeric; i++) {
        if (!label_int(&t->labels[i], &v))
            *numeric = 0;
        else if (v > top)
            top = v;
    }
    if (*numeric) {
        if (s->classes > 0 && top >= s->classes) {
            for (size_t i = 0; i < t->n; i++)
                if (label_int(&t->labels[i], &v) && v >= s->classes)
                    return ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: label %ld out of range for "
                                   "classes=%d", t->items[i].file, t->labels[i].line,
                                   t->labels[i].col, v, s->classes);
        }
        int k = s->classes > 0 ? s->classes : (int)top + 1;
        if (k > (1 << 24))
            return ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: label %d is too large for a class id; "
                           "HINT: number the classes from 0", t->items[0].file, k - 1);
        char **nm = calloc((size_t)k, sizeof *nm);
        for (int i = 0; nm && i < k; i++) {
            char num[16];
            snprintf(num, sizeof num, "%d", i);
            if (!(nm[i] = ct_strdup(num))) {
                ct_free_strings(nm, (size_t)i);
                nm = NULL;
            }
        }
        if (!nm)
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        *names = nm;
        *classes = k;
        return CT_OK;
    }
    const cfield **all = malloc(t->n * sizeof *all);
    if (!all)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < t->n; i++)
        all[i] = &t->labels[i];
    qsort(all, t->n, sizeof *all, by_field);
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (i == 0 || by_field(&all[i - 1], &all[i]))
            all[k++] = all[i];
    int st = CT_OK;
    char **nm = k > (1 << 24) ? NULL : calloc(k, sizeof *nm);
    if (!nm)
        st = ct_fail(NULL, k > (1 << 24) ? CT_ERR_UNSUPPORTED : CT_ERR_NO_MEMORY,
                     "%s: %zu class names", t->items[0].file, k);
    for (size_t i = 0; !st && i < k; i++)
        if (!(nm[i] = field_dup(all[i]))) {
            ct_free_strings(nm, i);
            nm = NULL;
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        }
    free(all);
    *names = nm;
    *classes = st ? 0 : (int)k;
    return st;
}

/* Each row's class id: its label's place among the names (or its value). */
static int assign_labels(table *t, char *const *names, int classes, int numeric, const char *from)
{
    for (size_t i = 0; i < t->n; i++) {
        const cfield *f = &t->labels[i];
        long v = -1;
        if (numeric) {
            if (!label_int(f, &v) || v >= classes)
                v = -1;
        } else {
            for (int k = 0; k < classes && v < 0; k++)
                if (field_is(f, names[k]))
                    v = k;
        }
        if (v < 0)
            return ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: label '%.*s' is not %s %s; HINT: "
                           "the test split's labels must be the training split's",
                           t->items[i].file, f->line, f->col, (int)(f->len > 60 ? 60 : f->len), f->s,
                           numeric ? "a class id of" : "a class of", from);
        t->items[i].label = (int32_t)v;
    }
    return CT_OK;
}

int ct_csvtext_load(const ct_text_spec *s, int split, ct_dataset **out)
{
    table train = { 0 }, test = { 0 };
    char **names = NULL;
    int classes = 0, numeric = 0, st;
    ct_text_item *picked = NULL;
    int32_t *labels = NULL;
    uint8_t *is_test = NULL;
    *out = NULL;
    if (split == CT_SPLIT_TEST && !s->test && !(s->split > 0))
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s' has no test split; HINT: name its "
                       "file with :test=FILE, or hold out a fraction with :split=F", s->spec);
    if ((st = read_table(s, s->path, &train)))
        return st;
    const ct_text_options *g = s->given;
    const char *from = s->path;
    if (g && g->classes) {
        classes = g->nclasses;
        names = calloc((size_t)classes, sizeof *names);
        for (int k = 0; names && k < classes; k++)
            if (!(names[k] = ct_strdup(g->classes[k]))) {
                ct_free_strings(names, (size_t)k);
                names = NULL;
            }
        if (!names)
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        from = "the class names given";
    } else {
        st = make_classes(s, &train, &names, &classes, &numeric);
    }
    if (!st)
        st = assign_labels(&train, names, classes, numeric, from);
    const ct_text_item *use = train.items;
    size_t nuse = train.n, ntrain = train.n;
    if (!st && split == CT_SPLIT_TEST && s->test) {
        if (!(st = read_table(s, s->test, &test)))
            st = assign_labels(&test, names, classes, numeric, from);
        use = test.items;
        nuse = test.n;
    } else if (!st && s->split > 0) {
        labels = calloc(train.n, sizeof *labels);
        is_test = malloc(train.n);
        picked = malloc(train.n * sizeof *picked);
        if (!labels || !is_test || !picked)
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        for (size_t i = 0; !st && i < train.n; i++)
            labels[i] = train.items[i].label;
        if (!st)
            st = ct_text_split(labels, train.n, classes, s->split, s->seed, is_test);
        size_t ntest = 0;
        ntrain = 0;
        for (size_t i = 0; !st && i < train.n; i++)
            if (!is_test[i])
                picked[ntrain++] = train.items[i];
        for (size_t i = 0; !st && i < train.n; i++)
            if (is_test[i])
                picked[ntrain + ntest++] = train.items[i];
        if (!st && (ntrain == 0 || ntest == 0))
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: split=%g of %zu rows leaves the %s split "
                         "empty; HINT: use a split fraction that leaves rows on both sides",
                         s->path, s->split, train.n, ntest == 0 ? "test" : "training");
        use = split == CT_SPLIT_TEST ? picked + ntrain : picked;
        nuse = split == CT_SPLIT_TEST ? ntest : ntrain;
    }
    if (!st) {
        char name[4400];
        int kind = g && g->tokenizer ? g->tokenizer->kind : s->tokens;
        snprintf(name, sizeof name, "csv %s (%s%s), text column %s, %d classes, %s tokens, seq %d",
                 split == CT_SPLIT_TEST ? "test" : "train",
                 split == CT_SPLIT_TEST && s->test ? s->test : s->path,
                 s->split > 0 ? ", split" : "", s->text_col, classes,
                 kind == CT_TOKENS_WORD ? "word" : "byte", s->seq);
        st = ct_text_classify(s, name, picked ? picked : train.items, ntrain, use, nuse, names,
                              classes, out);
        names = NULL;
    }
    ct_free_strings(names, (size_t)classes);
    table_free(&train);
    table_free(&test);
    free(picked);
    free(labels);
    free(is_test);
    return st;
}
