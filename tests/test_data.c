/*
 * test_data - the dataset readers: crafted IDX / CIFAR-10 / CSV files (good
 * ones load with the right values, each kind of damage fails with the
 * stated status and a message naming the file and the record or line),
 * synthetic data, and the real Fashion-MNIST when its Debian package is
 * installed. The shuffle and the loader are test_loader's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cltrain/cltrain.h"
#include "data/dataset.h"
#include "tcheck.h"
#include "tdataset.h"

static char tmp[256];

/* ---- writing crafted files ---- */

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static char *path_in(const char *dir, const char *name)
{
    static char buf[4][1200];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Each directory keeps its own buffer: tests hold several at once. */
static char *make_dir(const char *name)
{
    static char dirs[16][600];
    static int k;
    char *d = dirs[k++ % 16];
    snprintf(d, sizeof dirs[0], "%s/%s", tmp, name);
    CHECK(mkdir(d, 0700) == 0, "mkdir %s", d);
    return d;
}

static void write_bytes(const char *path, const void *data, size_t n, int gz)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        CHECK(f && gzwrite(f, data, (unsigned)n) == (int)n && gzclose(f) == Z_OK, "gzwrite %s", path);
        return;
    }
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "write %s", path);
}

static uint8_t pixel(size_t i)
{
    return (uint8_t)(i * 7 + 3);
}

/* An IDX image file of n images h x w holding pixel(i); `keep` bytes of it
 * (0: all) and `extra` garbage bytes after. */
static void write_images(const char *path, uint32_t magic, uint32_t n, uint32_t h, uint32_t w,
                         size_t keep, size_t extra, int gz)
{
    size_t size = 16 + (size_t)n * h * w;
    uint8_t *b = calloc(size + extra, 1);
    put_be32(b, magic);
    put_be32(b + 4, n);
    put_be32(b + 8, h);
    put_be32(b + 12, w);
    for (size_t i = 0; i < (size_t)n * h * w; i++)
        b[16 + i] = pixel(i);
    write_bytes(path, b, keep ? keep : size + extra, gz);
    free(b);
}

static void write_labels(const char *path, uint32_t n, const uint8_t *labels, size_t extra, int gz)
{
    uint8_t *b = calloc(8 + n + extra, 1);
    put_be32(b, 0x801);
    put_be32(b + 4, n);
    memcpy(b + 8, labels, n);
    write_bytes(path, b, 8 + n + extra, gz);
    free(b);
}

static const uint8_t lab5[5] = { 3, 1, 4, 1, 5 };

/* A good split: 5 images of 3x4 */
static void write_split(const char *dir, const char *prefix, int gz)
{
    char name[128];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte%s", prefix, gz ? ".gz" : "");
    write_images(path_in(dir, name), 0x803, 5, 3, 4, 0, 0, gz);
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte%s", prefix, gz ? ".gz" : "");
    write_labels(path_in(dir, name), 5, lab5, 0, gz);
}

/* ---- checking ---- */

/* Sample values of a crafted IDX split: pixel(i)/255 with mean 0, std 1. */
static void check_idx_values(ct_dataset *ds, const char *what)
{
    int c, h, w;
    ct_dataset_shape(ds, &c, &h, &w);
    CHECK(ct_dataset_count(ds) == 5 && c == 1 && h == 3 && w == 4, "%s: %zu x (%d, %d, %d)", what,
          ct_dataset_count(ds), c, h, w);
    float zero = 0, one = 1, x[12];
    CHECK(ct_dataset_set_norm(ds, &zero, &one, 1) == CT_OK, "%s: set_norm", what);
    double worst = 0;
    for (size_t s = 0; s < 5; s++) {
        int32_t y = -1;
        CHECK(ct_dataset_sample(ds, s, x, &y) == CT_OK, "%s: sample %zu", what, s);
        CHECK(y == lab5[s], "%s: label %zu = %d, want %d", what, s, (int)y, lab5[s]);
        for (int i = 0; i < 12; i++)
            worst = fmax(worst, fabs(x[i] - pixel(s * 12 + (size_t)i) / 255.0));
    }
    /* one float rounding of v/255 */
    CHECK(worst < 1e-7, "%s: pixel values off by %g", what, worst);
    CHECK(ct_dataset_sample(ds, 5, x, NULL) == CT_ERR_INVALID_ARG, "%s: sample 5 of 5", what);
}

