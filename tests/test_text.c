/*
 * test_text - text datasets on small generated files: language-model
 * windows and their targets, textdir and CSV text classification
 * (padding, truncation, the quoting cases, splits), the loader's (T, N)
 * batches, and each error message. The tokenizers are test_tokenize's.
 * With --fortunes LANGID_DIR LM_TRAIN LM_TEST (tests/text/
 * test_fortunes.sh builds them from Debian's fortunes packages) it loads
 * the real text instead and reports the counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cltrain/cltrain.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/tokenize.h"
#include "tcheck.h"
#include "tdataset.h"

static char tmp[256];

/* ---- files ---- */

static const char *in_tmp(const char *name)
{
    static char buf[64][700];
    static int k;
    k = (k + 1) % 64;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmp, name);
    return buf[k];
}

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "write %s", path);
}

static void write_str(const char *path, const char *s)
{
    write_file(path, s, strlen(s));
}

static void make_dirs(const char *path)
{
    char p[700];
    snprintf(p, sizeof p, "%s", path);
    for (char *q = p + 1; *q; q++)
        if (*q == '/') {
            *q = 0;
            mkdir(p, 0700);
            *q = '/';
        }
    mkdir(p, 0700);
}

/* ---- checking ---- */

/* The ids of sample i as text (byte tokens: the bytes, padding left out). */
static const char *sample_text(const ct_dataset *ds, size_t i, int32_t *label)
{
    static char buf[4096];
    int32_t ids[512], labels[512];
    int T = ct_dataset_seq(ds);
    buf[0] = 0;
    if (T > 512 || ct_dataset_sample_tokens(ds, i, ids, labels))
        return buf;
    ct_tokenizer_decode(ct_dataset_tokenizer(ds), ids, (size_t)T, buf, sizeof buf);
    if (label)
        *label = labels[0];
    return buf;
}

/* ---- language-model windows ---- */

