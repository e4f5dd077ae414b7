/*
 * npy.c - NumPy's .npy arrays and .npz archives of them, as
 * numpy.save / numpy.savez / numpy.savez_compressed write them.
 *
 * .npy: the magic "\x93NUMPY", a version (1.0: a 2-byte header length; 2.0
 * and 3.0: 4 bytes), then a Python dict literal {'descr': '<f4',
 * 'fortran_order': False, 'shape': (N, ...), } padded with spaces and a
 * newline, then the array's bytes in C order. Read: little-endian (or
 * single-byte) bool, signed and unsigned integers of 1 to 8 bytes and
 * floats of 2, 4 and 8 bytes; anything else (big-endian data, Fortran
 * order, strings, objects, structured types) is refused by name.
 *
 * .npz: a ZIP archive of NAME.npy members, stored (savez) or deflated
 * (savez_compressed), ZIP64 sizes and offsets included; members are found
 * through the central directory and their CRC-32 checked. Everything in
 * both formats is a claim checked against the bytes present: a truncated
 * or padded file is an error naming the file and the byte offset.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "core/error.h"
#include "core/util.h"
#include "data/npy.h"

/* A single array larger than this is a damaged header, not data. */
#define NPY_MAX_BYTES ((uint64_t)1 << 36)

static uint32_t le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
    return le16(p) | (uint32_t)le16(p + 2) << 16;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* ---- the header dict ---- */

typedef struct hdr {
    const char *s, *start, *end, *path;
    size_t base; /* the header's byte offset in the file */
} hdr;

static void skip_ws(hdr *h)
{
    while (h->s < h->end && (*h->s == ' ' || *h->s == '\t' || *h->s == '\n' || *h->s == '\r'))
        h->s++;
}

static int herr(const hdr *h, const char *what)
{
    return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte offset %zu: the .npy header %s", h->path,
                   h->base + (size_t)(h->s - h->start), what);
}

static int expect(hdr *h, char c, const char *what)
{
    skip_ws(h);
    if (h->s >= h->end || *h->s != c)
        return herr(h, what);
    h->s++;
    return CT_OK;
}

/* a quoted string (no escapes: the header's keys and dtypes have none) */
static int read_str(hdr *h, char *out, size_t cap)
{
    skip_ws(h);
    if (h->s >= h->end || (*h->s != '\'' && *h->s != '"'))
        return herr(h, "has no quoted string where one belongs");
    char q = *h->s++;
    size_t n = 0;
    while (h->s < h->end && *h->s != q) {
        if (n + 1 >= cap || *h->s == '\\')
            return herr(h, "has a string too long or with escapes");
        out[n++] = *h->s++;
    }
    if (h->s >= h->end)
        return herr(h, "has an unterminated string");
    h->s++;
    out[n] = 0;
    return CT_OK;
}

static int read_shape(hdr *h, ct_npy *a)
{
    if (expect(h, '(', "'shape' is not a tuple"))
        return CT_ERR_CORRUPT;
    a->ndim = 0;
    for (;;) {
        skip_ws(h);
        if (h->s < h->end && *h->s == ')') {
            h->s++;
            return CT_OK;
        }
        if (a->ndim == CT_NPY_MAX_DIMS)
            return herr(h, "'shape' has more dimensions than the 8 read");
        uint64_t v = 0;
        int digits = 0;
        while (h->s < h->end && *h->s >= '0' && *h->s <= '9') {
            if (v > (UINT64_MAX - 9) / 10)
                return herr(h, "'shape' has a size too large");
            v = v * 10 + (uint64_t)(*h->s++ - '0');
            digits++;
        }
        if (!digits)
            return herr(h, "'shape' holds something other than sizes");
        a->shape[a->ndim++] = v;
        skip_ws(h);
        if (h->s < h->end && *h->s == ',') {
            h->s++;
            continue;
        }
        if (expect(h, ')', "'shape' is not closed"))
            return CT_ERR_CORRUPT;
        return CT_OK;
    }
}