static void test_idx_good(void)
{
    char *d = make_dir("idx");
    write_split(d, "train", 0);
    write_split(d, "t10k", 1);
    char spec[600];
    snprintf(spec, sizeof spec, "idx:%s", d);
    ct_dataset *ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds) {
        check_idx_values(ds, "idx plain");
        CHECK(ct_dataset_classes(ds) == 6, "idx classes = %d, want 6 (largest label + 1)",
              ct_dataset_classes(ds));
        CHECK(strstr(ct_dataset_name(ds), "train-images-idx3-ubyte") != NULL, "name '%s'",
              ct_dataset_name(ds));
    }
    ct_dataset_free(&ds);
    CHECK(ds == NULL, "free clears the pointer");
    ds = open_ok(spec, CT_SPLIT_TEST);
    if (ds)
        check_idx_values(ds, "idx .gz");
    ct_dataset_free(&ds);
    /* a bare directory is an IDX directory */
    ds = open_ok(d, CT_SPLIT_TEST);
    if (ds)
        check_idx_values(ds, "bare dir");
    ct_dataset_free(&ds);
    /* mnist: 10 classes and its normalization constants */
    snprintf(spec, sizeof spec, "mnist:%s", d);
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds) {
        float m, s, x[12];
        CHECK(ct_dataset_classes(ds) == 10, "mnist classes %d", ct_dataset_classes(ds));
        CHECK(ct_dataset_get_norm(ds, &m, &s, 1) == CT_OK && m == 0.1307f && s == 0.3081f,
              "mnist norm %g / %g", (double)m, (double)s);
        ct_dataset_sample(ds, 1, x, NULL);
        double want = (pixel(12 + 5) / 255.0 - 0.1307) / 0.3081;
        CHECK(fabs(x[5] - want) < 1e-6, "mnist normalized %g, want %g", (double)x[5], want);
        CHECK(ct_dataset_set_norm(ds, &m, &(float){ 0 }, 1) == CT_ERR_INVALID_ARG, "std 0 refused");
        CHECK(ct_dataset_set_norm(ds, &m, &s, 3) == CT_ERR_INVALID_ARG, "3 channels of 1 refused");
    }
    ct_dataset_free(&ds);
    snprintf(spec, sizeof spec, "idx:%s:classes=5", d);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "train-labels-idx1-ubyte", "record 4",
               "label 5 out of range for 5 classes");
}

