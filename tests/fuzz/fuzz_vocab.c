/*
 * fuzz_vocab - vocabularies read back from JSON (ct_tokenizer_from_json in
 * src/data/tokenize.c) and the word scanner under them (src/data/words.c).
 * The input is the JSON. A vocabulary that reads must write the same JSON
 * back and read again to the same words; and whatever the input, every
 * token the word scanner finds in it scans again to exactly itself (folding
 * is stable and punctuation stands alone), which is what lets a
 * checkpoint's vocabulary be checked word by word.
 */
#include <string.h>

#include "data/tokenize.h"
#include "fuzz.h"

static int rescan_one(void *user, const char *tok, size_t len)
{
    int *count = user;
    (void)tok;
    (void)len;
    (*count)++;
    return 0;
}

static int rescan(void *user, const char *tok, size_t len)
{
    (void)user;
    int count = 0;
    FUZZ_CHECK(len > 0, "an empty token");
    int st = ct_words_scan(tok, len, "token", 0, rescan_one, &count);
    FUZZ_CHECK(st == CT_OK && count == 1, "token '%.*s' scans to %d tokens (%s)", (int)len, tok, count,
               st ? ct_last_error() : "ok");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    const char *json = (const char *)data;
    ct_tokenizer *t = NULL;
    if (ct_tokenizer_from_json(json, size, &t) == CT_OK) {
        size_t n = ct_tokenizer_size(t);
        FUZZ_CHECK(n >= 2, "a vocabulary of %zu ids", n);
        size_t need = ct_tokenizer_to_json(t, NULL, 0);
        char *out = malloc(need + 1);
        if (!out)
            abort();
        FUZZ_CHECK(ct_tokenizer_to_json(t, out, need + 1) == need, "to_json length");
        ct_tokenizer *u = NULL;
        FUZZ_CHECK(ct_tokenizer_from_json(out, need, &u) == CT_OK, "written JSON does not read: %s",
                   ct_last_error());
        FUZZ_CHECK(ct_tokenizer_size(u) == n && ct_tokenizer_kind(u) == ct_tokenizer_kind(t),
                   "round trip changed the vocabulary");
        for (size_t i = 0; i < n && ct_tokenizer_kind(t) == CT_TOKENS_WORD; i++) {
            size_t a = 0, b = 0;
            const char *wa = ct_tokenizer_token(t, (int32_t)i, &a), *wb = ct_tokenizer_token(u, (int32_t)i, &b);
            FUZZ_CHECK(wa && wb && a == b && !memcmp(wa, wb, a), "word %zu changed", i);
            if (i >= 2)
                FUZZ_CHECK(ct_tokenizer_lookup(u, wa, a) == (int32_t)i, "word %zu not found", i);
        }
        /* encoding the input itself gives ids inside the vocabulary */
        int32_t ids[64];
        size_t count = 0;
        if (ct_tokenizer_encode(u, json, size, ids, 64, &count) == CT_OK)
            for (size_t i = 0; i < count && i < 64; i++)
                FUZZ_CHECK(ids[i] > 0 && (size_t)ids[i] < n, "id %d of %zu", ids[i], n);
        ct_tokenizer_free(&u);
        free(out);
    }
    ct_tokenizer_free(&t);
    ct_words_scan(json, size, "input", 0, rescan, NULL);
    return 0;
}
