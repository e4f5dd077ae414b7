/*
 * make_imagefolder.c - writes a generated image folder for imagefolder:
 * benchmarks and tests: OUT/train/class_K/img_NNNNNN.jpg (and OUT/test/...)
 * in torchvision's ImageFolder layout, RGB JPEGs of H x W whose class shows
 * in their colours (a per-class tint over a diagonal gradient, plus noise),
 * so that a small model can learn them. The same arguments write the same
 * files (a seeded generator; libjpeg's output is deterministic).
 *
 *   make_imagefolder OUT NTRAIN NTEST CLASSES H W [SEED]
 *
 * Samples are dealt to the classes in turn. Exit status 0, or 1 with a
 * message on stderr.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jpeglib.h>

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) && errno != EEXIST) {
        fprintf(stderr, "make_imagefolder: cannot create %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

static long arg(const char *s, const char *what, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) {
        fprintf(stderr, "make_imagefolder: %s '%s' is not a number in [%ld, %ld]\n", what, s, lo, hi);
        exit(1);
    }
    return v;
}

/* One image of class k into px (H, W, 3). */
static void draw(uint8_t *px, int h, int w, int k, int classes, uint64_t *rng)
{
    /* the class's tint: a hue around the circle, at three intensities */
    int tint[3] = { (k * 255 / classes), ((k * 7 + 3) % classes) * 255 / classes, 255 - k * 255 / classes };
    uint64_t r = splitmix(rng);
    int angle = (int)(r % 4), shift = (int)((r >> 8) % 64);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int g = angle == 0 ? x * 255 / w : angle == 1 ? y * 255 / h : angle == 2 ? (x + y) * 127 / w
                                                                                       : (w - x) * 255 / w;
            uint64_t n = splitmix(rng);
            for (int c = 0; c < 3; c++) {
                int v = (tint[c] * 2 + g + shift) / 3 + (int)((n >> (8 * c)) % 48) - 24;
                px[((size_t)y * (size_t)w + (size_t)x) * 3 + (size_t)c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
}

static int write_jpeg(const char *path, const uint8_t *px, int h, int w)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "make_imagefolder: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 90, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(px + (size_t)c.next_scanline * (size_t)w * 3);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    if (fclose(f)) {
        fprintf(stderr, "make_imagefolder: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 7 && argc != 8) {
        fprintf(stderr, "usage: make_imagefolder OUT NTRAIN NTEST CLASSES H W [SEED]\n");
        return 1;
    }
    const char *out = argv[1];
    long counts[2] = { arg(argv[2], "NTRAIN", 0, 100000000), arg(argv[3], "NTEST", 0, 100000000) };
    int classes = (int)arg(argv[4], "CLASSES", 1, 1000);
    int h = (int)arg(argv[5], "H", 1, 8192), w = (int)arg(argv[6], "W", 1, 8192);
    uint64_t rng = argc == 8 ? (uint64_t)arg(argv[7], "SEED", 0, 1L << 40) : 0;
    uint8_t *px = malloc((size_t)h * (size_t)w * 3);
    char path[4096];
    if (!px) {
        fprintf(stderr, "make_imagefolder: out of memory\n");
        return 1;
    }
    int fail = make_dir(out);
    static const char *const splits[2] = { "train", "test" };
    for (int s = 0; s < 2 && !fail; s++) {
        snprintf(path, sizeof path, "%s/%s", out, splits[s]);
        fail = counts[s] > 0 && make_dir(path);
        for (int k = 0; k < classes && counts[s] > 0 && !fail; k++) {
            snprintf(path, sizeof path, "%s/%s/class_%d", out, splits[s], k);
            fail = make_dir(path);
        }
        for (long i = 0; i < counts[s] && !fail; i++) {
            int k = (int)(i % classes);
            draw(px, h, w, k, classes, &rng);
            snprintf(path, sizeof path, "%s/%s/class_%d/img_%06ld.jpg", out, splits[s], k, i);
            fail = write_jpeg(path, px, h, w);
        }
    }
    free(px);
    return fail;
}