static void test_idx_bad(void)
{
    char spec[600];
    uint8_t five[5] = { 0, 1, 2, 3, 4 };
    char *d;

    d = make_dir("magic");
    write_images(path_in(d, "train-images-idx3-ubyte"), 0x801, 5, 3, 4, 0, 0, 0);
    write_labels(path_in(d, "train-labels-idx1-ubyte"), 5, five, 0, 0);
    snprintf(spec, sizeof spec, "idx:%s", d);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "magic/train-images-idx3-ubyte",
               "magic 0x00000801", "swapped");

    d = make_dir("trunc");
    /* 4.5 images: image record 4 has 6 of its 12 bytes */
    write_images(path_in(d, "train-images-idx3-ubyte.gz"), 0x803, 5, 3, 4, 16 + 54, 0, 1);
    write_labels(path_in(d, "train-labels-idx1-ubyte"), 5, five, 0, 0);
    snprintf(spec, sizeof spec, "idx:%s", d);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "trunc/train-images-idx3-ubyte.gz",
               "truncated", "image record 4 (6 of its 12 bytes");

    d = make_dir("trunchead");
    write_images(path_in(d, "train-images-idx3-ubyte"), 0x803, 5, 3, 4, 10, 0, 0);
    write_labels(path_in(d, "train-labels-idx1-ubyte"), 5, five, 0, 0);
    snprintf(spec, sizeof spec, "idx:%s", d);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "trunchead/train-images-idx3-ubyte",
               "truncated header", NULL);

    d = make_dir("garbage");
    write_images(path_in(d, "train-images-idx3-ubyte"), 0x803, 5, 3, 4, 0, 0, 0);
    write_labels(path_in(d, "train-labels-idx1-ubyte"), 5, five, 3, 0);
    snprintf(spec, sizeof spec, "idx:%s", d);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "garbage/train-labels-idx1-ubyte",
               "trailing garbage: 3 bytes", "where record 5 would start");

    d = make_dir("count");
    write_images(path_in(d, "train-images-idx3-ubyte"), 0x803, 5, 3, 4, 0, 0, 0);
    write_labels(path_in(d, "train-labels-idx1-ubyte"), 4, five, 0, 0);
    snprintf(spec, sizeof spec, "idx:%s", d);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "count/train-images-idx3-ubyte holds 5 images",
               "count/train-labels-idx1-ubyte holds 4 labels", NULL);

    d = make_dir("range");
    uint8_t bad[5] = { 0, 1, 10, 3, 4 };
    write_images(path_in(d, "train-images-idx3-ubyte"), 0x803, 5, 3, 4, 0, 0, 0);
    write_labels(path_in(d, "train-labels-idx1-ubyte.gz"), 5, bad, 0, 1);
    snprintf(spec, sizeof spec, "mnist:%s", d);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "range/train-labels-idx1-ubyte.gz",
               "record 2", "label 10 out of range for 10 classes");

    /* a .gz cut short: the gzip stream itself is truncated */
    d = make_dir("gzcut");
    write_images(path_in(d, "train-images-idx3-ubyte.gz"), 0x803, 50, 16, 16, 0, 0, 1);
    write_labels(path_in(d, "train-labels-idx1-ubyte"), 5, five, 0, 0);
    {
        const char *p = path_in(d, "train-images-idx3-ubyte.gz");
        struct stat sb;
        CHECK(stat(p, &sb) == 0 && truncate(p, sb.st_size / 2) == 0, "truncate %s", p);
    }
    snprintf(spec, sizeof spec, "idx:%s", d);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_CORRUPT, "gzcut/train-images-idx3-ubyte.gz", "cut off",
               NULL);

    /* missing files, missing directories, bad specs */
    snprintf(spec, sizeof spec, "idx:%s", d);
    open_fails(spec, CT_SPLIT_TEST, CT_ERR_IO, "no t10k-images-idx3-ubyte(.gz)", "gzcut", NULL);
    open_fails("fashion-mnist:/nonexistent/dir", CT_SPLIT_TRAIN, CT_ERR_IO, "/nonexistent/dir",
               "HINT", NULL);
    open_fails("mnist", CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "mnist:DIR", NULL, NULL);
    open_fails("imagenet", CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "unknown dataset 'imagenet'", "HINT",
               NULL);
    open_fails("mnist:/x:colour=red", CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "unknown option 'colour'",
               NULL, NULL);
    open_fails("synthetic:3,8,8:10:100", 2, CT_ERR_INVALID_ARG, "split 2", NULL, NULL);
}

/* ---- CIFAR-10 ---- */

static void write_cifar(const char *path, size_t n, size_t keep, int bad_record)
{
    size_t size = n * 3073;
    uint8_t *b = malloc(size);
    for (size_t r = 0; r < n; r++) {
        b[r * 3073] = (uint8_t)((int)r == bad_record ? 10 : r % 10);
        for (size_t i = 0; i < 3072; i++)
            b[r * 3073 + 1 + i] = pixel(r * 3072 + i);
    }
    write_bytes(path, b, keep ? keep : size, 0);
    free(b);
}

