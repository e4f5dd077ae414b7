/*
 * test_tfevents - CRC-32C against the standard check value and the RFC 3720
 * (iSCSI) vectors and a bit-at-a-time CRC; TensorBoard event files written
 * by src/io/tfevents.c read back record by record (length, both masked
 * CRCs, the Event messages unpacked by protobuf-c), a corrupted byte caught
 * by the CRC, names that never overwrite, and write failures (a directory
 * under a file, the file size limit) reported with the file's name. No
 * OpenCL needed.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/crc32c.h"
#include "core/error.h"
#include "core/util.h"
#include "io/tfevents.h"
#include "tcheck.h"
#include "tfevents.pb-c.h"

/* the CRC one bit at a time, straight from the reflected polynomial */
static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    }
    return ~c;
}

static void test_crc(void)
{
    CHECK(ct_crc32c(0, "123456789", 9) == 0xe3069283u, "check value %08x", ct_crc32c(0, "123456789", 9));
    CHECK(ct_crc32c(0, "", 0) == 0, "empty");
    /* RFC 3720, B.4 */
    uint8_t b[48];
    memset(b, 0, 32);
    CHECK(ct_crc32c(0, b, 32) == 0x8a9136aau, "32 zeros: %08x", ct_crc32c(0, b, 32));
    memset(b, 0xff, 32);
    CHECK(ct_crc32c(0, b, 32) == 0x62a8ab43u, "32 x ff: %08x", ct_crc32c(0, b, 32));
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)i;
    CHECK(ct_crc32c(0, b, 32) == 0x46dd794eu, "00..1f: %08x", ct_crc32c(0, b, 32));
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)(31 - i);
    CHECK(ct_crc32c(0, b, 32) == 0x113fdb5cu, "1f..00: %08x", ct_crc32c(0, b, 32));
    static const uint8_t pdu[48] = { 0x01, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                     0x14, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x18,
                                     0x28, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0 };
    CHECK(ct_crc32c(0, pdu, 48) == 0xd9963a56u, "iSCSI read PDU: %08x", ct_crc32c(0, pdu, 48));
    /* every table entry (each single byte) and random lengths, whole and in pieces */
    for (int v = 0; v < 256; v++) {
        uint8_t x = (uint8_t)v;
        CHECK(ct_crc32c(0, &x, 1) == crc_bitwise(&x, 1), "byte %02x", v);
    }
    uint8_t r[1000];
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < sizeof r; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        r[i] = (uint8_t)(s >> 56);
    }
    for (size_t n = 0; n <= sizeof r; n += 37) {
        uint32_t whole = ct_crc32c(0, r, n), want = crc_bitwise(r, n);
        CHECK(whole == want, "%zu random bytes: %08x, bitwise %08x", n, whole, want);
        size_t cut = n / 3;
        CHECK(ct_crc32c(ct_crc32c(0, r, cut), r + cut, n - cut) == whole, "%zu bytes cut at %zu", n, cut);
    }
    /* TensorFlow's mask: rotate right by 15, add a constant */
    CHECK(ct_crc32c_mask(0) == 0xa282ead8u, "mask(0)");
    CHECK(ct_crc32c_mask(0xe3069283u) == 0xc78ab0e5u, "mask(check value) = %08x", ct_crc32c_mask(0xe3069283u));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void free_events(Tensorboard__Event **ev, int n)
{
    for (int i = 0; i < n; i++)
        tensorboard__event__free_unpacked(ev[i], NULL);
}

/* Splits a file's bytes into records, checking each length and both CRCs;
 * returns the count, or -1 at the first bad record (`why` says which; the
 * events unpacked before it are freed). */
static int parse_records(const uint8_t *b, size_t n, Tensorboard__Event **ev, int max, char *why)
{
    size_t at = 0;
    int count = 0;
    while (at < n) {
        uint64_t len = n - at >= 12 ? get_le(b + at, 8) : 0;
        if (n - at < 12 || count == max)
            sprintf(why, "short header at %zu", at);
        else if (get_le(b + at + 8, 4) != ct_crc32c_mask(ct_crc32c(0, b + at, 8)))
            sprintf(why, "length CRC at %zu", at);
        else if (len > n - at - 12 || n - at - 12 - len < 4)
            sprintf(why, "record at %zu runs past the end", at);
        else if (get_le(b + at + 12 + len, 4) != ct_crc32c_mask(ct_crc32c(0, b + at + 12, len)))
            sprintf(why, "data CRC at %zu", at);
        else if (!(ev[count] = tensorboard__event__unpack(NULL, len, b + at + 12)))
            sprintf(why, "protobuf at %zu does not unpack", at);
        else {
            count++;
            at += 12 + len + 4;
            continue;
        }
        free_events(ev, count);
        return -1;
    }
    return count;
}