static void test_text_lm(void)
{
    write_str(in_tmp("ten.txt"), "abcdefghij");
    char spec[800];
    snprintf(spec, sizeof spec, "text:%s:seq=3", in_tmp("ten.txt"));
    ct_dataset *ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds) {
        /* 10 tokens: windows abc/bcd, def/efg, ghi/hij; j is only a target */
        CHECK(ct_dataset_count(ds) == 3 && ct_dataset_seq(ds) == 3 && ct_dataset_labels_per_sample(ds) == 3,
              "3 windows of 3: %zu", ct_dataset_count(ds));
        CHECK(ct_dataset_classes(ds) == 256 && ct_dataset_class_name(ds, 0) == NULL, "LM classes are ids");
        int c, h, w;
        ct_dataset_shape(ds, &c, &h, &w);
        CHECK(c == 3 && h == 1 && w == 1, "shape (T, 1, 1)");
        int32_t ids[3], y[3];
        const char *want_x[] = { "abc", "def", "ghi" }, *want_y[] = { "bcd", "efg", "hij" };
        for (size_t k = 0; k < 3; k++) {
            CHECK(ct_dataset_sample_tokens(ds, k, ids, y) == CT_OK, "sample %zu", k);
            for (int t = 0; t < 3; t++)
                CHECK(ids[t] == want_x[k][t] && y[t] == want_y[k][t], "window %zu token %d: %c->%c", k, t,
                      (char)ids[t], (char)y[t]);
        }
        CHECK(ct_dataset_sample_tokens(ds, 3, ids, y) == CT_ERR_INVALID_ARG, "sample out of range");
        float x[3];
        CHECK(ct_dataset_sample(ds, 0, x, NULL) == CT_ERR_UNSUPPORTED && has(ct_last_error(), "token ids"),
              "no float samples");
        float m = 0, sd = 1;
        CHECK(ct_dataset_set_norm(ds, &m, &sd, 1) == CT_ERR_UNSUPPORTED, "no normalization");
        CHECK(has(ct_dataset_name(ds), "text train") && has(ct_dataset_name(ds), "byte tokens, seq 3"),
              "name '%s'", ct_dataset_name(ds));
    }
    ct_dataset_free(&ds);

    /* seq=4: (10 - 1) / 4 = 2 windows; the split holds out the last */
    snprintf(spec, sizeof spec, "text:%s:seq=4:split=0.3", in_tmp("ten.txt"));
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    ct_dataset *te = open_ok(spec, CT_SPLIT_TEST);
    if (ds && te) {
        CHECK(ct_dataset_count(ds) == 1 && ct_dataset_count(te) == 1, "split 1 + 1");
        int32_t label;
        CHECK(!strcmp(sample_text(ds, 0, &label), "abcd") && label == 'b', "train window");
        CHECK(!strcmp(sample_text(te, 0, &label), "efgh") && label == 'f', "test window");
    }
    ct_dataset_free(&ds);
    ct_dataset_free(&te);

    /* test=FILE */
    write_str(in_tmp("other.txt"), "0123456");
    snprintf(spec, sizeof spec, "text:%s:seq=2:test=%s", in_tmp("ten.txt"), in_tmp("other.txt"));
    te = open_ok(spec, CT_SPLIT_TEST);
    if (te)
        CHECK(ct_dataset_count(te) == 3 && !strcmp(sample_text(te, 2, NULL), "45"), "test file windows");
    ct_dataset_free(&te);

    /* word tokens: the vocabulary counts the training part only */
    write_str(in_tmp("words.txt"), "The cat sat. The cat ran! A dog sat; a dog ran. ZEBRA zebra");
    snprintf(spec, sizeof spec, "text:%s:tokens=word:vocab=3:seq=2:split=0.2", in_tmp("words.txt"));
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    te = open_ok(spec, CT_SPLIT_TEST);
    if (ds && te) {
        /* 18 tokens, 8 windows of 2, 2 held out: the training part is the
         * first 13 tokens (the cat sat . the cat ran ! a dog sat ; a):
         * the 2, cat 2, sat 2, a 2 -> a, cat, sat; zebra is not counted */
        const ct_tokenizer *t = ct_dataset_tokenizer(ds);
        CHECK(ct_dataset_count(ds) == 6 && ct_dataset_count(te) == 2, "word windows %zu + %zu",
              ct_dataset_count(ds), ct_dataset_count(te));
        CHECK(ct_tokenizer_size(t) == 5 && !strcmp(ct_tokenizer_token(t, 2, NULL), "a") &&
                  !strcmp(ct_tokenizer_token(t, 3, NULL), "cat") &&
                  !strcmp(ct_tokenizer_token(t, 4, NULL), "sat"),
              "vocab from the training part");
        CHECK(ct_dataset_classes(ds) == 5, "classes = vocabulary size");
        CHECK(!strcmp(sample_text(ds, 0, NULL), "<unk> cat"), "window 0 '%s'", sample_text(ds, 0, NULL));
        CHECK(!strcmp(sample_text(te, 1, NULL), "<unk> <unk>"), "ran . are unknown: '%s'", sample_text(te, 1, NULL));
        CHECK(ct_tokenizer_size(ct_dataset_tokenizer(te)) == 5, "the test split has the same vocabulary");
    }
    ct_dataset_free(&ds);
    ct_dataset_free(&te);

    /* a given tokenizer instead of building one */
    ct_tokenizer *bt = NULL;
    ct_tokenizer_new_byte(&bt);
    ct_text_options o;
    ct_text_defaults(&o);
    o.tokenizer = bt;
    snprintf(spec, sizeof spec, "text:%s:seq=3", in_tmp("words.txt"));
    CHECK(ct_dataset_open_text(spec, CT_SPLIT_TRAIN, &o, &ds) == CT_OK && ds &&
              ct_tokenizer_kind(ct_dataset_tokenizer(ds)) == CT_TOKENS_BYTE,
          "given tokenizer");
    ct_dataset_free(&ds);
    snprintf(spec, sizeof spec, "text:%s:seq=3:tokens=word", in_tmp("words.txt"));
    CHECK(ct_dataset_open_text(spec, CT_SPLIT_TRAIN, &o, &ds) == CT_ERR_INVALID_ARG &&
              has(ct_last_error(), "asks for word tokens, but the tokenizer it is given"),
          "given tokenizer of another kind: %s", ct_last_error());
    ct_tokenizer_free(&bt);

    /* errors */
    write_str(in_tmp("empty.txt"), "");
    write_file(in_tmp("nul.txt"), "abc\0def", 7);
    write_str(in_tmp("latin1.txt"), "ok ok\ncaf\xe9 au lait");
    char sp[16][800];
    snprintf(sp[0], 800, "text:%s", in_tmp("empty.txt"));
    open_fails(sp[0], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "empty.txt: empty file", NULL, NULL);
    snprintf(sp[1], 800, "text:%s:seq=10", in_tmp("ten.txt"));
    open_fails(sp[1], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "ten.txt: 10 byte tokens make no window of seq=10",
               "HINT: use a smaller seq", NULL);
    snprintf(sp[2], 800, "text:%s:sq=3", in_tmp("ten.txt"));
    open_fails(sp[2], CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "unknown option 'sq'", "tokens vocab seq test split", NULL);
    snprintf(sp[3], 800, "text:%s:seq=0", in_tmp("ten.txt"));
    open_fails(sp[3], CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "seq '0' is not an integer in [1, 65536]", NULL, NULL);
    snprintf(sp[4], 800, "text:%s:seq=70000", in_tmp("ten.txt"));
    open_fails(sp[4], CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "seq '70000'", NULL, NULL);
    snprintf(sp[5], 800, "text:%s:tokens=char", in_tmp("ten.txt"));
    open_fails(sp[5], CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "tokens=char", "byte or word", NULL);
    snprintf(sp[6], 800, "text:%s:vocab=10", in_tmp("ten.txt"));
    open_fails(sp[6], CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "vocab= sizes a word vocabulary", NULL, NULL);
    snprintf(sp[7], 800, "text:%s:test=%s:split=0.1", in_tmp("ten.txt"), in_tmp("other.txt"));
    open_fails(sp[7], CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "both test= and split=", NULL, NULL);
    snprintf(sp[8], 800, "text:%s:seq=2", in_tmp("ten.txt"));
    open_fails(sp[8], CT_SPLIT_TEST, CT_ERR_INVALID_ARG, "has no test split", ":test=FILE", ":split=F");
    snprintf(sp[9], 800, "text:%s", in_tmp("nul.txt"));
    open_fails(sp[9], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "nul.txt: a NUL byte at byte offset 3", NULL, NULL);
    snprintf(sp[10], 800, "text:%s:tokens=word:seq=1", in_tmp("latin1.txt"));
    open_fails(sp[10], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "latin1.txt: invalid UTF-8 at byte offset 9",
               "tokens=byte", NULL);
    snprintf(sp[11], 800, "text:%s:split=1.5", in_tmp("ten.txt"));
    open_fails(sp[11], CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "split '1.5' is not a fraction", NULL, NULL);
    snprintf(sp[12], 800, "text:%s:seq=5:split=0.5", in_tmp("ten.txt"));
    open_fails(sp[12], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "too few to split", NULL, NULL);
    snprintf(sp[13], 800, "text:%s", in_tmp("missing.txt"));
    open_fails(sp[13], CT_SPLIT_TRAIN, CT_ERR_IO, "cannot open", "missing.txt", NULL);
    snprintf(sp[14], 800, "text:%s:seed=3", in_tmp("ten.txt"));
    open_fails(sp[14], CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "unknown option 'seed'", NULL, NULL);
    open_fails("text", CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "HINT: write it as text:FILE", NULL, NULL);
    snprintf(sp[15], 800, "text:%s:tokens=word", in_tmp("empty.txt"));
    open_fails(sp[15], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "empty file", NULL, NULL);
}