/* descr: byte order, kind, item size */
static int read_descr(hdr *h, const char *d, ct_npy *a)
{
    const char *t = d;
    char order = '=';
    if (*t == '<' || *t == '|' || *t == '=' || *t == '>')
        order = *t++;
    char kind = t[0];
    char *end = NULL;
    long size = kind ? strtol(t + 1, &end, 10) : 0;
    if (!kind || !end || end == t + 1 || *end || size <= 0)
        return herr(h, "'descr' is not a dtype of the form <f4");
    a->kind = kind;
    a->itemsize = (int)size;
    int ok = (kind == 'f' && (size == 2 || size == 4 || size == 8)) ||
             ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
             (kind == 'b' && size == 1);
    if (!ok) {
        char what[160];
        snprintf(what, sizeof what, "declares dtype '%s', which is not read: HINT: save bool, integer or "
                 "float arrays (e.g. x.astype(np.float32))", d);
        return herr(h, what);
    }
    if (order == '>' && size > 1)
        return herr(h, "declares big-endian data: HINT: save it little-endian (x.astype(x.dtype.newbyteorder('<')))");
    return CT_OK;
}

static int parse_header(hdr *h, ct_npy *a)
{
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (expect(h, '{', "is not a dict"))
        return CT_ERR_CORRUPT;
    for (;;) {
        skip_ws(h);
        if (h->s < h->end && *h->s == '}') {
            h->s++;
            break;
        }
        char key[32], val[32];
        if (read_str(h, key, sizeof key) || expect(h, ':', "has a key without ':'"))
            return CT_ERR_CORRUPT;
        if (!strcmp(key, "descr")) {
            if (read_str(h, val, sizeof val) || read_descr(h, val, a))
                return CT_ERR_CORRUPT;
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            skip_ws(h);
            if (h->end - h->s >= 5 && !strncmp(h->s, "False", 5)) {
                h->s += 5;
            } else if (h->end - h->s >= 4 && !strncmp(h->s, "True", 4)) {
                return herr(h, "declares Fortran order: HINT: save np.ascontiguousarray(x)");
            } else {
                return herr(h, "'fortran_order' is neither True nor False");
            }
            have_order = 1;
        } else if (!strcmp(key, "shape")) {
            if (read_shape(h, a))
                return CT_ERR_CORRUPT;
            have_shape = 1;
        } else {
            return herr(h, "has a key other than 'descr', 'fortran_order' and 'shape'");
        }
        skip_ws(h);
        if (h->s < h->end && *h->s == ',')
            h->s++;
    }
    if (!have_descr || !have_order || !have_shape)
        return herr(h, "lacks one of 'descr', 'fortran_order' and 'shape'");
    skip_ws(h);
    if (h->s != h->end)
        return herr(h, "has bytes after its dict");
    return CT_OK;
}

int ct_npy_parse(const uint8_t *buf, size_t n, const char *path, ct_npy *a)
{
    memset(a, 0, sizeof *a);
    static const uint8_t magic[6] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };
    if (n < 10 || memcmp(buf, magic, 6))
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte offset 0: not a .npy file (no \\x93NUMPY magic%s)", path,
                       n < 10 ? ", and shorter than its 10-byte preamble" : "");
    int major = buf[6];
    if (major < 1 || major > 3)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte offset 6: .npy format version %d.%d, not 1, 2 or 3", path,
                       major, buf[7]);
    size_t pre = major == 1 ? 10 : 12;
    if (n < pre)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: truncated: %zu bytes, shorter than the %zu-byte preamble",
                       path, n, pre);
    uint64_t hlen = major == 1 ? le16(buf + 8) : le32(buf + 8);
    if (hlen > n - pre)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: truncated: the header claims %llu bytes from byte offset %zu "
                       "but the file has %zu", path, (unsigned long long)hlen, pre, n - pre);
    hdr h = { (const char *)buf + pre, (const char *)buf + pre, (const char *)buf + pre + hlen, path, pre };
    for (const char *c = h.s; c < h.end; c++)
        if (*c == 0 || (unsigned char)*c >= 0x80)
            return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte offset %zu: the .npy header is not ASCII text",
                           path, pre + (size_t)(c - h.s));
    int st = parse_header(&h, a);
    if (st)
        return st;
    uint64_t count = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] && count > NPY_MAX_BYTES / a->shape[d])
            return ct_fail(NULL, CT_ERR_CORRUPT, "%s: the header's shape is too large to be real", path);
        count *= a->shape[d];
    }
    uint64_t bytes = count * (uint64_t)a->itemsize;
    if (bytes > NPY_MAX_BYTES)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: the header declares %llu bytes of data, too many to be real",
                       path, (unsigned long long)bytes);
    size_t off = pre + (size_t)hlen;
    if (bytes != n - off)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: %s: the header declares %llu elements of %d bytes (%llu bytes "
                       "from byte offset %zu) but %zu bytes follow", path,
                       bytes > n - off ? "truncated" : "trailing bytes", (unsigned long long)count, a->itemsize,
                       (unsigned long long)bytes, off, n - off);
    a->count = (size_t)count;
    a->data = buf + off;
    return CT_OK;
}

