/*
 * test_image.c - PNG and JPEG decoding and the conversion to a model's
 * input (src/data/image.c): the pixels of the tiny seed images of the
 * image fuzz corpus (written by PIL with known values), alpha dropped,
 * palette and 16-bit PNGs (scaled, not gamma-encoded), CMYK JPEG, RGB to grey as PIL computes it, area shrinking
 * and bilinear growing against values worked out by hand, and errors that
 * name the file.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/image.h"
#include "tcheck.h"

/* A corpus file without its two leading option bytes. */
static int corpus_image(const char *dir, const char *name, ct_image *im)
{
    char path[4200];
    uint8_t *data = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int st = ct_image_read_file(path, &data, &size);
    if (!st)
        st = size < 2 ? CT_ERR_CORRUPT : ct_image_decode(data + 2, size - 2, name, CT_IMAGE_MAX_PIXELS, im);
    free(data);
    return st;
}

static int max_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    int d = 0;
    for (size_t i = 0; i < n; i++) {
        int e = abs((int)a[i] - (int)b[i]);
        d = e > d ? e : d;
    }
    return d;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s IMAGE_CORPUS_DIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    ct_image im;
    uint8_t want[64 * 3], got[64 * 3];

    /* 5x4 grey, pixel i = 12 i: exact for PNG, within 8 for JPEG quality 90 */
    for (int i = 0; i < 20; i++)
        want[i] = (uint8_t)(12 * i);
    CHECK(corpus_image(dir, "png-grey", &im) == CT_OK, "%s", ct_last_error());
    CHECK(im.w == 5 && im.h == 4 && im.c == 1 && max_diff(im.px, want, 20) == 0, "png grey");
    ct_image_free(&im);
    CHECK(corpus_image(dir, "jpeg-grey", &im) == CT_OK, "%s", ct_last_error());
    CHECK(im.w == 5 && im.h == 4 && im.c == 1 && max_diff(im.px, want, 20) <= 8, "jpeg grey: %d",
          im.px ? max_diff(im.px, want, 20) : -1);
    ct_image_free(&im);

    /* 6x3 RGB (40 i, 17 i, 255 - 10 i) mod 256, and to grey as PIL: 299/587/114 rounded */
    for (int i = 0; i < 18; i++) {
        want[3 * i] = (uint8_t)(i * 40 % 256);
        want[3 * i + 1] = (uint8_t)(i * 17 % 256);
        want[3 * i + 2] = (uint8_t)(255 - i * 10);
    }
    CHECK(corpus_image(dir, "png-rgb", &im) == CT_OK, "%s", ct_last_error());
    CHECK(im.w == 6 && im.h == 3 && im.c == 3 && max_diff(im.px, want, 54) == 0, "png rgb");
    CHECK(ct_image_convert(&im, 3, 3, 6, got) == CT_OK, "convert");
    int planar_ok = 1;
    for (int i = 0; i < 18; i++)
        for (int k = 0; k < 3; k++)
            planar_ok &= got[k * 18 + i] == want[3 * i + k];
    CHECK(planar_ok, "rgb to planar (C, H, W)");
    CHECK(ct_image_convert(&im, 1, 3, 6, got) == CT_OK, "convert to grey");
    int luma_ok = 1;
    for (int i = 0; i < 18; i++) {
        double l = want[3 * i] * 0.299 + want[3 * i + 1] * 0.587 + want[3 * i + 2] * 0.114;
        luma_ok &= abs((int)got[i] - (int)(l + 0.5)) <= 1;
    }
    CHECK(luma_ok, "rgb to grey");
    ct_image_free(&im);

    /* 4x4 RGBA (16 i, 255 - 16 i, 7, 15 i): the alpha is dropped, not composited */
    CHECK(corpus_image(dir, "png-rgba", &im) == CT_OK, "%s", ct_last_error());
    int rgba_ok = im.c == 3 && im.w == 4 && im.h == 4;
    for (int i = 0; rgba_ok && i < 16; i++)
        rgba_ok = im.px[3 * i] == 16 * i && im.px[3 * i + 1] == 255 - 16 * i && im.px[3 * i + 2] == 7;
    CHECK(rgba_ok, "rgba without its alpha");
    ct_image_free(&im);

    /* a palette PNG decodes to RGB; a 16-bit grey one (7000 i of 65535) to
     * 8 bits, increasing; grey + alpha to grey */
    CHECK(corpus_image(dir, "png-palette", &im) == CT_OK && im.c == 3 && im.w == 6, "palette");
    ct_image_free(&im);
    CHECK(corpus_image(dir, "png-grey16", &im) == CT_OK && im.c == 1 && im.w == 3, "16-bit");
    int scaled = im.px != NULL;
    for (int i = 0; scaled && i < 9; i++)
        scaled = im.px[i] == (7000 * i * 255 + 32767) / 65535;
    CHECK(scaled, "16-bit grey scaled to 8 bits: %d %d %d", im.px ? im.px[0] : -1, im.px ? im.px[1] : -1,
          im.px ? im.px[8] : -1);
    ct_image_free(&im);
    /* 16-bit RGBA: the colour comes back whole (libpng premultiplies it by
     * the alpha; undone: within 1), a transparent pixel's colour is 0 */
    CHECK(corpus_image(dir, "png-rgba16", &im) == CT_OK && im.c == 3 && im.w == 2 && im.h == 2, "rgba16");
    const uint8_t rgba16[12] = { 117, 233, 4, 255, 0, 255, 0, 0, 0, 156, 78, 39 };
    CHECK(im.px && max_diff(im.px, rgba16, 12) <= 1, "16-bit rgba: %d %d %d", im.px ? im.px[0] : -1,
          im.px ? im.px[1] : -1, im.px ? im.px[2] : -1);
    ct_image_free(&im);
    CHECK(corpus_image(dir, "png-grey-alpha", &im) == CT_OK && im.c == 1 && im.w == 5 &&
          max_diff(im.px, (const uint8_t[20]){ 0, 12, 24, 36, 48, 60, 72, 84, 96, 108, 120, 132, 144,
                                               156, 168, 180, 192, 204, 216, 228 }, 20) == 0,
          "grey + alpha");
    ct_image_free(&im);

    /* a CMYK JPEG (PIL's, with Adobe's inverted inks) of the 16x8 RGB image
     * (37 i, 91 i, 255 - 5 i) mod 256, quality 95: to RGB as PIL converts it
     * (measured: equal to PIL's, and within 7, mean 1.2, of the original);
     * the inks read the wrong way round would be off by about 100 */
    CHECK(corpus_image(dir, "jpeg-cmyk", &im) == CT_OK && im.c == 3 && im.w == 16 && im.h == 8, "%s",
          ct_last_error());
    int cmyk_max = 0;
    double cmyk_sum = 0;
    for (int i = 0; im.px && i < 128; i++) {
        const int orig[3] = { i * 37 % 256, i * 91 % 256, ((255 - i * 5) % 256 + 256) % 256 };
        for (int k = 0; k < 3; k++) {
            int e = abs(im.px[3 * i + k] - orig[k]);
            cmyk_max = e > cmyk_max ? e : cmyk_max;
            cmyk_sum += e;
        }
    }
    CHECK(im.px && cmyk_max <= 16 && cmyk_sum / 384 <= 3, "cmyk: max %d, mean %.2f", cmyk_max, cmyk_sum / 384);
    ct_image_free(&im);

    /* area: 4x4 to 2x2 averages 2x2 blocks (rounded); grey to 3 channels copies */
    uint8_t px16[16] = { 0, 10, 100, 101, 20, 30, 102, 103, 255, 255, 1, 2, 255, 254, 3, 4 };
    ct_image sq = { 4, 4, 1, px16 };
    CHECK(ct_image_convert(&sq, 3, 2, 2, got) == CT_OK, "area");
    const uint8_t area[4] = { 15, 102 /* 101.5 */, 255 /* 254.75 */, 3 /* 2.5 */ };
    int area_ok = 1;
    for (int k = 0; k < 3; k++)
        area_ok &= max_diff(got + 4 * k, area, 4) == 0;
    CHECK(area_ok, "area 4x4 -> 2x2: %d %d %d %d", got[0], got[1], got[2], got[3]);
    /* area by a fraction: 3 -> 2 columns, target pixel 0 = (a + b/2) / 1.5 */
    uint8_t row3[3] = { 90, 30, 60 };
    ct_image r3 = { 3, 1, 1, row3 };
    CHECK(ct_image_convert(&r3, 1, 1, 2, got) == CT_OK && got[0] == 70 && got[1] == 50,
          "area 3 -> 2: %d %d", got[0], got[1]);
    /* bilinear: 2 -> 4 columns between pixel centres, edges clamped */
    uint8_t row2[2] = { 0, 100 };
    ct_image r2 = { 2, 1, 1, row2 };
    CHECK(ct_image_convert(&r2, 1, 1, 4, got) == CT_OK && got[0] == 0 && got[1] == 25 &&
          got[2] == 75 && got[3] == 100, "bilinear 2 -> 4: %d %d %d %d", got[0], got[1], got[2], got[3]);

    /* errors name the file: truncated PNG, corrupt JPEG, neither */
    CHECK(corpus_image(dir, "png-truncated", &im) == CT_ERR_CORRUPT &&
          strstr(ct_last_error(), "png-truncated: ") && strstr(ct_last_error(), "libpng"), "%s",
          ct_last_error());
    CHECK(corpus_image(dir, "jpeg-truncated", &im) == CT_ERR_CORRUPT &&
          strstr(ct_last_error(), "jpeg-truncated: byte ") && strstr(ct_last_error(), "libjpeg"), "%s",
          ct_last_error());
    CHECK(corpus_image(dir, "not-an-image", &im) == CT_ERR_CORRUPT &&
          strstr(ct_last_error(), "not-an-image: byte 0: neither a PNG nor a JPEG"), "%s", ct_last_error());
    CHECK(corpus_image(dir, "png-huge-header", &im) != CT_OK, "a 2^31 x 2^31 header");
    return tcheck_done("image");
}