/* ---- textdir ---- */

static void put_sample(const char *dir, const char *cls, const char *name, const char *text)
{
    char d[700], p[800];
    snprintf(d, sizeof d, "%s/%s", dir, cls);
    make_dirs(d);
    snprintf(p, sizeof p, "%s/%s", d, name);
    write_str(p, text);
}

static void test_textdir(void)
{
    const char *imdb = in_tmp("imdb");
    char tr[700], te[700], spec[800];
    snprintf(tr, sizeof tr, "%s/train", imdb);
    snprintf(te, sizeof te, "%s/test", imdb);
    put_sample(tr, "pos", "1.txt", "Great film");
    put_sample(tr, "pos", "0.txt", "Loved it, loved it!");
    put_sample(tr, "neg", "7.txt", "Awful.");
    put_sample(tr, "neg", ".hidden", "not a sample");
    put_sample(te, "pos", "a.txt", "great, great");
    put_sample(te, "neg", "b.txt", "Awful acting, awful everything, I'd rather watch paint dry");
    snprintf(spec, sizeof spec, "textdir:%s:seq=8", imdb);
    ct_dataset *ds = open_ok(spec, CT_SPLIT_TRAIN), *ts = open_ok(spec, CT_SPLIT_TEST);
    if (ds && ts) {
        CHECK(ct_dataset_count(ds) == 3 && ct_dataset_classes(ds) == 2 && ct_dataset_seq(ds) == 8,
              "3 samples, 2 classes");
        CHECK(!strcmp(ct_dataset_class_name(ds, 0), "neg") && !strcmp(ct_dataset_class_name(ds, 1), "pos") &&
                  ct_dataset_class_name(ds, 2) == NULL && ct_dataset_class_name(ds, -1) == NULL,
              "class names in sorted order");
        CHECK(ct_dataset_labels_per_sample(ds) == 1, "one label per sample");
        /* class order, then file name order; padded and truncated to 8 */
        int32_t ids[8], label = -1;
        CHECK(ct_dataset_sample_tokens(ds, 0, ids, &label) == CT_OK && label == 0, "neg first");
        CHECK(ids[0] == 'A' && ids[5] == '.' && ids[6] == CT_TOKEN_PAD && ids[7] == CT_TOKEN_PAD, "padded");
        CHECK(!strcmp(sample_text(ds, 1, &label), "Loved it") && label == 1, "truncated to 8: '%s'",
              sample_text(ds, 1, NULL));
        CHECK(!strcmp(sample_text(ds, 2, &label), "Great fi") && label == 1, "0.txt before 1.txt");
        CHECK(ct_dataset_count(ts) == 2 && !strcmp(ct_dataset_class_name(ts, 1), "pos"), "test split");
        CHECK(has(ct_dataset_name(ts), "textdir test") && has(ct_dataset_name(ts), "2 classes"), "name '%s'",
              ct_dataset_name(ts));
    }
    ct_dataset_free(&ds);
    ct_dataset_free(&ts);

    /* word tokens: the vocabulary comes from the training files only */
    snprintf(spec, sizeof spec, "textdir:%s:tokens=word:seq=4", imdb);
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    ts = open_ok(spec, CT_SPLIT_TEST);
    if (ds && ts) {
        /* it 2, loved 2, then ! , . awful film great */
        CHECK(ct_tokenizer_size(ct_dataset_tokenizer(ds)) == 10, "8 words + 2: %zu",
              ct_tokenizer_size(ct_dataset_tokenizer(ds)));
        CHECK(!strcmp(sample_text(ds, 1, NULL), "loved it , loved"), "words '%s'", sample_text(ds, 1, NULL));
        CHECK(!strcmp(sample_text(ts, 0, NULL), "awful <unk> , awful"), "test words '%s'", sample_text(ts, 0, NULL));
    }
    ct_dataset_free(&ds);
    ct_dataset_free(&ts);

    /* one folder, split stratified by seed */
    const char *flat = in_tmp("flat");
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 8; i++) {
            char cls[8], name[16], text[32];
            snprintf(cls, sizeof cls, "c%d", c);
            snprintf(name, sizeof name, "%02d.txt", i);
            snprintf(text, sizeof text, "%d%d", c, i);
            put_sample(flat, cls, name, text);
        }
    snprintf(spec, sizeof spec, "textdir:%s:seq=2:split=0.25:seed=5", flat);
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    ts = open_ok(spec, CT_SPLIT_TEST);
    if (ds && ts) {
        CHECK(ct_dataset_count(ds) == 18 && ct_dataset_count(ts) == 6, "split 18 + 6");
        int per_class[3] = { 0 }, seen[3][8] = { { 0 } };
        for (size_t i = 0; i < 24; i++) {
            const ct_dataset *d = i < 18 ? ds : ts;
            int32_t label = -1;
            const char *t = sample_text(d, i < 18 ? i : i - 18, &label);
            int c = t[0] - '0', k = t[1] - '0';
            CHECK(c == label && c >= 0 && c < 3 && k >= 0 && k < 8, "sample '%s' label %d", t, label);
            if (c >= 0 && c < 3 && k >= 0 && k < 8) {
                seen[c][k]++;
                per_class[c] += i >= 18;
            }
        }
        for (int c = 0; c < 3; c++) {
            CHECK(per_class[c] == 2, "class %d: %d test samples, want 2 (stratified)", c, per_class[c]);
            for (int k = 0; k < 8; k++)
                CHECK(seen[c][k] == 1, "file %d of class %d in exactly one split", k, c);
        }
    }
    /* the same seed gives the same split; another seed another */
    ct_dataset *again = open_ok(spec, CT_SPLIT_TEST), *other = NULL;
    snprintf(spec, sizeof spec, "textdir:%s:seq=2:split=0.25:seed=6", flat);
    other = open_ok(spec, CT_SPLIT_TEST);
    if (ts && again && other) {
        int same = 1, differs = 0;
        for (size_t i = 0; i < 6; i++) {
            char a[8];
            snprintf(a, sizeof a, "%s", sample_text(ts, i, NULL));
            same &= !strcmp(a, sample_text(again, i, NULL));
            differs |= !!strcmp(a, sample_text(other, i, NULL));
        }
        CHECK(same && differs, "seeded split: same %d, differs %d", same, differs);
    }
    ct_dataset_free(&again);
    ct_dataset_free(&other);
    ct_dataset_free(&ds);
    ct_dataset_free(&ts);

    /* given class names map the folders */
    const char *names[] = { "c9", "c2", "c1", "c0" };
    ct_text_options o;
    ct_text_defaults(&o);
    o.classes = names;
    o.nclasses = 4;
    snprintf(spec, sizeof spec, "textdir:%s:seq=2", flat);
    CHECK(ct_dataset_open_text(spec, CT_SPLIT_TRAIN, &o, &ds) == CT_OK && ds, "given classes: %s", ct_last_error());
    if (ds) {
        int32_t label = -1;
        CHECK(ct_dataset_classes(ds) == 4 && !strcmp(ct_dataset_class_name(ds, 0), "c9"), "4 given classes");
        CHECK(!strcmp(sample_text(ds, 0, &label), "00") && label == 3, "c0 is class 3: %d", label);
    }
    ct_dataset_free(&ds);
    o.nclasses = 2;
    CHECK(ct_dataset_open_text(spec, CT_SPLIT_TRAIN, &o, &ds) == CT_ERR_CORRUPT &&
              has(ct_last_error(), "/c0: no class 'c0' in the class names given"),
          "folder outside the given classes: %s", ct_last_error());

    /* errors */
    const char *one = in_tmp("one");
    put_sample(one, "only", "a.txt", "text");
    char sp[12][800];
    snprintf(sp[0], 800, "textdir:%s", one);
    open_fails(sp[0], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "holds 1 class folder (only)", "at least two", NULL);
    const char *none = in_tmp("none");
    make_dirs(none);
    write_str(in_tmp("none/stray.txt"), "a file, not a class");
    snprintf(sp[1], 800, "textdir:%s", none);
    open_fails(sp[1], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "holds 0 class folders", NULL, NULL);
    const char *emp = in_tmp("emptyfile");
    put_sample(emp, "a", "x.txt", "fine");
    put_sample(emp, "b", "y.txt", "");
    snprintf(sp[2], 800, "textdir:%s", emp);
    open_fails(sp[2], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "emptyfile/b/y.txt: empty file", NULL, NULL);
    const char *ws = in_tmp("blank");
    put_sample(ws, "a", "x.txt", "fine");
    put_sample(ws, "b", "y.txt", " \n\t ");
    snprintf(sp[3], 800, "textdir:%s:tokens=word", ws);
    open_fails(sp[3], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "blank/b/y.txt: no words, only white space", NULL, NULL);
    const char *nof = in_tmp("nofiles");
    put_sample(nof, "a", "x.txt", "fine");
    make_dirs(in_tmp("nofiles/b"));
    snprintf(sp[4], 800, "textdir:%s", nof);
    open_fails(sp[4], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "nofiles/b holds no files", NULL, NULL);
    put_sample(te, "neutral", "n.txt", "meh");
    snprintf(sp[5], 800, "textdir:%s", imdb);
    open_fails(sp[5], CT_SPLIT_TEST, CT_ERR_CORRUPT, "test/neutral: no class 'neutral' in", "imdb/train", NULL);
    snprintf(sp[6], 800, "textdir:%s:split=0.2", imdb);
    open_fails(sp[6], CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "has train/ and test/ folders", NULL, NULL);
    snprintf(sp[7], 800, "textdir:%s", flat);
    open_fails(sp[7], CT_SPLIT_TEST, CT_ERR_INVALID_ARG, "has no test split", ":split=F", NULL);
    const char *lat = in_tmp("latin");
    put_sample(lat, "a", "x.txt", "fine");
    put_sample(lat, "b", "y.txt", "na\xefve");
    snprintf(sp[8], 800, "textdir:%s:tokens=word", lat);
    open_fails(sp[8], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "latin/b/y.txt: invalid UTF-8 at byte offset 2", NULL, NULL);
    snprintf(sp[9], 800, "textdir:%s", lat);
    ds = open_ok(sp[9], CT_SPLIT_TRAIN); /* byte tokens take it */
    ct_dataset_free(&ds);
    snprintf(sp[10], 800, "textdir:%s:split=0.01", flat);
    open_fails(sp[10], CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "leaves the test split empty", NULL, NULL);
    snprintf(sp[11], 800, "textdir:%s/missing", tmp);
    open_fails(sp[11], CT_SPLIT_TRAIN, CT_ERR_IO, "missing is not a folder", NULL, NULL);
    open_fails("textdir:/x:vocab=5", CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "vocab= sizes a word vocabulary", NULL, NULL);
    open_fails("textdir:/x:test=y", CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "unknown option 'test'", NULL, NULL);
}