double ct_npy_get(const ct_npy *a, size_t i)
{
    const uint8_t *p = a->data + i * (size_t)a->itemsize;
    if (a->kind == 'f') {
        if (a->itemsize == 4) {
            float f;
            memcpy(&f, p, 4);
            return f;
        }
        if (a->itemsize == 8) {
            double d;
            memcpy(&d, p, 8);
            return d;
        }
        /* IEEE half */
        uint32_t hb = le16(p), e = hb >> 10 & 31, m = hb & 1023;
        double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp((double)(m | 1024), (int)e - 25);
        return hb & 0x8000 ? -v : v;
    }
    uint64_t u = a->itemsize == 1 ? p[0] : a->itemsize == 2 ? le16(p) : a->itemsize == 4 ? le32(p) : le64(p);
    if (a->kind == 'i') {
        int sh = 64 - 8 * a->itemsize;
        return (double)((int64_t)(u << sh) >> sh);
    }
    return (double)u;
}

/* ---- .npz: ZIP members ---- */

/* The ZIP64 extra field's values that the 32-bit ones mark as 0xffffffff,
 * in its order: size, compressed size, offset */
static void zip64_fields(const uint8_t *x, size_t xn, uint64_t *usize, uint64_t *csize, uint64_t *off)
{
    while (xn >= 4) {
        uint32_t id = le16(x), len = le16(x + 2);
        if (len > xn - 4)
            return;
        if (id == 1) {
            const uint8_t *v = x + 4;
            size_t left = len;
            uint64_t *want[3] = { usize, csize, off };
            for (int k = 0; k < 3; k++)
                if (want[k] && *want[k] == 0xffffffffu && left >= 8) {
                    *want[k] = le64(v);
                    v += 8, left -= 8;
                }
            return;
        }
        x += 4 + len, xn -= 4 + len;
    }
}

/* zlib's CRC-32, in pieces its 32-bit lengths take */
static uint32_t crc_of(const uint8_t *p, size_t n)
{
    uLong c = crc32(0, Z_NULL, 0);
    while (n) {
        uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
        c = crc32(c, p, k);
        p += k, n -= k;
    }
    return (uint32_t)c;
}

static int inflate_raw(const uint8_t *in, size_t inn, uint8_t *out, size_t outn, size_t *got)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        return -1;
    int rc = Z_OK;
    size_t done_in = 0, done_out = 0;
    while (rc == Z_OK) {
        size_t ci = inn - done_in > 1u << 30 ? 1u << 30 : inn - done_in;
        size_t co = outn - done_out > 1u << 30 ? 1u << 30 : outn - done_out;
        z.next_in = (Bytef *)(uintptr_t)(in + done_in);
        z.avail_in = (uInt)ci;
        z.next_out = out + done_out;
        z.avail_out = (uInt)co;
        rc = inflate(&z, Z_NO_FLUSH);
        done_in += ci - z.avail_in;
        done_out += co - z.avail_out;
        if (rc == Z_OK && ci == z.avail_in && co == z.avail_out)
            rc = Z_BUF_ERROR; /* no progress */
    }
    inflateEnd(&z);
    *got = done_out;
    return rc == Z_STREAM_END ? 0 : -1;
}

