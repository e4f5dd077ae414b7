/*
 * image.c - PNG and JPEG decoding and the conversion of a decoded image to
 * a model's input (src/data/image.h). PNG goes through libpng's simplified
 * API, which expands palettes and low bit depths and reports damage as
 * text (16-bit samples are read as such and scaled to 8 bits here); JPEG
 * through libjpeg-turbo, whose warnings (corrupt or cut-off entropy data,
 * which it would paper over with grey) are errors here. Neither library
 * prints: their messages come back in the error.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>

#include "core/error.h"
#include "core/util.h"
#include "data/image.h"

#define MAX_FILE_BYTES ((size_t)1 << 30)

void ct_image_free(ct_image *im)
{
    if (!im)
        return;
    free(im->px);
    memset(im, 0, sizeof *im);
}

static int too_large(const char *name, unsigned long w, unsigned long h, size_t max_pixels)
{
    if (w == 0 || h == 0)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: the image is %lux%lu pixels", name, w, h);
    if (w > max_pixels / h)
        return ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: the image is %lux%lu pixels, more than the %zu "
                       "cltrain decodes; HINT: scale it down first", name, w, h, max_pixels);
    return CT_OK;
}

/* ---- PNG ---- */

static int decode_png(const uint8_t *data, size_t size, const char *name, size_t max_pixels,
                      ct_image *out)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&img, data, size)) {
        int st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: not a readable PNG: libpng: %s; HINT: replace or "
                              "remove the file (imagefolder: bad=skip leaves such files out)", name, img.message);
        png_image_free(&img);
        return st;
    }
    int st = too_large(name, img.width, img.height, max_pixels);
    if (st) {
        png_image_free(&img);
        return st;
    }
    /* grey or RGB, with the alpha channel when there is one: it is dropped
     * below rather than composited, as PIL's convert("RGB") does. 8-bit
     * files are read as they are; 16-bit ones as 16-bit (libpng's 8-bit
     * output would take them for linear light and gamma-encode them), then
     * scaled to 8 bits, v * 255 / 65535 rounded. */
    int color = (img.format & PNG_FORMAT_FLAG_COLOR) != 0, alpha = (img.format & PNG_FORMAT_FLAG_ALPHA) != 0;
    int wide = (img.format & PNG_FORMAT_FLAG_LINEAR) != 0;
    img.format = (color ? PNG_FORMAT_FLAG_COLOR : 0) | (alpha ? PNG_FORMAT_FLAG_ALPHA : 0) |
                 (wide ? PNG_FORMAT_FLAG_LINEAR : 0);
    size_t ch = (size_t)(color ? 3 : 1) + (size_t)alpha, w = img.width, h = img.height;
    size_t keep = ch - (size_t)alpha, bytes = wide ? 2 : 1;
    uint8_t *buf = malloc(w * h * ch * bytes);
    if (!buf) {
        png_image_free(&img);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of memory for %zux%zu pixels", name, w, h);
    }
    if (!png_image_finish_read(&img, NULL, buf, (png_int_32)(w * ch), NULL)) {
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: damaged PNG data: libpng: %s; HINT: replace or remove "
                     "the file (imagefolder: bad=skip leaves such files out)", name, img.message);
        free(buf);
        png_image_free(&img);
        return st;
    }
    png_image_free(&img);
    if (wide) { /* 16-bit, colour premultiplied by the alpha: undone, then to 8 bits, in place */
        const uint16_t *v = (const uint16_t *)(void *)buf;
        for (size_t i = 0; i < w * h; i++) {
            uint32_t a = alpha ? v[i * ch + keep] : 65535;
            for (size_t k = 0; k < keep; k++) {
                uint32_t x = a ? (uint32_t)(((uint64_t)v[i * ch + k] * 65535 + a / 2) / a) : 0;
                buf[i * keep + k] = (uint8_t)(((x > 65535 ? 65535 : x) * 255 + 32767) / 65535);
            }
        }
    } else if (alpha) { /* drop it in place */
        for (size_t i = 0; i < w * h; i++)
            memmove(buf + i * keep, buf + i * ch, keep);
    }
    out->w = (int)w;
    out->h = (int)h;
    out->c = color ? 3 : 1;
    out->px = buf;
    return CT_OK;
}

/* ---- JPEG ---- */

typedef struct jerr {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} jerr;

static void jpeg_error_exit(j_common_ptr c)
{
    jerr *e = (jerr *)c->err;
    e->mgr.format_message(c, e->msg);
    longjmp(e->jump, 1);
}

/* Level -1 is a warning about corrupt data: an error here. Trace
 * messages (level >= 0) are dropped: the library never prints. */
static void jpeg_emit(j_common_ptr c, int level)
{
    if (level < 0)
        jpeg_error_exit(c);
}

/* min_h, min_w > 0: decoded at the smallest of libjpeg's DCT scales 1/8,
 * 1/4 and 1/2 that still gives at least min_h x min_w pixels (a block's
 * coefficients scaled down, as PIL's draft() asks for), else at full size. */
