/*
 * test_tokenize - byte and word tokens (case folding, punctuation, strict
 * UTF-8), vocabularies and their JSON form (read back strictly), and each
 * error message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltrain/cltrain.h"
#include "data/tokenize.h"
#include "tcheck.h"
#include "tdataset.h"

/* ---- tokens ---- */

typedef struct collect {
    char text[1024]; /* tokens joined by '|' */
    size_t at;
} collect;

static int collect_tok(void *user, const char *tok, size_t len)
{
    collect *c = user;
    if (c->at && c->at < sizeof c->text - 1)
        c->text[c->at++] = '|';
    for (size_t i = 0; i < len && c->at < sizeof c->text - 1; i++)
        c->text[c->at++] = tok[i];
    c->text[c->at] = 0;
    return 0;
}

static const char *words_of(const char *s)
{
    static collect c;
    memset(&c, 0, sizeof c);
    int st = ct_words_scan(s, strlen(s), "test", 0, collect_tok, &c);
    CHECK(st == CT_OK, "scan '%s': %s", s, ct_last_error());
    return c.text;
}

static void scan_fails(const char *s, size_t n, const char *want)
{
    collect c;
    memset(&c, 0, sizeof c);
    int st = ct_words_scan(s, n, "where", 100, collect_tok, &c);
    CHECK(st == CT_ERR_CORRUPT && has(ct_last_error(), want) && has(ct_last_error(), "where: "),
          "scan of bad text: %s '%s', want '%s'", ct_status_str(st), ct_last_error(), want);
}

static void test_byte_tokens(void)
{
    ct_tokenizer *t = NULL;
    CHECK(ct_tokenizer_new_byte(&t) == CT_OK && t, "byte tokenizer");
    CHECK(ct_tokenizer_size(t) == 256 && ct_tokenizer_kind(t) == CT_TOKENS_BYTE, "byte: 256 ids");
    int32_t ids[8];
    size_t n = 0;
    CHECK(ct_tokenizer_encode(t, "H\xc3\xa9!", 4, ids, 8, &n) == CT_OK && n == 4, "encode");
    CHECK(ids[0] == 'H' && ids[1] == 0xc3 && ids[2] == 0xa9 && ids[3] == '!', "ids are the bytes");
    CHECK(ct_tokenizer_encode(t, "abcdef", 6, ids, 2, &n) == CT_OK && n == 6 && ids[1] == 'b',
          "encode counts past cap");
    /* byte tokens take any bytes but NUL */
    CHECK(ct_tokenizer_encode(t, "\xff\xfe", 2, ids, 8, &n) == CT_OK && n == 2 && ids[0] == 255,
          "not UTF-8 is fine for bytes");
    CHECK(ct_tokenizer_encode(t, "ab\0c", 4, ids, 8, &n) == CT_ERR_CORRUPT &&
              has(ct_last_error(), "NUL byte at byte offset 2"),
          "NUL: %s", ct_last_error());
    int32_t hello[] = { 'h', 'i', 0, '!', 300 };
    char buf[16];
    size_t len = ct_tokenizer_decode(t, hello, 5, buf, sizeof buf);
    CHECK(len == 6 && !strcmp(buf, "hi!\xef\xbf\xbd"), "decode '%s' (%zu)", buf, len);
    len = ct_tokenizer_decode(t, hello, 5, buf, 3);
    CHECK(len == 6 && !strcmp(buf, "hi"), "decode truncates like snprintf");
    size_t tl = 9;
    const char *tx = ct_tokenizer_token(t, 'x', &tl);
    CHECK(tx && tl == 1 && *tx == 'x', "token text");
    CHECK(ct_tokenizer_token(t, 0, &tl) && tl == 0, "the padding id is empty");
    CHECK(!ct_tokenizer_token(t, 256, NULL) && !ct_tokenizer_token(t, -1, NULL), "out of range");
    ct_tokenizer_free(&t);
    CHECK(t == NULL, "free clears");
}