int ct_npz_member(const uint8_t *zip, size_t n, const char *path, const char *member, uint8_t **out,
                  size_t *outn)
{
    char names[512] = "";
    size_t names_cap = sizeof names;
    *out = NULL;
    *outn = 0;
    /* the end-of-central-directory record, within the last 64 KiB + 22 */
    size_t eocd = SIZE_MAX;
    for (size_t i = n >= 22 ? n - 22 : 0, lo = n > 65557 ? n - 65557 : 0; n >= 22; i--) {
        if (le32(zip + i) == 0x06054b50u) {
            eocd = i;
            break;
        }
        if (i == lo)
            break;
    }
    if (eocd == SIZE_MAX)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: not a .npz (ZIP) archive: no end-of-central-directory "
                       "record in its last 64 KiB", path);
    uint64_t entries = le16(zip + eocd + 10), cd_size = le32(zip + eocd + 12), cd_off = le32(zip + eocd + 16);
    if (eocd >= 20 && le32(zip + eocd - 20) == 0x07064b50u) { /* ZIP64 locator */
        uint64_t z64 = le64(zip + eocd - 20 + 8);
        if (n < 56 || z64 > n - 56 || le32(zip + z64) != 0x06064b50u)
            return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte offset %zu: a ZIP64 locator pointing at no ZIP64 "
                           "record", path, eocd - 20);
        entries = le64(zip + z64 + 32);
        cd_size = le64(zip + z64 + 40);
        cd_off = le64(zip + z64 + 48);
    }
    if (cd_off > n || cd_size > n - cd_off)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte offset %zu: the central directory (%llu bytes at %llu) "
                       "lies outside the file", path, eocd, (unsigned long long)cd_size,
                       (unsigned long long)cd_off);
    size_t p = (size_t)cd_off, cd_end = (size_t)(cd_off + cd_size), nl = 0;
    for (uint64_t e = 0; e < entries; e++) {
        if (p > cd_end || cd_end - p < 46 || le32(zip + p) != 0x02014b50u)
            return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte offset %zu: central directory entry %llu is damaged",
                           path, p, (unsigned long long)e);
        uint32_t method = le16(zip + p + 10), crc = le32(zip + p + 16);
        uint64_t csize = le32(zip + p + 20), usize = le32(zip + p + 24), off = le32(zip + p + 42);
        size_t fl = le16(zip + p + 28), xl = le16(zip + p + 30), cl = le16(zip + p + 32);
        if (cd_end - p - 46 < fl + xl + cl)
            return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte offset %zu: central directory entry %llu runs past "
                           "the directory", path, p, (unsigned long long)e);
        const char *name = (const char *)zip + p + 46;
        zip64_fields(zip + p + 46 + fl, xl, &usize, &csize, &off);
        /* the names seen, for the message when the member is missing */
        if (nl + fl + 3 < names_cap)
            nl += (size_t)snprintf(names + nl, names_cap - nl, "%s%.*s", nl ? ", " : "", (int)fl, name);
        size_t ml = strlen(member);
        if (fl == ml + 4 && !memcmp(name, member, ml) && !memcmp(name + ml, ".npy", 4)) {
            if (off > n || n - off < 30 || le32(zip + off) != 0x04034b50u)
                return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte offset %llu: the local header of %s.npy is "
                               "damaged", path, (unsigned long long)off, member);
            size_t lfl = le16(zip + off + 26), lxl = le16(zip + off + 28);
            uint64_t data = off + 30 + lfl + lxl;
            if (data > n || csize > n - data)
                return ct_fail(NULL, CT_ERR_CORRUPT, "%s: truncated: %s.npy's %llu bytes at byte offset %llu "
                               "run past the end of the file", path, member, (unsigned long long)csize,
                               (unsigned long long)data);
            if (usize > NPY_MAX_BYTES || (method == 0 && usize != csize))
                return ct_fail(NULL, CT_ERR_CORRUPT, "%s: %s.npy declares %llu bytes, too many or not its "
                               "stored size", path, member, (unsigned long long)usize);
            if (method != 0 && method != 8)
                return ct_fail(NULL, CT_ERR_CORRUPT, "%s: %s.npy is compressed with ZIP method %u; HINT: only "
                               "stored and deflated members (numpy.savez, savez_compressed) are read",
                               path, member, (unsigned)method);
            uint8_t *buf = malloc(usize ? (size_t)usize : 1);
            if (!buf)
                return ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of memory for %s.npy (%llu bytes)", path, member,
                               (unsigned long long)usize);
            size_t got = (size_t)usize;
            if (method == 0)
                memcpy(buf, zip + data, (size_t)usize);
            else if (inflate_raw(zip + data, (size_t)csize, buf, (size_t)usize, &got) || got != usize) {
                free(buf);
                return ct_fail(NULL, CT_ERR_CORRUPT, "%s: %s.npy's deflated data (byte offset %llu) is damaged or "
                               "not the %llu bytes declared", path, member, (unsigned long long)data,
                               (unsigned long long)usize);
            }
            if (crc_of(buf, got) != crc) {
                free(buf);
                return ct_fail(NULL, CT_ERR_CORRUPT, "%s: %s.npy fails its CRC-32 check (damaged)", path, member);
            }
            *out = buf;
            *outn = got;
            return CT_OK;
        }
        p += 46 + fl + xl + cl;
    }
    return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: no member %s.npy (it holds %s); HINT: name the arrays with "
                   ":x=NAME:y=NAME", path, member, names[0] ? names : "nothing");
}