/* ---- CSV text ---- */

static void test_csv_text(void)
{
    const char *csv = in_tmp("reviews.csv");
    write_str(csv, "label,text\r\n"
                   "pos,\"Good, really \"\"good\"\"\"\r\n"
                   "\r\n"
                   "neg,  plain text  \n"
                   "neutral,\"two\nlines\"\n"
                   "pos ,\"\"\n"
                   "neg,last\n");
    char spec[800];
    snprintf(spec, sizeof spec, "csv:%s:text=text:label=label:seq=24", csv);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "reviews.csv:7: the text field is empty", NULL, NULL);
    write_str(csv, "label,text\r\n"
                   "pos,\"Good, really \"\"good\"\"\"\r\n"
                   "\r\n"
                   "neg,  plain text  \n"
                   "neutral,\"two\nlines\"\n"
                   "pos , \"x\" \n"
                   "neg,last");
    ct_dataset *ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds) {
        CHECK(ct_dataset_count(ds) == 5 && ct_dataset_classes(ds) == 3, "5 rows, 3 classes: %zu %d",
              ct_dataset_count(ds), ct_dataset_classes(ds));
        CHECK(!strcmp(ct_dataset_class_name(ds, 0), "neg") && !strcmp(ct_dataset_class_name(ds, 1), "neutral") &&
                  !strcmp(ct_dataset_class_name(ds, 2), "pos"),
              "class names in byte order");
        const char *want[] = { "Good, really \"good\"", "plain text", "two\nlines", "x", "last" };
        int32_t labels[] = { 2, 0, 1, 2, 0 }, label = -1;
        for (size_t i = 0; i < 5; i++) {
            const char *t = sample_text(ds, i, &label);
            CHECK(!strcmp(t, want[i]) && label == labels[i], "row %zu: '%s' label %d", i, t, label);
        }
    }
    ct_dataset_free(&ds);
    /* by index, header=auto with indices: no header unless told */
    snprintf(spec, sizeof spec, "csv:%s:text=1:label=0:header=yes:seq=4", csv);
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds)
        CHECK(ct_dataset_count(ds) == 5 && !strcmp(sample_text(ds, 0, NULL), "Good"), "by index");
    ct_dataset_free(&ds);

    /* integer labels are the ids; classes=K bounds them */
    const char *ints = in_tmp("ints.csv");
    write_str(ints, "3,three\n0,zero\n1,one\n");
    snprintf(spec, sizeof spec, "csv:%s:text=1", ints);
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds) {
        int32_t label = -1;
        CHECK(ct_dataset_classes(ds) == 4 && !strcmp(ct_dataset_class_name(ds, 3), "3"), "integer classes");
        CHECK(!strcmp(sample_text(ds, 0, &label), "three") && label == 3, "label 3");
    }
    ct_dataset_free(&ds);
    snprintf(spec, sizeof spec, "csv:%s:text=1:classes=3", ints);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "ints.csv:1:1: label 3 out of range for classes=3", NULL, NULL);

    /* test=FILE with the training file's class names */
    const char *tst = in_tmp("reviews_test.csv");
    write_str(tst, "text,label\nnice,pos\nbad,neg\n");
    snprintf(spec, sizeof spec, "csv:%s:text=text:label=label:test=%s", csv, tst);
    ds = open_ok(spec, CT_SPLIT_TEST);
    if (ds) {
        int32_t label = -1;
        CHECK(ct_dataset_count(ds) == 2 && ct_dataset_classes(ds) == 3, "test csv");
        CHECK(!strcmp(sample_text(ds, 0, &label), "nice") && label == 2, "test label by name");
    }
    ct_dataset_free(&ds);
    write_str(tst, "text,label\nnice,great\n");
    open_fails(spec, CT_SPLIT_TEST, CT_ERR_CORRUPT, "reviews_test.csv:2:6: label 'great' is not a class of",
               "reviews.csv", NULL);

    /* split=F */
    const char *big = in_tmp("big.csv");
    FILE *f = fopen(big, "w");
    for (int i = 0; f && i < 40; i++)
        fprintf(f, "%s,\"row %d, of %s\"\n", i % 2 ? "odd" : "even", i, i % 2 ? "odd" : "even");
    if (f)
        fclose(f);
    snprintf(spec, sizeof spec, "csv:%s:text=1:label=0:split=0.25", big);
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    ct_dataset *ts = open_ok(spec, CT_SPLIT_TEST);
    if (ds && ts) {
        CHECK(ct_dataset_count(ds) == 30 && ct_dataset_count(ts) == 10, "csv split %zu + %zu",
              ct_dataset_count(ds), ct_dataset_count(ts));
        int odd = 0;
        for (size_t i = 0; i < 10; i++) {
            int32_t label = -1;
            sample_text(ts, i, &label);
            odd += label == 1;
        }
        CHECK(odd == 5, "stratified: %d odd of 10", odd);
    }
    ct_dataset_free(&ds);
    ct_dataset_free(&ts);

    /* word tokens on CSV text */
    snprintf(spec, sizeof spec, "csv:%s:text=text:label=label:tokens=word:seq=6", csv);
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds)
        CHECK(!strcmp(sample_text(ds, 0, NULL), "good , really \" good \""), "csv words '%s'",
              sample_text(ds, 0, NULL));
    ct_dataset_free(&ds);

    /* errors, each with FILE:LINE:COLUMN */
    struct {
        const char *text, *opts, *want;
    } bad[] = {
        { "label,text\npos,\"never closed\nneg,x\n", "", "bad.csv:2:5: the quote opened here is never closed" },
        { "label,text\npos,\"closed\"x\n", "", "bad.csv:2:13: text after the closing quote" },
        { "label,text\npos,say \"hi\"\n", "", "bad.csv:2:9: a quote inside an unquoted field" },
        { "label,text\npos,a,b\n", "", "bad.csv:2:7: 3 fields, want 2" },
        { "label,text\n,a\n", "", "bad.csv:2:1: the label is empty" },
        { "label,text\n", "", "bad.csv: no data rows" },
        { "label,words\npos,a\n", "", "no text column 'text'" },
        { "0,a\n", ":header=no", "no text column 'text' (the file has no header row)" },
        { "label,text\npos,caf\xe9\n", ":tokens=word", "bad.csv:2:8: invalid UTF-8 at byte offset 18" },
        { "label,text\npos,a\0b\n", "", "bad.csv:2:6: a NUL byte at byte offset 16" },
        { "one\n", ":text=0", "bad.csv:1:1: 1 field, want a label and a text" },
        { "label,text\npos,a\n", ":label=text", "text= and label= name the same column" },
    };
    const char *bp = in_tmp("bad.csv");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(bp, bad[i].text, strlen(bad[i].text) + (strstr(bad[i].want, "NUL") ? 4 : 0));
        if (!strcmp(bad[i].opts, ":text=0"))
            snprintf(spec, sizeof spec, "csv:%s:text=0:label=1", bp);
        else
            snprintf(spec, sizeof spec, "csv:%s:text=text%s", bp, bad[i].opts);
        open_fails(spec, CT_SPLIT_TRAIN, strstr(bad[i].want, "no text column") || strstr(bad[i].want, "same column")
                                             ? CT_ERR_INVALID_ARG
                                             : CT_ERR_CORRUPT,
                   bad[i].want, NULL, NULL);
    }
    snprintf(spec, sizeof spec, "csv:%s:text=text:header=maybe", bp);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "header=maybe", NULL, NULL);
    snprintf(spec, sizeof spec, "csv:%s:text=text:foo=1", bp);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "unknown option 'foo'", NULL, NULL);
    snprintf(spec, sizeof spec, "csv:%s:text=text", bp);
    open_fails(spec, CT_SPLIT_TEST, CT_ERR_INVALID_ARG, "has no test split", NULL, NULL);
    /* the numeric CSV reader is unchanged: seq= is not its option */
    snprintf(spec, sizeof spec, "csv:%s:seq=4", bp);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "unknown option 'seq'", NULL, NULL);
}

