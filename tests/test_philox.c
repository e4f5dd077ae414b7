/*
 * test_philox.c - the host Philox4x32-10 against Random123's published
 * known-answer vectors (kat_vectors, philox4x32 with 10 rounds), and the
 * u01 mapping's end points. A wrong multiplier, round count or key bump
 * changes every word, so three vectors suffice.
 */
#include <stdio.h>

#include "core/philox.h"

typedef struct kat {
    uint32_t ctr[4], key[2], want[4];
} kat;

static const kat kats[] = {
    { { 0, 0, 0, 0 }, { 0, 0 }, { 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u } },
    { { 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu },
      { 0xffffffffu, 0xffffffffu },
      { 0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu } },
    { { 0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u },
      { 0xa4093822u, 0x299f31d0u },
      { 0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u } },
};

int main(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof kats / sizeof kats[0]; i++) {
        uint32_t out[4];
        ct_philox4x32(kats[i].ctr, kats[i].key, out);
        for (int j = 0; j < 4; j++) {
            if (out[j] != kats[i].want[j]) {
                printf("FAIL vector %zu word %d: got 0x%08x, want 0x%08x\n", i, j, out[j],
                       kats[i].want[j]);
                bad = 1;
            }
        }
    }
    /* out may alias ctr */
    uint32_t inout[4] = { 0, 0, 0, 0 };
    const uint32_t key0[2] = { 0, 0 };
    ct_philox4x32(inout, key0, inout);
    if (inout[0] != kats[0].want[0] || inout[3] != kats[0].want[3]) {
        printf("FAIL aliased output\n");
        bad = 1;
    }
    if (ct_philox_u01(0) != 0.0f || ct_philox_u01(0xffffffffu) != 16777215.0f / 16777216.0f ||
        ct_philox_u01(0x80000000u) != 0.5f) {
        printf("FAIL u01 end points\n");
        bad = 1;
    }
    printf(bad ? "philox: FAILED\n" : "philox: 3 known-answer vectors ok\n");
    return bad;
}