static int decode_jpeg(const uint8_t *data, size_t size, const char *name, size_t max_pixels,
                       int min_h, int min_w, ct_image *out)
{
    struct jpeg_decompress_struct cinfo;
    jerr e;
    uint8_t *volatile buf = NULL;
    memset(&cinfo, 0, sizeof cinfo);
    cinfo.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = jpeg_error_exit;
    e.mgr.emit_message = jpeg_emit;
    e.msg[0] = 0;
    if (setjmp(e.jump)) {
        size_t at = cinfo.src ? size - cinfo.src->bytes_in_buffer : 0;
        free(buf);
        jpeg_destroy_decompress(&cinfo);
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte %zu: damaged JPEG data: libjpeg: %s; HINT: replace "
                       "or remove the file (imagefolder: bad=skip leaves such files out)", name, at, e.msg);
    }
    jpeg_create_decompress(&cinfo);
    if (size > (unsigned long)-1)
        size = (unsigned long)-1;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    int grey = cinfo.num_components == 1;
    int cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    if (!grey && !cmyk && cinfo.jpeg_color_space != JCS_YCbCr && cinfo.jpeg_color_space != JCS_RGB) {
        int cs = (int)cinfo.jpeg_color_space;
        jpeg_destroy_decompress(&cinfo);
        return ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: a JPEG in colour space %d, which cltrain does not "
                       "convert; HINT: convert it to RGB (e.g. `convert IN -colorspace sRGB OUT`)", name, cs);
    }
    int st = too_large(name, cinfo.image_width, cinfo.image_height, max_pixels);
    if (st) {
        jpeg_destroy_decompress(&cinfo);
        return st;
    }
    cinfo.out_color_space = grey ? JCS_GRAYSCALE : cmyk ? JCS_CMYK : JCS_RGB;
    for (unsigned d = 8; min_h > 0 && min_w > 0 && d > 1; d /= 2)
        if ((cinfo.image_width + d - 1) / d >= (unsigned)min_w && (cinfo.image_height + d - 1) / d >= (unsigned)min_h) {
            cinfo.scale_num = 1;
            cinfo.scale_denom = d;
            break;
        }
    jpeg_start_decompress(&cinfo);
    size_t w = cinfo.output_width, h = cinfo.output_height, ch = (size_t)cinfo.output_components;
    if (ch != (grey ? 1u : cmyk ? 4u : 3u)) {
        jpeg_destroy_decompress(&cinfo);
        return ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: the JPEG decodes to %zu components", name, ch);
    }
    buf = malloc(w * h * ch);
    if (!buf) {
        jpeg_destroy_decompress(&cinfo);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of memory for %zux%zu pixels", name, w, h);
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = buf + (size_t)cinfo.output_scanline * w * ch;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    /* CMYK to RGB as PIL converts it: R = (255 - C)(255 - K) / 255; Adobe's
     * files (an APP14 marker) store the inks inverted, 255 - C */
    int inverted = cinfo.saw_Adobe_marker;
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    for (size_t i = 0; cmyk && i < w * h; i++) {
        const uint8_t *p = buf + 4 * i;
        unsigned k = inverted ? p[3] : 255u - p[3];
        uint8_t rgb[3];
        for (int j = 0; j < 3; j++)
            rgb[j] = (uint8_t)(((inverted ? p[j] : 255u - p[j]) * k + 127) / 255);
        memcpy(buf + 3 * i, rgb, 3);
    }
    out->w = (int)w;
    out->h = (int)h;
    out->c = grey ? 1 : 3;
    out->px = buf;
    return CT_OK;
}

int ct_image_decode(const uint8_t *data, size_t size, const char *name, size_t max_pixels,
                    ct_image *out)
{
    return ct_image_decode_at_least(data, size, name, max_pixels, 0, 0, out);
}

int ct_image_decode_at_least(const uint8_t *data, size_t size, const char *name, size_t max_pixels,
                             int min_h, int min_w, ct_image *out)
{
    static const uint8_t png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    memset(out, 0, sizeof *out);
    if (size >= 8 && !memcmp(data, png_sig, 8))
        return decode_png(data, size, name, max_pixels, out);
    if (size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff)
        return decode_jpeg(data, size, name, max_pixels, min_h, min_w, out);
    return ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte 0: neither a PNG nor a JPEG (the first bytes are "
                   "not their signature); HINT: image folders hold .png, .jpg and .jpeg files", name);
}

/* ---- conversion ---- */

/* How each of the `dst` pixels of one axis mixes the `src` source pixels:
 * pixel i takes weights wt[i * k + j] of source pixels first[i] + j. */
typedef struct axis {
    int k;
    int *first;
    float *wt;
} axis;