static void test_cifar(void)
{
    char *d = make_dir("cifar"), spec[600], name[64];
    for (int f = 1; f <= 5; f++) {
        snprintf(name, sizeof name, "data_batch_%d.bin", f);
        write_cifar(path_in(d, name), 2, 0, -1);
    }
    write_cifar(path_in(d, "test_batch.bin"), 3, 0, -1);
    snprintf(spec, sizeof spec, "cifar10:%s", d);
    ct_dataset *ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds) {
        int c, h, w;
        ct_dataset_shape(ds, &c, &h, &w);
        CHECK(ct_dataset_count(ds) == 10 && c == 3 && h == 32 && w == 32 && ct_dataset_classes(ds) == 10,
              "cifar train %zu x (%d, %d, %d), %d classes", ct_dataset_count(ds), c, h, w,
              ct_dataset_classes(ds));
        float m[3], s[3];
        CHECK(ct_dataset_get_norm(ds, m, s, 3) == CT_OK && m[1] == 0.4822f && s[2] == 0.2616f,
              "cifar norm");
        float *x = malloc(3072 * sizeof *x);
        int32_t y;
        /* sample 7 is record 1 of data_batch_4.bin */
        ct_dataset_sample(ds, 7, x, &y);
        CHECK(y == 1, "cifar sample 7 label %d", (int)y);
        double worst = 0;
        for (int i = 0; i < 3072; i++) {
            int ch = i / 1024;
            double want = (pixel(3072 + (size_t)i) / 255.0 - m[ch]) / s[ch];
            worst = fmax(worst, fabs(x[i] - want));
        }
        /* float arithmetic of values of magnitude < 3: a few ulps */
        CHECK(worst < 2e-6, "cifar pixels off by %g", worst);
        free(x);
    }
    ct_dataset_free(&ds);
    ds = open_ok(spec, CT_SPLIT_TEST);
    CHECK(ds && ct_dataset_count(ds) == 3, "cifar test count %zu", ct_dataset_count(ds));
    ct_dataset_free(&ds);

    /* the parent of cifar-10-batches-bin works too */
    char *parent = make_dir("cifarparent");
    char sub[600];
    snprintf(sub, sizeof sub, "%s/cifar-10-batches-bin", parent);
    CHECK(mkdir(sub, 0700) == 0, "mkdir %s", sub);
    write_cifar(path_in(sub, "test_batch.bin"), 2, 0, -1);
    snprintf(spec, sizeof spec, "cifar10:%s", parent);
    ds = open_ok(spec, CT_SPLIT_TEST);
    CHECK(ds && ct_dataset_count(ds) == 2, "cifar subdir count %zu", ct_dataset_count(ds));
    ct_dataset_free(&ds);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_IO, "data_batch_1.bin", "no such file", NULL);

    d = make_dir("cifarbad");
    write_cifar(path_in(d, "test_batch.bin"), 3, 2 * 3073 + 100, -1);
    snprintf(spec, sizeof spec, "cifar10:%s", d);
    open_fails(spec, CT_SPLIT_TEST, CT_ERR_CORRUPT, "cifarbad/test_batch.bin",
               "not a multiple of the 3073-byte record", "record 2 (from byte offset 6146) has only 100 bytes");
    write_cifar(path_in(d, "test_batch.bin"), 3, 0, 1);
    open_fails(spec, CT_SPLIT_TEST, CT_ERR_CORRUPT, "cifarbad/test_batch.bin",
               "record 1 (byte offset 3073)", "label 10 > 9");
    write_bytes(path_in(d, "test_batch.bin"), "", 0, 0);
    open_fails(spec, CT_SPLIT_TEST, CT_ERR_CORRUPT, "cifarbad/test_batch.bin", "empty", NULL);
}

/* ---- CSV ---- */

static void write_text(const char *path, const char *text)
{
    write_bytes(path, text, strlen(text), 0);
}

