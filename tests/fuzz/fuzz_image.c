/*
 * fuzz_image - PNG and JPEG decoding (src/data/image.c). Input layout:
 * byte 0 picks the target channels (1 or 3) and byte 1 a target size
 * (1 to 64 each way, so the resize runs both ways); the rest is the image
 * file's bytes. Decoding is bounded to 2^20 pixels here.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/image.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 1 << 20)
        return 0;
    int c = data[0] & 1 ? 3 : 1, h = 1 + (data[1] & 63), w = 1 + ((data[1] * 7) & 63);
    ct_image im;
    if (ct_image_decode(data + 2, size - 2, "image", (size_t)1 << 20, &im) == CT_OK) {
        FUZZ_CHECK(im.w > 0 && im.h > 0 && (im.c == 1 || im.c == 3) && im.px, "bad image %dx%dx%d",
                   im.c, im.h, im.w);
        uint8_t *dst = malloc((size_t)c * (size_t)h * (size_t)w);
        if (dst)
            FUZZ_CHECK(ct_image_convert(&im, c, h, w, dst) == CT_OK, "convert failed");
        free(dst);
        ct_image_free(&im);
    } else {
        FUZZ_CHECK(strstr(ct_last_error(), "image") == ct_last_error(), "the error does not name the "
                   "file: %s", ct_last_error());
    }
    return 0;
}
