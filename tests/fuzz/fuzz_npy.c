/*
 * fuzz_npy - NumPy's .npy arrays and .npz archives (src/data/npy.c) from
 * memory. Byte 0 picks the format: even, the rest is a .npy file; odd, a
 * .npz archive whose member "x" (bit 1 clear) or "y_train" (set) is taken
 * out and parsed as a .npy file. A parsed array must describe exactly the
 * bytes it holds, and every element must be readable.
 */
#include <string.h>

#include "data/npy.h"
#include "fuzz.h"

static void check_array(const uint8_t *buf, size_t n)
{
    ct_npy a;
    if (ct_npy_parse(buf, n, "fuzz.npy", &a) != 0)
        return;
    FUZZ_CHECK(a.ndim >= 0 && a.ndim <= CT_NPY_MAX_DIMS, "%d dimensions", a.ndim);
    FUZZ_CHECK(a.itemsize >= 1 && a.itemsize <= 8 && strchr("fiub", a.kind), "dtype %c%d", a.kind, a.itemsize);
    size_t count = 1;
    for (int d = 0; d < a.ndim; d++)
        count *= (size_t)a.shape[d];
    FUZZ_CHECK(count == a.count, "shape of %zu elements, count %zu", count, a.count);
    FUZZ_CHECK(a.data >= buf && (size_t)(a.data - buf) + a.count * (size_t)a.itemsize == n,
               "the elements are not the file's last bytes");
    double s = 0;
    for (size_t i = 0; i < a.count; i++)
        s += ct_npy_get(&a, i);
    (void)s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1 << 20)
        return 0;
    int mode = data[0];
    data++, size--;
    if (!(mode & 1)) {
        check_array(data, size);
        return 0;
    }
    uint8_t *m = NULL;
    size_t mn = 0;
    if (ct_npz_member(data, size, "fuzz.npz", mode & 2 ? "y_train" : "x", &m, &mn) == 0) {
        FUZZ_CHECK(m != NULL, "a member without bytes");
        check_array(m, mn);
    }
    free(m);
    return 0;
}