static void test_csv(void)
{
    char *d = make_dir("csv"), spec[700];
    const char *good = path_in(d, "good.csv");
    write_text(good, "a, y ,b\r\n1.5,2,-3\r\n\r\n  4e-1 , 0 , 7\n\"8\",1,9");
    snprintf(spec, sizeof spec, "csv:%s:label=y", good);
    ct_dataset *ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds) {
        int c, h, w;
        float x[2];
        int32_t y;
        ct_dataset_shape(ds, &c, &h, &w);
        CHECK(ct_dataset_count(ds) == 3 && c == 2 && h == 1 && w == 1 && ct_dataset_classes(ds) == 3,
              "csv %zu x (%d, %d, %d), %d classes", ct_dataset_count(ds), c, h, w,
              ct_dataset_classes(ds));
        ct_dataset_sample(ds, 0, x, &y);
        CHECK(x[0] == 1.5f && x[1] == -3.0f && y == 2, "csv row 0: %g %g %d", (double)x[0],
              (double)x[1], (int)y);
        ct_dataset_sample(ds, 1, x, &y);
        CHECK(x[0] == 0.4f && x[1] == 7.0f && y == 0, "csv row 1: %g %g %d", (double)x[0],
              (double)x[1], (int)y);
        ct_dataset_sample(ds, 2, x, &y);
        CHECK(x[0] == 8.0f && x[1] == 9.0f && y == 1, "csv row 2: %g %g %d", (double)x[0],
              (double)x[1], (int)y);
        float m[2], s[2];
        CHECK(ct_dataset_compute_norm(ds, m, s, 2) == CT_OK, "csv compute_norm");
        /* feature a = (1.5, 0.4, 8): mean 3.3, population std 3.355...*/
        double sa = sqrt(((1.5 - 3.3) * (1.5 - 3.3) + (0.4 - 3.3) * (0.4 - 3.3) + (8 - 3.3) * (8 - 3.3)) / 3);
        CHECK(fabs(m[0] - 3.3) < 1e-6 && fabs(s[0] - sa) < 1e-6, "csv norm a %g %g, want 3.3 %g",
              (double)m[0], (double)s[0], sa);
    }
    ct_dataset_free(&ds);
    /* the same by index, and the test split */
    snprintf(spec, sizeof spec, "csv:%s:label=1:test=%s:classes=4", good, good);
    ds = open_ok(spec, CT_SPLIT_TEST);
    CHECK(ds && ct_dataset_count(ds) == 3 && ct_dataset_classes(ds) == 4, "csv by index");
    ct_dataset_free(&ds);
    snprintf(spec, sizeof spec, "csv:%s", good);
    open_fails(spec, CT_SPLIT_TEST, CT_ERR_INVALID_ARG, "no test split", "test=FILE", NULL);
    /* default label column 0 of a headerless file */
    const char *nohead = path_in(d, "nohead.csv");
    write_text(nohead, "1,0.5,0.25\n0,1,2\n");
    snprintf(spec, sizeof spec, "csv:%s", nohead);
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    CHECK(ds && ct_dataset_count(ds) == 2 && ct_dataset_classes(ds) == 2, "csv without header");
    ct_dataset_free(&ds);
    snprintf(spec, sizeof spec, "csv:%s:label=z", nohead);
    open_fails(spec, CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "no label column 'z'", "no header row",
               NULL);

    static const struct {
        const char *text, *opts, *a, *b;
    } bad[] = {
        { "y,a,b\n1,2,3\n0,x1,3\n", "", "bad0.csv:3:3", "field 2 'x1' is not a finite number" },
        { "y,a,b\n1,2,3\n0,2\n", "", "bad1.csv:3:4", "2 fields, want 3" },
        { "y,a,b\n1,2,3\n0,2,3,4\n", "", "bad2.csv:3:7", "4 fields, want 3" },
        { "y,a,b\n1.5,2,3\n", "", "bad3.csv:2:1", "label '1.5' is not a non-negative integer" },
        { "y,a,b\n1,2,3\n-1,2,3\n", "", "bad4.csv:3:1", "label '-1'" },
        { "y,a,b\n1,2,3\n2,,3\n", "", "bad5.csv:3:3", "is not a number (it is empty)" },
        { "y,a,b\n1,2,3\n3,2,3\n", ":classes=3", "bad6.csv:3:1", "label 3 out of range for classes=3" },
        { "1,2,3\n1,nan,3\n", ":header=no", "bad7.csv:2:3", "'nan' is not a finite number" },
        { "1,2,3\n1,2,1e999\n", ":header=no", "bad8.csv:2:5", "'1e999' is not a finite number" },
        { "y,a\n", "", "bad9.csv: no data rows", NULL },
        { "y,a\n1,2\n", ":label=2", "no label column '2'", NULL },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad%zu.csv", i);
        write_text(path_in(d, name), bad[i].text);
        snprintf(spec, sizeof spec, "csv:%s%s", path_in(d, name), bad[i].opts);
        open_fails(spec, CT_SPLIT_TRAIN, i == 10 ? CT_ERR_INVALID_ARG : CT_ERR_CORRUPT, bad[i].a,
                   bad[i].b, NULL);
    }
    open_fails("csv:/nonexistent.csv", CT_SPLIT_TRAIN, CT_ERR_IO, "/nonexistent.csv", NULL, NULL);
}

/* ---- CSV regression targets ---- */

