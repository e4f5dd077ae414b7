/*
 * test_core - SHA-256 against FIPS 180-4 test vectors, status strings, and
 * the device selector parser on made-up device lists (no OpenCL needed).
 */
#include <stdlib.h>
#include <string.h>

#include "cltrain/cltrain.h"
#include "core/sha256.h"
#include "ops/ops.h"
#include "tcheck.h"

static void sha(const char *msg, size_t reps, const char *want)
{
    ct_sha256 s;
    uint8_t d[32];
    char hex[65];
    ct_sha256_init(&s);
    for (size_t i = 0; i < reps; i++)
        ct_sha256_update(&s, msg, strlen(msg));
    ct_sha256_final(&s, d);
    ct_sha256_hex(d, hex);
    CHECK(!strcmp(hex, want), "sha256('%.20s' x %zu) = %s, want %s", msg, reps, hex, want);
}

static ct_device_info dev(unsigned p, unsigned d, ct_device_type t, const char *name, unsigned cu)
{
    ct_device_info i;
    memset(&i, 0, sizeof i);
    i.platform_index = p;
    i.device_index = d;
    i.type = t;
    snprintf(i.name, sizeof i.name, "%s", name);
    snprintf(i.vendor, sizeof i.vendor, "%s", t == CT_DEVICE_GPU ? "GPU Corp" : "CPU Inc");
    snprintf(i.platform_name, sizeof i.platform_name, "Platform %u", p);
    i.compute_units = cu;
    i.max_clock_mhz = 1000;
    return i;
}

static void select_ok(const ct_device_info *devs, size_t n, const char *sel, size_t want_n,
                      const size_t *want)
{
    size_t idx[8], got = 99;
    int st = ct_device_select(devs, n, sel, idx, 8, &got);
    CHECK(st == CT_OK, "select '%s': %s", sel, ct_last_error());
    if (st)
        return;
    CHECK(got == want_n, "select '%s' gave %zu devices, want %zu", sel, got, want_n);
    for (size_t i = 0; i < got && i < want_n; i++)
        CHECK(idx[i] == want[i], "select '%s' [%zu] = %zu, want %zu", sel, i, idx[i], want[i]);
}

static void select_bad(const ct_device_info *devs, size_t n, const char *sel, int want_status,
                       const char *want_text)
{
    size_t idx[8], got = 99;
    int st = ct_device_select(devs, n, sel, idx, 8, &got);
    CHECK(st == want_status, "select '%s' gave %d (%s), want %d", sel, st, ct_status_str(st), want_status);
    CHECK(got == 0, "a failed select reports %zu devices", got);
    CHECK(strstr(ct_last_error(), want_text) != NULL, "select '%s' message '%s' lacks '%s'", sel,
          ct_last_error(), want_text);
}

/* The kernels' ct_udiv, evaluated as the device does (mul_hi, shift) */
static uint32_t udiv(uint32_t x, cl_uint2 md)
{
    return md.s[0] ? (uint32_t)(((uint64_t)x * md.s[0]) >> 32) >> md.s[1] : x;
}

/* ct_fastdiv's pairs divide exactly: every divisor to 4,100 and around
 * each power of two, against x at 0, around the divisor's multiples near
 * 2^31 and at pseudo-random points. */
static void fastdiv(void)
{
    uint64_t r = 12345;
    int bad = 0;
    for (int pass = 0; pass < 2 && !bad; pass++) {
        for (uint64_t d = 1; d < 0x80000000u && !bad; d = pass ? d * 2 : d + 1) {
            if (!pass && d > 4100)
                break;
            for (int e = pass ? -1 : 0; e <= (pass ? 1 : 0) && !bad; e++) {
                uint32_t dv = (uint32_t)((int64_t)d + e);
                if (dv == 0 || dv >= 0x80000000u)
                    continue;
                cl_uint2 md = ct_fastdiv(dv);
                uint32_t top = 0x7fffffffu / dv * dv;
                uint32_t xs[8] = { 0, dv - 1, dv, 0x7fffffffu, top, top - 1, top ? top - dv : 0, 0 };
                for (int i = 0; i < 64 && !bad; i++) {
                    uint32_t x = i < 7 ? xs[i] : (uint32_t)((r = r * 6364136223846793005ull + 1) >> 33);
                    if (udiv(x, md) != x / dv) {
                        CHECK(0, "ct_fastdiv(%u): %u / %u gave %u, want %u", dv, x, dv, udiv(x, md), x / dv);
                        bad = 1;
                    }
                }
            }
        }
    }
    CHECK(!bad, "ct_fastdiv divides exactly");
}

