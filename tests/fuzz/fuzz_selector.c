/*
 * fuzz_selector - device selector strings (src/cl/device.c) against a made-up
 * list of devices on two platforms, so no OpenCL is needed. Whatever a
 * selector picks must be devices of the list, each at most once.
 */
#include <string.h>

#include "cltrain/cltrain.h"
#include "fuzz.h"

static ct_device_info dev(unsigned p, unsigned d, ct_device_type t, const char *name,
                          const char *vendor, unsigned cu)
{
    ct_device_info i;
    memset(&i, 0, sizeof i);
    i.platform_index = p;
    i.device_index = d;
    i.type = t;
    snprintf(i.name, sizeof i.name, "%s", name);
    snprintf(i.vendor, sizeof i.vendor, "%s", vendor);
    snprintf(i.platform_name, sizeof i.platform_name, "Platform %u", p);
    i.compute_units = cu;
    i.max_clock_mhz = 1000 + 100 * d;
    i.global_mem_bytes = (uint64_t)(d + 1) << 30;
    return i;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    ct_device_info devs[5] = {
        dev(0, 0, CT_DEVICE_CPU, "pthread-Intel Xeon", "GenuineIntel", 16),
        dev(0, 1, CT_DEVICE_CPU, "pthread-AMD EPYC", "AuthenticAMD", 8),
        dev(1, 0, CT_DEVICE_GPU, "Radeon RX 7900", "Advanced Micro Devices", 96),
        dev(1, 1, CT_DEVICE_GPU, "GeForce RTX 4090", "NVIDIA Corporation", 128),
        dev(1, 2, CT_DEVICE_ACCELERATOR, "FPGA", "Xilinx", 4),
    };
    size_t n_devs = sizeof devs / sizeof devs[0];
    char *sel = fuzz_cstr(data, size);
    if (!sel)
        return 0;
    size_t idx[8], n = 0;
    int st = ct_device_select(devs, n_devs, sel, idx, 8, &n);
    if (st == CT_OK) {
        FUZZ_CHECK(n >= 1 && n <= n_devs, "selector '%s' picked %zu devices", sel, n);
        for (size_t i = 0; i < n; i++) {
            FUZZ_CHECK(idx[i] < n_devs, "selector '%s' picked index %zu", sel, idx[i]);
            for (size_t j = 0; j < i; j++)
                FUZZ_CHECK(idx[i] != idx[j], "selector '%s' picked device %zu twice", sel, idx[i]);
        }
    } else {
        FUZZ_CHECK(n == 0, "a failed select reports %zu devices", n);
        FUZZ_CHECK(ct_last_error()[0] != '\0', "a failed select without a message");
    }
    free(sel);
    return 0;
}