static void test_csv_targets(void)
{
    char *d = make_dir("csvtarget"), spec[700];
    const char *good = path_in(d, "good.csv");
    write_text(good, "a,y,b,z\n1.5,2.25,-3,10\n4e-1,-0.5,7,\"11\"\n");
    snprintf(spec, sizeof spec, "csv:%s:target=z,y", good);
    ct_dataset *ds = open_ok(spec, CT_SPLIT_TRAIN);
    if (ds) {
        int c, h, w;
        float x[2], t[2];
        int32_t y = 0;
        ct_dataset_shape(ds, &c, &h, &w);
        CHECK(ct_dataset_count(ds) == 2 && c == 2 && ct_dataset_classes(ds) == 0 &&
                  ct_dataset_targets(ds) == 2,
              "csv targets: %zu x %d features, %d classes, %d targets", ct_dataset_count(ds), c,
              ct_dataset_classes(ds), ct_dataset_targets(ds));
        CHECK(ct_dataset_target_name(ds, 0) && !strcmp(ct_dataset_target_name(ds, 0), "z") &&
                  ct_dataset_target_name(ds, 1) && !strcmp(ct_dataset_target_name(ds, 1), "y") &&
                  !ct_dataset_target_name(ds, 2),
              "csv target names in target= order");
        CHECK(ct_dataset_sample(ds, 1, x, &y) == CT_OK && x[0] == 0.4f && x[1] == 7.0f && y == -1,
              "csv target row 1 features %g %g label %d", (double)x[0], (double)x[1], (int)y);
        CHECK(ct_dataset_sample_targets(ds, 1, t) == CT_OK && t[0] == 11.0f && t[1] == -0.5f,
              "csv target row 1 targets %g %g", (double)t[0], (double)t[1]);
        CHECK(ct_dataset_sample_targets(ds, 2, t) == CT_ERR_INVALID_ARG, "target row out of range");
    }
    ct_dataset_free(&ds);
    /* by index, headerless: the names are the columns' */
    const char *nohead = path_in(d, "nohead.csv");
    write_text(nohead, "1,0.5,0.25\n0,1,2\n");
    snprintf(spec, sizeof spec, "csv:%s:target=2:test=%s", nohead, nohead);
    ds = open_ok(spec, CT_SPLIT_TEST);
    CHECK(ds && ct_dataset_targets(ds) == 1 && ct_dataset_target_name(ds, 0) &&
              !strcmp(ct_dataset_target_name(ds, 0), "column 2"),
          "csv target by index");
    ct_dataset_free(&ds);
    /* labelled data has no targets */
    snprintf(spec, sizeof spec, "csv:%s", nohead);
    ds = open_ok(spec, CT_SPLIT_TRAIN);
    float t1;
    CHECK(ds && ct_dataset_targets(ds) == 0 && ct_dataset_sample_targets(ds, 0, &t1) == CT_ERR_UNSUPPORTED,
          "labelled csv has no targets");
    ct_dataset_free(&ds);

    static const struct {
        const char *text, *opts, *a, *b;
        int status;
    } bad[] = {
        { "a,y\n1,2\n1,x\n", ":target=y", "bad0.csv:3:3", "target 'y' 'x' is not a finite float",
          CT_ERR_CORRUPT },
        { "a,y\n1,2\n1,\n", ":target=y", "bad1.csv:3:3", "target 'y' is missing", CT_ERR_CORRUPT },
        { "a,y\n1,2\n1,nan\n", ":target=y", "bad2.csv:3:3", "'nan' is not a finite float",
          CT_ERR_CORRUPT },
        { "a,y\n1,2\n1,1e39\n", ":target=y", "bad3.csv:3:3", "'1e39' is not a finite float",
          CT_ERR_CORRUPT },
        { "a,y\n1,2\n", ":target=q", "bad4.csv: no target column 'q'", "header name", CT_ERR_INVALID_ARG },
        { "a,y\n1,2\n", ":target=y,1", "target= names column 1 twice", NULL, CT_ERR_INVALID_ARG },
        { "a,y\n1,2\n", ":target=a,y", "leaving no feature", NULL, CT_ERR_INVALID_ARG },
        { "a,y\n1,2\n", ":target=y:label=a", "both target= and label=", NULL, CT_ERR_INVALID_ARG },
        { "a,y\n1,2\n", ":target=y:classes=3", "both target= and classes=", NULL, CT_ERR_INVALID_ARG },
        { "a,y\n1,2\n", ":target=y,", "empty column name", NULL, CT_ERR_INVALID_ARG },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad%zu.csv", i);
        write_text(path_in(d, name), bad[i].text);
        snprintf(spec, sizeof spec, "csv:%s%s", path_in(d, name), bad[i].opts);
        open_fails(spec, CT_SPLIT_TRAIN, bad[i].status, bad[i].a, bad[i].b, NULL);
    }
}

/* ---- synthetic ---- */

