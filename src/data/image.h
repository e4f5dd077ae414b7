/*
 * image.h - PNG and JPEG images for image-folder datasets: decoding bytes
 * (libpng's simplified API, libjpeg-turbo) into 8-bit grey or RGB (CMYK
 * JPEGs converted as PIL converts them), and converting a decoded image to
 * the channels and size a model takes.
 */
#ifndef CT_DATA_IMAGE_H
#define CT_DATA_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* The largest image decoded, in pixels (W x H), so that a lying header
 * cannot make the reader allocate gigabytes. */
#define CT_IMAGE_MAX_PIXELS ((size_t)1 << 28)

typedef struct ct_image {
    int w, h;
    int c;        /* 1: grey, 3: RGB (an alpha channel is dropped) */
    uint8_t *px;  // (H, W, C) interleaved, as decoded
} ct_image;

/* Decodes PNG or JPEG bytes, told apart by their signature. `name` (the
 * file) prefixes every message, which carries libpng's or libjpeg's own
 * words: CT_ERR_CORRUPT for damaged or unsupported data. Images of more
 * than max_pixels pixels are refused (CT_ERR_UNSUPPORTED). */
int ct_image_decode(const uint8_t *data, size_t size, const char *name, size_t max_pixels,
                    ct_image *out);
void ct_image_free(ct_image *im);
/* ct_image_decode, but a JPEG larger than min_h x min_w (both > 0) may come
 * back smaller, not below them: decoded at the smallest of libjpeg's DCT
 * scales 1/8, 1/4, 1/2 that keeps at least min_h x min_w pixels (each 8x8
 * block's coefficients scaled down; PIL's draft() does the same), which
 * decodes a large JPEG for a small input several times faster. PNGs come
 * at full size. */
int ct_image_decode_at_least(const uint8_t *data, size_t size, const char *name, size_t max_pixels,
                             int min_h, int min_w, ct_image *out);

/* The image converted to c channels (1 or 3: RGB to grey by ITU-R 601
 * luma, as PIL's convert("L"); grey to RGB by copying) and resized to
 * (h, w), planar into dst (C, H, W). Each axis is resized on its own:
 * shrinking averages the source pixels each target pixel covers (area),
 * growing interpolates linearly between pixel centres (bilinear), equal
 * sizes copy. Fails only for want of memory. */
int ct_image_convert(const ct_image *im, int c, int h, int w, uint8_t *dst /* (C, H, W) */);

/* Reads and decodes the file at path into dst (C, H, W) as
 * ct_image_convert does; a JPEG is decoded at a DCT scale no smaller than
 * (h, w) (ct_image_decode_at_least) before it is resized. */
int ct_image_load(const char *path, int c, int h, int w, uint8_t *dst /* (C, H, W) */);

/* The file's bytes (malloc'd); CT_ERR_IO naming it when unreadable. */
int ct_image_read_file(const char *path, uint8_t **data, size_t *size);

#endif /* CT_DATA_IMAGE_H */