static void test_word_scan(void)
{
    CHECK(!strcmp(words_of("Don't STOP!  Now"), "don|'|t|stop|!|now"), "ascii: %s",
          words_of("Don't STOP!  Now"));
    /* Latin-1, Latin Extended-A, Cyrillic, Greek; punctuation beyond ASCII */
    const char *s = "\xc3\x87" "a va? \xc2\xbf" "Qu\xc3\x89? \xd0\x9f\xd0\xa0\xd0\x98\xd0\x92\xd0\x95\xd0\xa2, "
                    "\xd0\x81\xd0\xbb\xd0\xba\xd0\xb0\xe2\x80\xa6 \xc5\x81\xc3\x93" "D\xc5\xb9 "
                    "\xce\xa3\xce\x9f\xce\xa6\xce\x8f\xcf\x82";
    const char *want = "\xc3\xa7" "a|va|?|\xc2\xbf|qu\xc3\xa9|?|\xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82|,|"
                       "\xd1\x91\xd0\xbb\xd0\xba\xd0\xb0|\xe2\x80\xa6|\xc5\x82\xc3\xb3" "d\xc5\xba|"
                       "\xcf\x83\xce\xbf\xcf\x86\xcf\x8e\xcf\x83";
    CHECK(!strcmp(words_of(s), want), "unicode: '%s'", words_of(s));
    /* long s and capital sharp s fold; ß and dotted I stay */
    CHECK(!strcmp(words_of("\xc5\xbf" "o \xe1\xba\x9e \xc3\x9f \xc4\xb0"), "so|\xc3\x9f|\xc3\x9f|\xc4\xb0"),
          "special folds: %s", words_of("\xc5\xbf" "o \xe1\xba\x9e \xc3\x9f \xc4\xb0"));
    /* soft hyphen and zero-width space vanish inside words; NBSP, NEL and
     * ideographic space separate; an emoji is a token; digits are word characters */
    CHECK(!strcmp(words_of("hy\xc2\xad" "phen ze\xe2\x80\x8bro a\xc2\xa0" "b\xc2\x85" "c\xe3\x80\x80" "d"),
                  "hyphen|zero|a|b|c|d"),
          "invisible and spaces: %s",
          words_of("hy\xc2\xad" "phen ze\xe2\x80\x8bro a\xc2\xa0" "b\xc2\x85" "c\xe3\x80\x80" "d"));
    CHECK(!strcmp(words_of("x\xf0\x9f\x98\x80y 3.14 \xc2\xbd"), "x|\xf0\x9f\x98\x80|y|3|.|14|\xc2\xbd"),
          "emoji and numbers: %s", words_of("x\xf0\x9f\x98\x80y 3.14 \xc2\xbd"));
    CHECK(!strcmp(words_of(" \t\n "), ""), "only space: no tokens");
    /* CJK passes through as one word */
    CHECK(!strcmp(words_of("\xe4\xb8\xad\xe6\x96\x87\xe3\x80\x82"), "\xe4\xb8\xad\xe6\x96\x87|\xe3\x80\x82"),
          "cjk: %s", words_of("\xe4\xb8\xad\xe6\x96\x87\xe3\x80\x82"));
    CHECK(ct_case_fold(0x0178) == 0xFF && ct_case_fold(0x04C0) == 0x04CF && ct_case_fold(0x1E9E) == 0xDF &&
              ct_case_fold(0x0401) == 0x0451 && ct_case_fold(0x0139) == 0x013A && ct_case_fold(0x013A) == 0x013A &&
              ct_case_fold(0x0218) == 0x0219 && ct_case_fold(0x00B5) == 0x03BC && ct_case_fold(0x0130) == 0x0130,
          "fold table spot checks");
    /* strict UTF-8 */
    scan_fails("ab\xc3(", 4, "invalid UTF-8 at byte offset 102 (bytes c3 28)");
    scan_fails("\xc0\xaf", 2, "byte offset 100");             /* overlong */
    scan_fails("x\xed\xa0\x80", 4, "byte offset 101");        /* surrogate */
    scan_fails("\xf4\x90\x80\x80", 4, "byte offset 100");     /* above U+10FFFF */
    scan_fails("abc\xe2\x82", 5, "byte offset 103");          /* cut off */
    scan_fails("a\0b", 3, "NUL byte at byte offset 101");
}