static const Tensorboard__Summary__Value *only_value(const Tensorboard__Event *e)
{
    if (e->what_case != TENSORBOARD__EVENT__WHAT_SUMMARY || e->summary->n_value != 1)
        return NULL;
    return e->summary->value[0];
}

static void test_file(const char *dir)
{
    uint8_t framed[3 + CT_TFEVENTS_FRAMING];
    ct_tfevents_frame("abc", 3, framed);
    CHECK(get_le(framed, 8) == 3 && get_le(framed + 15, 4) == ct_crc32c_mask(ct_crc32c(0, "abc", 3)) &&
              !memcmp(framed + 12, "abc", 3),
          "framing of 'abc'");

    ct_tfevents *w = NULL;
    int st = ct_tfevents_open(dir, &w);
    CHECK(st == CT_OK && w, "open %s: %s", dir, ct_last_error());
    if (!w)
        return;
    char *path = ct_strdup(ct_tfevents_path(w));
    const char *base = strrchr(path, '/') + 1;
    char host[256] = "";
    gethostname(host, sizeof host);
    /* the name: events.out.tfevents.<unix time>.<host> (the second may tick over) */
    CHECK(!strncmp(base, "events.out.tfevents.", 20) && strstr(base, host), "file name %s", base);

    /* a second writer in the same directory gets its own file */
    ct_tfevents *w2 = NULL;
    CHECK(ct_tfevents_open(dir, &w2) == CT_OK && w2 && strcmp(ct_tfevents_path(w2), path),
          "a second file: %s", w2 ? ct_tfevents_path(w2) : ct_last_error());
    ct_tfevents_close(&w2);

    float vals[1000];
    double sum = 0, sq = 0;
    for (int i = 0; i < 1000; i++) {
        vals[i] = (float)(i % 100) * 0.25f - 10.0f; /* -10 .. 14.75, 10 of each */
        sum += vals[i];
        sq += (double)vals[i] * vals[i];
    }
    float odd[4] = { NAN, 3.0f, INFINITY, 3.0f };
    CHECK(ct_tfevents_scalar(w, "train/loss", 7, 0.5) == CT_OK, "scalar");
    CHECK(ct_tfevents_scalar(w, "zero", 0, 0.0) == CT_OK, "scalar 0 at step 0");
    CHECK(ct_tfevents_histogram(w, "h", 9, vals, 1000, 10) == CT_OK, "histogram");
    CHECK(ct_tfevents_histogram(w, "same", 9, odd, 4, 10) == CT_OK, "histogram of equal values");
    CHECK(ct_tfevents_histogram(w, "none", 9, odd, 1, 10) == CT_OK, "histogram of no finite value");
    CHECK(ct_tfevents_flush(w) == CT_OK, "flush");
    CHECK(ct_tfevents_close(&w) == CT_OK && !w, "close");

    size_t n = 0;
    uint8_t *b = (uint8_t *)ct_read_file(path, &n);
    CHECK(b != NULL, "read %s back", path);
    if (!b) {
        free(path);
        return;
    }
    Tensorboard__Event *ev[16];
    char why[128] = "";
    int ne = parse_records(b, n, ev, 16, why);
    CHECK(ne == 5, "records: %d (%s), want 5: version, 2 scalars, 2 histograms", ne, why);
    if (ne == 5) {
        CHECK(ev[0]->what_case == TENSORBOARD__EVENT__WHAT_FILE_VERSION &&
                  !strcmp(ev[0]->file_version, "brain.Event:2"),
              "the first event holds the version");
        CHECK(fabs(ev[0]->wall_time - (double)time(NULL)) < 60, "wall time %.0f", ev[0]->wall_time);
        const Tensorboard__Summary__Value *v = only_value(ev[1]);
        CHECK(v && !strcmp(v->tag, "train/loss") && ev[1]->step == 7 &&
                  v->value_case == TENSORBOARD__SUMMARY__VALUE__VALUE_SIMPLE_VALUE && v->simple_value == 0.5f,
              "scalar train/loss = 0.5 at step 7");
        v = only_value(ev[2]);
        CHECK(v && v->value_case == TENSORBOARD__SUMMARY__VALUE__VALUE_SIMPLE_VALUE && v->simple_value == 0.0f &&
                  ev[2]->step == 0,
              "a scalar 0 keeps its value");
        v = only_value(ev[3]);
        const Tensorboard__HistogramProto *h = v ? v->histo : NULL;
        CHECK(h && !strcmp(v->tag, "h") && ev[3]->step == 9, "histogram h at step 9");
        if (h) {
            CHECK(h->min == -10 && h->max == 14.75 && h->num == 1000 && fabs(h->sum - sum) < 1e-9 &&
                      fabs(h->sum_squares - sq) < 1e-6,
                  "histogram stats %g %g %g %g %g", h->min, h->max, h->num, h->sum, h->sum_squares);
            CHECK(h->n_bucket == 10 && h->n_bucket_limit == 10 && h->bucket_limit[9] == DBL_MAX,
                  "10 buckets, the last to DBL_MAX");
            double total = 0;
            int in_order = 1;
            for (size_t i = 0; h->n_bucket == 10 && i < 10; i++) {
                /* width 2.475: values step by 0.25, so each bucket holds 9 or 10 of the
                 * 100 distinct values, 10 copies each */
                total += h->bucket[i];
                in_order &= h->bucket[i] == 90 || h->bucket[i] == 100;
                if (i < 9)
                    in_order &= fabs(h->bucket_limit[i] - (-10 + 2.475 * (double)(i + 1))) < 1e-12;
            }
            CHECK(total == 1000 && in_order, "bucket counts and limits");
        }
        v = only_value(ev[4]);
        h = v ? v->histo : NULL;
        CHECK(h && !strcmp(v->tag, "same") && h->num == 2 && h->min == 3 && h->max == 3 && h->n_bucket == 1 &&
                  h->bucket[0] == 2,
              "equal values (NaN, Inf left out): one bucket of 2");
    }
    if (ne > 0)
        free_events(ev, ne);

    /* one flipped bit in the last record's data fails its CRC */
    b[n - 6] ^= 0x10;
    ne = parse_records(b, n, ev, 16, why);
    CHECK(ne < 0 && strstr(why, "data CRC"), "a flipped bit: %s", why);
    if (ne > 0)
        free_events(ev, ne);
    free(b);

    /* the first file is untouched by the second */
    size_t n2 = 0;
    char *again = ct_read_file(path, &n2);
    CHECK(again && n2 == n, "the first file keeps its %zu bytes", n);
    free(again);
    free(path);
}