/* ---- the loader's (T, N) batches ---- */

static void test_loader_layout(void)
{
    /* 5 windows of 3 */
    write_str(in_tmp("abc.txt"), "ABCDEFGHIJKLMNOP");
    char spec[800];
    snprintf(spec, sizeof spec, "text:%s:seq=3", in_tmp("abc.txt"));
    ct_dataset *ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (!ds)
        return;
    for (int prefetch = 0; prefetch < 2; prefetch++) {
        ct_loader_options o;
        ct_loader_defaults(&o);
        o.batch = 2;
        o.shuffle = 0;
        o.prefetch = prefetch;
        ct_loader *l = NULL;
        CHECK(ct_loader_create(ds, &o, &l) == CT_OK && ct_loader_batches(l) == 3, "loader");
        ct_loader_start_epoch(l, 0);
        ct_batch b;
        CHECK(ct_loader_next(l, &b) == CT_OK && b.n == 2 && b.seq == 3 && b.stride == 2 && !b.x && b.tokens,
              "text batch fields");
        /* [t][n]: window 0 = ABC -> BCD, window 1 = DEF -> EFG */
        const char *x = "ADBECF", *y = "BECFDG";
        for (int k = 0; k < 6; k++)
            CHECK(b.tokens[k] == x[k] && b.y[k] == y[k], "batch 0 element %d: %c %c", k, (char)b.tokens[k],
                  (char)b.y[k]);
        ct_loader_next(l, &b);
        ct_loader_next(l, &b);
        /* window 4 alone: MNO -> NOP; column 1 is padding */
        CHECK(b.n == 1 && b.number == 2 && b.stride == 2, "partial batch");
        const int32_t px[] = { 'M', 0, 'N', 0, 'O', 0 }, py[] = { 'N', 0, 'O', 0, 'P', 0 };
        for (int k = 0; k < 6; k++)
            CHECK(b.tokens[k] == px[k] && b.y[k] == py[k], "partial element %d", k);
        CHECK(ct_loader_next(l, &b) == CT_OK && b.n == 0, "end of epoch");
        ct_loader_free(&l);
    }
    /* shuffled: every window once per epoch, columns follow b.index */
    ct_loader_options o;
    ct_loader_defaults(&o);
    o.batch = 4;
    o.seed = 3;
    ct_loader *l = NULL;
    CHECK(ct_loader_create(ds, &o, &l) == CT_OK, "shuffled loader");
    int seen[5] = { 0 };
    for (uint64_t e = 0; l && e < 2; e++) {
        ct_loader_start_epoch(l, e);
        ct_batch b;
        while (ct_loader_next(l, &b) == CT_OK && b.n)
            for (size_t i = 0; i < b.n; i++) {
                size_t w = b.index[i];
                CHECK(w < 5 && b.tokens[0 * 4 + i] == (int32_t)('A' + 3 * w) &&
                          b.tokens[2 * 4 + i] == (int32_t)('C' + 3 * w) && b.y[2 * 4 + i] == (int32_t)('D' + 3 * w),
                      "column %zu is window %zu", i, w);
                if (w < 5)
                    seen[w]++;
            }
    }
    for (int w = 0; w < 5; w++)
        CHECK(seen[w] == 2, "window %d seen %d times in 2 epochs", w, seen[w]);
    ct_loader_free(&l);
    ct_dataset_free(&ds);

    /* classification: tokens (T, N), labels (n) */
    snprintf(spec, sizeof spec, "textdir:%s:seq=3", in_tmp("imdb"));
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds) {
        ct_loader_defaults(&o);
        o.batch = 2;
        o.shuffle = 0;
        o.prefetch = 0;
        CHECK(ct_loader_create(ds, &o, &l) == CT_OK, "classification loader");
        ct_loader_start_epoch(l, 0);
        ct_batch b;
        CHECK(ct_loader_next(l, &b) == CT_OK && b.n == 2 && b.y[0] == 0 && b.y[1] == 1, "labels (n)");
        /* Awf / Lov */
        CHECK(b.tokens[0] == 'A' && b.tokens[1] == 'L' && b.tokens[2] == 'w' && b.tokens[3] == 'o' &&
                  b.tokens[4] == 'f' && b.tokens[5] == 'v',
              "classification (T, N)");
        ct_loader_free(&l);
        o.crop_pad = 4;
        CHECK(ct_loader_create(ds, &o, &l) == CT_ERR_INVALID_ARG, "no crops for text");
    }
    ct_dataset_free(&ds);

    /* image data is untouched: no tokens */
    ds = open_ok("synthetic:1,2,2:3:5", CT_SPLIT_TRAIN);
    if (ds) {
        ct_loader_defaults(&o);
        o.batch = 2;
        CHECK(ct_loader_create(ds, &o, &l) == CT_OK, "synthetic loader");
        ct_loader_start_epoch(l, 0);
        ct_batch b;
        CHECK(ct_loader_next(l, &b) == CT_OK && b.x && !b.tokens && b.seq == 0 && b.stride == 0,
              "image batches carry no tokens");
        CHECK(ct_dataset_seq(ds) == 0 && ct_dataset_tokenizer(ds) == NULL && ct_dataset_class_name(ds, 0) == NULL &&
                  ct_dataset_labels_per_sample(ds) == 1,
              "image dataset text accessors");
        int32_t ids[4];
        CHECK(ct_dataset_sample_tokens(ds, 0, ids, NULL) == CT_ERR_UNSUPPORTED, "no tokens in images");
        ct_loader_free(&l);
    }
    ct_dataset_free(&ds);
}