static void test_vocab(void)
{
    ct_wordcount *wc = NULL;
    CHECK(ct_wordcount_new(&wc) == CT_OK, "wordcount");
    const char *text = "b a c a b d . The the";
    CHECK(ct_words_scan(text, strlen(text), "t", 0, ct_wordcount_add, wc) == CT_OK, "count");
    CHECK(ct_wordcount_distinct(wc) == 6, "6 distinct: %zu", ct_wordcount_distinct(wc));
    ct_tokenizer *t = NULL;
    /* counts: a 2, b 2, the 2, then . c d with 1: ties in byte order */
    CHECK(ct_tokenizer_build(wc, 4, &t) == CT_OK && ct_tokenizer_size(t) == 6, "build 4 words");
    const char *want[] = { "<pad>", "<unk>", "a", "b", "the", "." };
    for (int i = 0; i < 6; i++) {
        const char *w = ct_tokenizer_token(t, i, NULL);
        CHECK(w && !strcmp(w, want[i]), "word %d is '%s', want '%s'", i, w ? w : "(null)", want[i]);
    }
    int32_t ids[8];
    size_t n = 0;
    CHECK(ct_tokenizer_encode(t, "THE a, zebra.", 13, ids, 8, &n) == CT_OK && n == 5, "encode words");
    CHECK(ids[0] == 4 && ids[1] == 2 && ids[2] == CT_TOKEN_UNK && ids[3] == CT_TOKEN_UNK && ids[4] == 5,
          "ids %d %d %d %d %d", ids[0], ids[1], ids[2], ids[3], ids[4]);
    char buf[64];
    ct_tokenizer_decode(t, ids, n, buf, sizeof buf);
    CHECK(!strcmp(buf, "the a <unk> <unk> ."), "decode words '%s'", buf);
    CHECK(ct_tokenizer_encode(t, "caf\xe9", 4, ids, 8, &n) == CT_ERR_CORRUPT &&
              has(ct_last_error(), "text: invalid UTF-8 at byte offset 3"),
          "word tokens need UTF-8: %s", ct_last_error());
    ct_tokenizer *all = NULL;
    CHECK(ct_tokenizer_build(wc, 100, &all) == CT_OK && ct_tokenizer_size(all) == 8, "vocab capped by the words");

    /* JSON round trip */
    size_t need = ct_tokenizer_to_json(t, NULL, 0);
    char *json = malloc(need + 1);
    CHECK(json && ct_tokenizer_to_json(t, json, need + 1) == need && strlen(json) == need, "to_json");
    CHECK(!strcmp(json, "{\"format\":\"cltrain-tokens\",\"version\":1,\"tokens\":\"word\",\"words\":"
                        "[\"<pad>\",\"<unk>\",\"a\",\"b\",\"the\",\".\"]}"),
          "json '%s'", json);
    ct_tokenizer *back = NULL;
    CHECK(ct_tokenizer_from_json(json, need, &back) == CT_OK && back, "from_json: %s", ct_last_error());
    CHECK(back && ct_tokenizer_size(back) == 6 && ct_tokenizer_kind(back) == CT_TOKENS_WORD, "same size");
    for (int i = 0; back && i < 6; i++)
        CHECK(!strcmp(ct_tokenizer_token(back, i, NULL), want[i]), "round trip word %d", i);
    int32_t ids2[8];
    size_t n2 = 0;
    CHECK(back && ct_tokenizer_encode(back, "THE a, zebra.", 13, ids2, 8, &n2) == CT_OK && n2 == 5 &&
              !memcmp(ids, ids2, sizeof(int32_t) * 2),
          "same ids after the round trip");
    char small[10];
    CHECK(ct_tokenizer_to_json(t, small, sizeof small) == need && !strcmp(small, "{\"format\""),
          "to_json truncates like snprintf: '%s'", small);
    /* quotes and backslashes survive */
    ct_tokenizer *q = NULL;
    const char *qj = "{\"format\":\"cltrain-tokens\",\"version\":1,\"tokens\":\"word\",\"words\":"
                     "[\"<pad>\",\"<unk>\",\"\\\"\",\"\\\\\",\"\\u00e9t\\u00e9\"]}";
    CHECK(ct_tokenizer_from_json(qj, strlen(qj), &q) == CT_OK && q && ct_tokenizer_size(q) == 5,
          "escapes: %s", ct_last_error());
    if (q) {
        CHECK(!strcmp(ct_tokenizer_token(q, 2, NULL), "\"") && !strcmp(ct_tokenizer_token(q, 3, NULL), "\\") &&
                  !strcmp(ct_tokenizer_token(q, 4, NULL), "\xc3\xa9t\xc3\xa9"),
              "escaped words");
        char out[200];
        ct_tokenizer_to_json(q, out, sizeof out);
        CHECK(has(out, "[\"<pad>\",\"<unk>\",\"\\\"\",\"\\\\\",\"\xc3\xa9t\xc3\xa9\"]"), "escapes written: %s", out);
    }
    ct_tokenizer *b = NULL;
    const char *bj = " {\"tokens\":\"byte\",\"version\":1,\"format\":\"cltrain-tokens\"}\n";
    CHECK(ct_tokenizer_from_json(bj, strlen(bj), &b) == CT_OK && ct_tokenizer_kind(b) == CT_TOKENS_BYTE &&
              ct_tokenizer_size(b) == 256,
          "byte json: %s", ct_last_error());
    CHECK(ct_tokenizer_to_json(b, buf, sizeof buf) > 0 &&
              !strcmp(buf, "{\"format\":\"cltrain-tokens\",\"version\":1,\"tokens\":\"byte\"}"),
          "byte json out '%s'", buf);
    free(json);
    ct_tokenizer_free(&q);
    ct_tokenizer_free(&b);
    ct_tokenizer_free(&back);
    ct_tokenizer_free(&all);
    ct_tokenizer_free(&t);
    ct_wordcount_free(&wc);
}