static int axis_make(int src, int dst, axis *a)
{
    double scale = (double)src / dst;
    a->k = dst < src ? (int)ceil(scale) + 1 : 2;
    a->first = malloc((size_t)dst * sizeof *a->first);
    a->wt = calloc((size_t)dst * (size_t)a->k, sizeof *a->wt);
    if (!a->first || !a->wt)
        return CT_ERR_NO_MEMORY;
    for (int i = 0; i < dst; i++) {
        float *wt = a->wt + (size_t)i * (size_t)a->k;
        if (dst == src) {
            a->first[i] = i;
            wt[0] = 1;
        } else if (dst < src) { /* area: the share of [i, i+1) * scale each source pixel covers */
            double lo = i * scale, hi = (i + 1) * scale;
            int j0 = (int)floor(lo);
            a->first[i] = j0;
            for (int j = 0; j < a->k && j0 + j < src; j++) {
                double l = j0 + j > lo ? j0 + j : lo, r = j0 + j + 1 < hi ? j0 + j + 1 : hi;
                wt[j] = r > l ? (float)((r - l) / scale) : 0.0f;
            }
        } else { /* bilinear between pixel centres, edges clamped */
            double x = (i + 0.5) * scale - 0.5;
            if (x < 0)
                x = 0;
            int j0 = (int)floor(x);
            if (j0 > src - 1)
                j0 = src - 1;
            double f = x - j0;
            a->first[i] = j0;
            wt[0] = (float)(1 - f);
            if (j0 + 1 < src)
                wt[1] = (float)f;
            else
                wt[0] = 1;
        }
    }
    return CT_OK;
}

static void axis_free(axis *a)
{
    free(a->first);
    free(a->wt);
}

static uint8_t to_u8(float v)
{
    v = roundf(v);
    return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}

int ct_image_convert(const ct_image *im, int c, int h, int w, uint8_t *dst /* (C, H, W) */)
{
    size_t sw = (size_t)im->w, sh = (size_t)im->h, shw = sw * sh;
    uint8_t *planes = malloc(shw * (size_t)c); // (C, sh, sw)
    if (!planes)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory converting a %zux%zu image", sw, sh);
    for (size_t i = 0; i < shw; i++) {
        const uint8_t *p = im->px + i * (size_t)im->c;
        if (c == im->c) {
            for (int k = 0; k < c; k++)
                planes[(size_t)k * shw + i] = p[k];
        } else if (c == 1) { /* PIL's L = R 299/1000 + G 587/1000 + B 114/1000, rounded */
            planes[i] = (uint8_t)((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
        } else {
            for (int k = 0; k < c; k++)
                planes[(size_t)k * shw + i] = p[0];
        }
    }
    if ((int)sw == w && (int)sh == h) {
        memcpy(dst, planes, shw * (size_t)c);
        free(planes);
        return CT_OK;
    }
    axis ax = { 0 }, ay = { 0 };
    float *mid = malloc(sh * (size_t)w * sizeof *mid); // (sh, w) one channel resized along x
    int st = !mid || axis_make((int)sw, w, &ax) || axis_make((int)sh, h, &ay);
    if (st) {
        free(mid);
        free(planes);
        axis_free(&ax);
        axis_free(&ay);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory resizing a %zux%zu image", sw, sh);
    }
    for (int k = 0; k < c; k++) {
        const uint8_t *src = planes + (size_t)k * shw;
        for (size_t y = 0; y < sh; y++)
            for (int x = 0; x < w; x++) {
                const float *wt = ax.wt + (size_t)x * (size_t)ax.k;
                float v = 0;
                for (int j = 0; j < ax.k && ax.first[x] + j < (int)sw; j++)
                    v += wt[j] * src[y * sw + (size_t)(ax.first[x] + j)];
                mid[y * (size_t)w + (size_t)x] = v;
            }
        uint8_t *out = dst + (size_t)k * (size_t)h * (size_t)w;
        for (int y = 0; y < h; y++) {
            const float *wt = ay.wt + (size_t)y * (size_t)ay.k;
            for (int x = 0; x < w; x++) {
                float v = 0;
                for (int j = 0; j < ay.k && ay.first[y] + j < (int)sh; j++)
                    v += wt[j] * mid[(size_t)(ay.first[y] + j) * (size_t)w + (size_t)x];
                out[(size_t)y * (size_t)w + (size_t)x] = to_u8(v);
            }
        }
    }
    free(mid);
    free(planes);
    axis_free(&ax);
    axis_free(&ay);
    return CT_OK;
}

int ct_image_read_file(const char *path, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    char *buf = ct_read_file_max(path, MAX_FILE_BYTES, size);
    if (!buf)
        return errno == ENOMEM ? ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory reading %s", path)
               : errno == EFBIG ? ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: larger than %zu bytes", path, MAX_FILE_BYTES)
               : errno == EIO   ? ct_fail(NULL, CT_ERR_IO, "cannot read %s", path)
                                : ct_fail(NULL, CT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    *data = (uint8_t *)buf;
    return CT_OK;
}

int ct_image_load(const char *path, int c, int h, int w, uint8_t *dst /* (C, H, W) */)
{
    uint8_t *data = NULL;
    size_t size = 0;
    ct_image im;
    int st = ct_image_read_file(path, &data, &size);
    if (st)
        return st;
    st = ct_image_decode_at_least(data, size, path, CT_IMAGE_MAX_PIXELS, h, w, &im);
    free(data);
    if (st)
        return st;
    st = ct_image_convert(&im, c, h, w, dst);
    ct_image_free(&im);
    return st;
}