static void test_synthetic(void)
{
    ct_dataset *a = open_ok("synthetic:3,8,8:5:100:seed=7", CT_SPLIT_TRAIN);
    ct_dataset *b = open_ok("synthetic:3,8,8:5:100:seed=7", CT_SPLIT_TRAIN);
    ct_dataset *c = open_ok("synthetic:3,8,8:5:100:seed=8", CT_SPLIT_TRAIN);
    ct_dataset *t = open_ok("synthetic:3,8,8:5:100:seed=7:ntest=20", CT_SPLIT_TEST);
    if (a && b && c && t) {
        CHECK(ct_dataset_count(a) == 100 && ct_dataset_count(t) == 20, "synthetic counts");
        CHECK(!memcmp(a->u8, b->u8, 100 * 192) && !memcmp(a->labels, b->labels, 400),
              "synthetic data repeats for one seed");
        CHECK(memcmp(a->u8, c->u8, 100 * 192) != 0, "synthetic data changes with the seed");
        CHECK(memcmp(a->u8, t->u8, 20 * 192) != 0, "the test split is other data");
        int seen[5] = { 0 }, ok = 1;
        for (size_t i = 0; i < 100; i++) {
            ok &= a->labels[i] >= 0 && a->labels[i] < 5;
            if (ok)
                seen[a->labels[i]]++;
        }
        CHECK(ok && seen[0] && seen[1] && seen[2] && seen[3] && seen[4], "synthetic labels in [0, 5)");
    }
    ct_dataset_free(&a);
    ct_dataset_free(&b);
    ct_dataset_free(&c);
    ct_dataset_free(&t);
    a = open_ok("synthetic:17:3:10", CT_SPLIT_TRAIN);
    if (a) {
        int ch, h, w;
        ct_dataset_shape(a, &ch, &h, &w);
        CHECK(ch == 17 && h == 1 && w == 1 && ct_dataset_classes(a) == 3, "synthetic features");
    }
    ct_dataset_free(&a);
    open_fails("synthetic:3,8:5:100", CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "shape '3,8'", NULL, NULL);
    open_fails("synthetic:3,8,8:5:x", CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "sample count 'x'", NULL,
               NULL);
    open_fails("synthetic:3,8,8:0:10", CT_SPLIT_TRAIN, CT_ERR_INVALID_ARG, "classes '0'", NULL, NULL);
}

/* ---- the real Fashion-MNIST ---- */

static void test_fashion(void)
{
    struct stat sb;
    if (stat("/usr/share/datasets/fashion-mnist", &sb) != 0) {
        printf("note: /usr/share/datasets/fashion-mnist is absent (package dataset-fashion-mnist): "
               "skipping the real-data checks\n");
        return;
    }
    static const int first_train[10] = { 9, 0, 0, 3, 0, 2, 7, 2, 5, 5 };
    static const int first_test[10] = { 9, 2, 1, 1, 6, 1, 4, 6, 5, 7 };
    for (int split = 0; split < 2; split++) {
        ct_dataset *ds = open_ok("fashion-mnist", split);
        if (!ds)
            continue;
        int c, h, w;
        size_t want = split ? 10000 : 60000;
        ct_dataset_shape(ds, &c, &h, &w);
        CHECK(ct_dataset_count(ds) == want && c == 1 && h == 28 && w == 28 &&
                  ct_dataset_classes(ds) == 10,
              "fashion-mnist %s: %zu x (%d, %d, %d), %d classes", split ? "test" : "train",
              ct_dataset_count(ds), c, h, w, ct_dataset_classes(ds));
        size_t hist[10] = { 0 };
        for (size_t i = 0; i < ds->n; i++)
            hist[ds->labels[i]]++;
        for (int k = 0; k < 10; k++) {
            CHECK(hist[k] == want / 10, "fashion-mnist class %d: %zu samples", k, hist[k]);
            CHECK(ds->labels[k] == (split ? first_test : first_train)[k], "label %d = %d", k,
                  (int)ds->labels[k]);
        }
        if (split == 0) {
            float m, s;
            CHECK(ct_dataset_compute_norm(ds, &m, &s, 1) == CT_OK, "compute_norm");
            /* the published constants, to their 4 digits */
            CHECK(fabs(m - 0.2860) < 1e-4 && fabs(s - 0.3530) < 1e-4,
                  "fashion-mnist train mean %g std %g, want 0.2860 0.3530", (double)m, (double)s);
        }
        ct_dataset_free(&ds);
    }
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/ct_test_data_XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_idx_good();
    test_idx_bad();
    test_cifar();
    test_csv();
    test_csv_targets();
    test_synthetic();
    test_fashion();
    remove_tree(tmp);
    return tcheck_done("test_data");
}