static void json_fails(const char *json, size_t len, int want, const char *msg)
{
    ct_tokenizer *t = (ct_tokenizer *)1;
    int st = ct_tokenizer_from_json(json, len, &t);
    CHECK(st == want && t == NULL && has(ct_last_error(), msg) && has(ct_last_error(), "vocabulary JSON"),
          "json %.60s: %s '%s', want '%s'", json, ct_status_str(st), ct_last_error(), msg);
}

#define HEAD "{\"format\":\"cltrain-tokens\",\"version\":1,\"tokens\":\"word\",\"words\":[\"<pad>\",\"<unk>\""

static void test_vocab_json_errors(void)
{
    const char *cases[][2] = {
        { "", "not valid JSON at byte offset 0" },
        { "{\"format\":", "not valid JSON" },
        { "[1,2]", "not a JSON object" },
        { HEAD "]} x", "text after the JSON object at byte offset" },
        { HEAD "],\"extra\":1}", "unknown key 'extra'" },
        { HEAD "],\"tokens\":\"word\"}", "key 'tokens' appears twice" },
        { "{\"format\":\"other\",\"version\":1,\"tokens\":\"byte\"}", "'format' is not" },
        { "{\"format\":\"cltrain-tokens\",\"version\":1.5,\"tokens\":\"byte\"}", "'version' is not" },
        { "{\"format\":\"cltrain-tokens\",\"tokens\":\"byte\"}", "'version' is not" },
        { "{\"format\":\"cltrain-tokens\",\"version\":1,\"tokens\":\"char\"}", "'tokens' is not" },
        { "{\"format\":\"cltrain-tokens\",\"version\":1,\"tokens\":\"byte\",\"words\":[]}", "byte tokens with" },
        { "{\"format\":\"cltrain-tokens\",\"version\":1,\"tokens\":\"word\"}", "without a 'words' array" },
        { "{\"format\":\"cltrain-tokens\",\"version\":1,\"tokens\":\"word\",\"words\":[\"<pad>\"]}", "holds 1 entries" },
        { "{\"format\":\"cltrain-tokens\",\"version\":1,\"tokens\":\"word\",\"words\":[\"<unk>\",\"<pad>\"]}", "word 0 is \"<unk>\"" },
        { HEAD ",7]}", "word 2 is not a string" },
        { HEAD ",\"\"]}", "word 2 is empty" },
        { HEAD ",\"The\"]}", "word 2 \"The\" is not one token" },
        { HEAD ",\"a b\"]}", "(2 tokens)" },
        { HEAD ",\"a,\"]}", "(2 tokens)" },
        { HEAD ",\"x\",\"y\",\"x\"]}", "word 4 \"x\" repeats word 2" },
        { HEAD ",\"\\u0000\"]}", "escaped NUL" },
        { HEAD ",\"caf\xe9\"]}", "word 2: invalid UTF-8 at byte offset 3" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        json_fails(cases[i][0], strlen(cases[i][0]), CT_ERR_CORRUPT, cases[i][1]);
    json_fails("{\"format\":\"cltrain-tokens\",\"version\":2,\"tokens\":\"byte\"}", 55, CT_ERR_UNSUPPORTED,
               "vocabulary version 2");
    json_fails(HEAD "]}\0", sizeof(HEAD "]}"), CT_ERR_CORRUPT, "a NUL byte at byte offset");
}

int main(void)
{
    test_byte_tokens();
    test_word_scan();
    test_vocab();
    test_vocab_json_errors();
    return tcheck_done("test_tokenize");
}