/* ---- the real fortunes ---- */

static int fortunes(const char *langid, const char *lm_train, const char *lm_test)
{
    char spec[1200];
    snprintf(spec, sizeof spec, "textdir:%s:seq=128", langid);
    ct_dataset *tr = open_ok(spec, CT_SPLIT_TRAIN), *te = open_ok(spec, CT_SPLIT_TEST);
    if (tr && te) {
        CHECK(ct_dataset_classes(tr) == 8 && ct_dataset_count(tr) == 8 * 900 && ct_dataset_count(te) == 8 * 150,
              "langid: %d classes, %zu + %zu samples", ct_dataset_classes(tr), ct_dataset_count(tr),
              ct_dataset_count(te));
        printf("langid: %s: %zu train, %zu test samples, classes", ct_dataset_name(tr), ct_dataset_count(tr),
               ct_dataset_count(te));
        for (int k = 0; k < ct_dataset_classes(tr); k++)
            printf(" %s", ct_dataset_class_name(tr, k));
        printf("\n");
        size_t padded = 0, n = ct_dataset_count(tr);
        int32_t ids[128], label;
        for (size_t i = 0; i < n; i++)
            if (!ct_dataset_sample_tokens(tr, i, ids, &label) && ids[127] == CT_TOKEN_PAD)
                padded++;
        printf("langid: %zu of %zu training samples shorter than 128 bytes\n", padded, n);
    }
    ct_dataset_free(&tr);
    ct_dataset_free(&te);
    snprintf(spec, sizeof spec, "textdir:%s:tokens=word:vocab=20000:seq=32", langid);
    tr = open_ok(spec, CT_SPLIT_TRAIN);
    if (tr)
        printf("langid words: %zu ids\n", ct_tokenizer_size(ct_dataset_tokenizer(tr)));
    ct_dataset_free(&tr);

    snprintf(spec, sizeof spec, "text:%s:seq=64:test=%s", lm_train, lm_test);
    tr = open_ok(spec, CT_SPLIT_TRAIN);
    te = open_ok(spec, CT_SPLIT_TEST);
    if (tr && te) {
        CHECK(ct_dataset_count(tr) > 30000 && ct_dataset_count(te) > 3000, "LM windows %zu + %zu",
              ct_dataset_count(tr), ct_dataset_count(te));
        printf("lm bytes: %zu train, %zu test windows of 64\n", ct_dataset_count(tr), ct_dataset_count(te));
    }
    ct_dataset_free(&tr);
    ct_dataset_free(&te);
    snprintf(spec, sizeof spec, "text:%s:tokens=word:vocab=10000:seq=32:test=%s", lm_train, lm_test);
    tr = open_ok(spec, CT_SPLIT_TRAIN);
    te = open_ok(spec, CT_SPLIT_TEST);
    if (tr && te) {
        size_t unk = 0, total = 0, n = ct_dataset_count(te);
        int32_t ids[32];
        for (size_t i = 0; i < n; i++)
            if (!ct_dataset_sample_tokens(te, i, ids, NULL))
                for (int t = 0; t < 32; t++, total++)
                    unk += ids[t] == CT_TOKEN_UNK;
        printf("lm words: %zu train, %zu test windows of 32, vocabulary %zu ids, %.1f%% of test tokens "
               "<unk>\n",
               ct_dataset_count(tr), n, ct_tokenizer_size(ct_dataset_tokenizer(tr)),
               total ? 100.0 * (double)unk / (double)total : 0.0);
        CHECK(ct_tokenizer_size(ct_dataset_tokenizer(tr)) == 10002, "full vocabulary");
    }
    ct_dataset_free(&tr);
    ct_dataset_free(&te);
    return tcheck_done("test_text --fortunes");
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--fortunes"))
        return fortunes(argv[2], argv[3], argv[4]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_text [--fortunes LANGID_DIR LM_TRAIN LM_TEST]\n");
        return 2;
    }
    const char *t = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/ct_test_text_XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_text_lm();
    test_textdir();
    test_csv_text();
    test_loader_layout();
    remove_tree(tmp);
    return tcheck_done("test_text");
}