int main(void)
{
    fastdiv();
    sha("", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha("abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    sha("a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    CHECK(strstr(ct_status_str(CT_ERR_BUILD), "CT_ERR_BUILD"), "%s", ct_status_str(CT_ERR_BUILD));
    CHECK(strstr(ct_status_str(CL_INVALID_VALUE), "CL_INVALID_VALUE"), "%s", ct_status_str(-30));
    CHECK(strstr(ct_status_str(-1017), "CLBlast"), "%s", ct_status_str(-1017));
    CHECK(ct_status_str(12345) != NULL, "unknown codes still give text");

    /* platform 0: a CPU; platform 1: two GPUs (the second bigger); platform 2: none listed */
    ct_device_info devs[3] = {
        dev(0, 0, CT_DEVICE_CPU, "Ryzen CPU", 16),
        dev(1, 0, CT_DEVICE_GPU, "Radeon Small", 8),
        dev(1, 1, CT_DEVICE_GPU, "Radeon Big", 64),
    };
    unsetenv("CLTRAIN_DEVICE");
    select_ok(devs, 3, "0:0", 1, (size_t[]){ 0 });
    select_ok(devs, 3, "1:1", 1, (size_t[]){ 2 });
    select_ok(devs, 3, " 1:0 , 0:0 ", 2, (size_t[]){ 1, 0 });
    select_ok(devs, 3, "gpu", 1, (size_t[]){ 2 });
    select_ok(devs, 3, "GPU,gpu", 2, (size_t[]){ 2, 1 });
    select_ok(devs, 3, "cpu", 1, (size_t[]){ 0 });
    select_ok(devs, 3, "best", 1, (size_t[]){ 2 });
    select_ok(devs, 3, NULL, 1, (size_t[]){ 2 });
    select_ok(devs, 3, "", 1, (size_t[]){ 2 });
    select_ok(devs, 3, "all", 3, (size_t[]){ 0, 1, 2 });
    select_ok(devs, 3, "all-gpu", 2, (size_t[]){ 1, 2 });
    select_ok(devs, 3, "small", 1, (size_t[]){ 1 });
    select_ok(devs, 3, "radeon", 1, (size_t[]){ 2 });
    select_ok(devs, 3, "cpu inc", 1, (size_t[]){ 0 });
    select_ok(devs, 3, "platform 1", 1, (size_t[]){ 2 });
    setenv("CLTRAIN_DEVICE", "0:0", 1);
    select_ok(devs, 3, NULL, 1, (size_t[]){ 0 });
    select_ok(devs, 3, "1:0", 1, (size_t[]){ 1 }); /* an explicit selector wins */
    setenv("CLTRAIN_DEVICE", "9:9", 1);
    select_bad(devs, 3, NULL, CT_ERR_NO_DEVICE, "CLTRAIN_DEVICE");
    unsetenv("CLTRAIN_DEVICE");

    select_bad(devs, 3, "1:5", CT_ERR_NO_DEVICE, "platform 1 has no device 5");
    select_bad(devs, 3, "2:0", CT_ERR_NO_DEVICE, "no platform 2");
    select_bad(devs, 3, "accelerator", CT_ERR_NO_DEVICE, "no accelerator device");
    select_bad(devs, 3, "geforce", CT_ERR_NO_DEVICE, "matches 'geforce'");
    select_bad(devs, 3, "all-fpga", CT_ERR_PARSE, "all-fpga");
    select_bad(devs, 3, "0:x", CT_ERR_PARSE, "P:D");
    select_bad(devs, 3, "0:", CT_ERR_PARSE, "P:D");
    select_bad(devs, 3, ":0", CT_ERR_PARSE, "P:D");
    select_bad(devs, 3, "0:0:0", CT_ERR_PARSE, "P:D");
    select_bad(devs, 3, "-1:0", CT_ERR_PARSE, "P:D");
    select_bad(devs, 3, "0:0,", CT_ERR_PARSE, "empty term");
    select_bad(devs, 3, ",0:0", CT_ERR_PARSE, "column 1");
    select_bad(devs, 3, "0:0,0:0", CT_ERR_INVALID_ARG, "second time");
    select_bad(devs, 3, "99999999999999999999:0", CT_ERR_PARSE, "P:D");
    select_bad(devs, 0, "best", CT_ERR_NO_DEVICE, "no OpenCL device");
    {
        size_t idx[1], got = 0;
        int st = ct_device_select(devs, 3, "all", idx, 1, &got);
        CHECK(st == CT_ERR_INVALID_ARG && got == 0, "overflowing the output gave %d", st);
    }
    return tcheck_done("test_core");
}