static void test_failures(const char *tmp)
{
    /* a directory that cannot be made: the error names it */
    char file[512], dir[600];
    snprintf(file, sizeof file, "%s/plain", tmp);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL, "create %s", file);
    if (f)
        fclose(f);
    snprintf(dir, sizeof dir, "%s/sub", file);
    ct_tfevents *w = NULL;
    int st = ct_tfevents_open(dir, &w);
    CHECK(st == CT_ERR_IO && !w && strstr(ct_last_error(), dir) && strstr(ct_last_error(), "Not a directory"),
          "a directory under a file: %d %s", st, ct_last_error());

    /* the file size limit: writes fail with EFBIG (SIGXFSZ ignored), the
     * message names the file, later writes fail the same way */
    snprintf(dir, sizeof dir, "%s/limited", tmp);
    CHECK(ct_tfevents_open(dir, &w) == CT_OK, "open %s: %s", dir, ct_last_error());
    if (!w)
        return;
    struct rlimit was, lim;
    getrlimit(RLIMIT_FSIZE, &was);
    lim = was;
    lim.rlim_cur = 4096;
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit: %s", strerror(errno));
    st = CT_OK;
    for (int i = 0; i < 1000 && !st; i++) /* ~45 bytes each: past 4 KiB by the 100th */
        if (!(st = ct_tfevents_scalar(w, "train/loss", i, i)) && i % 10 == 9)
            st = ct_tfevents_flush(w);
    setrlimit(RLIMIT_FSIZE, &was);
    CHECK(st == CT_ERR_IO && strstr(ct_last_error(), ct_tfevents_path(w)) &&
              strstr(ct_last_error(), strerror(EFBIG)),
          "a full file: %d %s", st, ct_last_error());
    CHECK(ct_tfevents_scalar(w, "x", 1, 1) == CT_ERR_IO, "after a failure, writes are refused");
    CHECK(ct_tfevents_close(&w) == CT_ERR_IO && !w, "close reports the failure and frees");
}

int main(void)
{
    test_crc();
    char tmpl[] = "/tmp/test_tfevents.XXXXXX";
    char *tmp = mkdtemp(tmpl);
    CHECK(tmp != NULL, "mkdtemp");
    if (tmp) {
        char dir[300];
        snprintf(dir, sizeof dir, "%s/a/b", tmp); /* parents are made too */
        test_file(dir);
        test_failures(tmp);
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        CHECK(system(cmd) == 0, "cleaning %s", tmp);
    }
    return tcheck_done("test_tfevents");
}
