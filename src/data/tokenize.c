/*
 * tokenize.c - byte and word tokenizers: word counting, vocabularies,
 * encoding and decoding, and their JSON form (for checkpoint metadata),
 * read back strictly. The UTF-8 and word scanning under them is words.c.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "data/tokenize.h"

#define JSON_FORMAT "cltrain-tokens"
#define JSON_VERSION 1

/* ---- word counts ---- */

typedef struct wc_entry {
    char *w; /* NULL: an empty slot */
    size_t len;
    uint64_t count;
    uint64_t hash;
} wc_entry;

struct ct_wordcount {
    wc_entry *slots; // (nslots), a power of two
    size_t nslots, n;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

int ct_wordcount_new(ct_wordcount **out)
{
    *out = calloc(1, sizeof **out);
    if (*out)
        (*out)->slots = calloc(1024, sizeof *(*out)->slots);
    if (!*out || !(*out)->slots) {
        ct_wordcount_free(out);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for word counts");
    }
    (*out)->nslots = 1024;
    return CT_OK;
}

void ct_wordcount_free(ct_wordcount **pwc)
{
    if (!pwc || !*pwc)
        return;
    ct_wordcount *wc = *pwc;
    for (size_t i = 0; wc->slots && i < wc->nslots; i++)
        free(wc->slots[i].w);
    free(wc->slots);
    free(wc);
    *pwc = NULL;
}

static int wc_grow(ct_wordcount *wc)
{
    size_t ns = wc->nslots * 2;
    wc_entry *s = ns > SIZE_MAX / sizeof *s ? NULL : calloc(ns, sizeof *s);
    if (!s)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %zu distinct words", wc->n);
    for (size_t i = 0; i < wc->nslots; i++) {
        const wc_entry *e = &wc->slots[i];
        if (!e->w)
            continue;
        size_t j = (size_t)e->hash & (ns - 1);
        while (s[j].w)
            j = (j + 1) & (ns - 1);
        s[j] = *e;
    }
    free(wc->slots);
    wc->slots = s;
    wc->nslots = ns;
    return CT_OK;
}

int ct_wordcount_add(void *user, const char *tok, size_t len)
{
    ct_wordcount *wc = user;
    uint64_t h = hash_bytes(tok, len);
    size_t j = (size_t)h & (wc->nslots - 1);
    for (; wc->slots[j].w; j = (j + 1) & (wc->nslots - 1)) {
        wc_entry *e = &wc->slots[j];
        if (e->hash == h && e->len == len && !memcmp(e->w, tok, len)) {
            e->count++;
            return CT_OK;
        }
    }
    char *w = malloc(len + 1);
    if (!w)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %zu distinct words", wc->n);
    memcpy(w, tok, len);
    w[len] = 0;
    wc->slots[j] = (wc_entry){ w, len, 1, h };
    wc->n++;
    return wc->n * 2 > wc->nslots ? wc_grow(wc) : CT_OK;
}

size_t ct_wordcount_distinct(const ct_wordcount *wc)
{
    return wc ? wc->n : 0;
}

static int bytes_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

/* Most frequent first; equal counts in byte order. */
static int by_count(const void *pa, const void *pb)
{
    const wc_entry *a = *(const wc_entry *const *)pa, *b = *(const wc_entry *const *)pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return bytes_cmp(a->w, a->len, b->w, b->len);
}

/* ---- the tokenizer ---- */

void ct_tokenizer_free(ct_tokenizer **ptok)
{
    if (!ptok || !*ptok)
        return;
    ct_tokenizer *t = *ptok;
    for (size_t i = 0; t->words && i < t->size; i++)
        free(t->words[i]);
    free(t->words);
    free(t->wlen);
    free(t->slots);
    free(t);
    *ptok = NULL;
}

int ct_tokenizer_new_byte(ct_tokenizer **out)
{
    CT_VALIDATE(NULL, out);
    *out = calloc(1, sizeof **out);
    if (!*out)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    (*out)->kind = CT_TOKENS_BYTE;
    (*out)->size = 256;
    return CT_OK;
}

/* A word tokenizer with room for `size` ids and the specials in place. */
static int word_new(size_t size, ct_tokenizer **out)
{
    ct_tokenizer *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    t->kind = CT_TOKENS_WORD;
    t->nslots = 4;
    while (t->nslots < 2 * size)
        t->nslots *= 2;
    t->words = calloc(size, sizeof *t->words);
    t->wlen = calloc(size, sizeof *t->wlen);
    t->slots = calloc(t->nslots, sizeof *t->slots);
    if (t->words && t->wlen && t->slots) {
        t->size = size;
        t->words[CT_TOKEN_PAD] = ct_strdup("<pad>");
        t->words[CT_TOKEN_UNK] = ct_strdup("<unk>");
    }
    if (!t->words || !t->wlen || !t->slots || !t->words[0] || !t->words[1]) {
        ct_tokenizer_free(&t);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for a vocabulary of %zu words", size);
    }
    t->wlen[0] = t->wlen[1] = 5;
    *out = t;
    return CT_OK;
}

/* Indexes word id (>= 2); its id if the word was there already. */
static int32_t word_index(ct_tokenizer *t, int32_t id)
{
    const char *w = t->words[id];
    size_t len = t->wlen[id];
    size_t j = (size_t)hash_bytes(w, len) & (t->nslots - 1);
    for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
        int32_t k = (int32_t)t->slots[j] - 1;
        if (t->wlen[k] == len && !memcmp(t->words[k], w, len))
            return k;
    }
    t->slots[j] = (uint32_t)id + 1;
    return id;
}

int32_t ct_tokenizer_lookup(const ct_tokenizer *t, const char *w, size_t len)
{
    if (t->kind != CT_TOKENS_WORD)
        return CT_TOKEN_UNK;
    size_t j = (size_t)hash_bytes(w, len) & (t->nslots - 1);
    for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
        int32_t k = (int32_t)t->slots[j] - 1;
        if (t->wlen[k] == len && !memcmp(t->words[k], w, len))
            return k;
    }
    return CT_TOKEN_UNK;
}

int ct_tokenizer_build(const ct_wordcount *wc, size_t nwords, ct_tokenizer **out)
{
    *out = NULL;
    if (nwords > wc->n)
        nwords = wc->n;
    const wc_entry **all = malloc((wc->n ? wc->n : 1) * sizeof *all);
    if (!all)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory sorting %zu words", wc->n);
    size_t k = 0;
    for (size_t i = 0; i < wc->nslots; i++)
        if (wc->slots[i].w)
            all[k++] = &wc->slots[i];
    qsort(all, k, sizeof *all, by_count);
    ct_tokenizer *t = NULL;
    int st = word_new(nwords + 2, &t);
    for (size_t i = 0; !st && i < nwords; i++) {
        int32_t id = (int32_t)i + 2;
        t->words[id] = malloc(all[i]->len + 1);
        if (!t->words[id]) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for a vocabulary of %zu words", nwords);
            break;
        }
        memcpy(t->words[id], all[i]->w, all[i]->len + 1);
        t->wlen[id] = all[i]->len;
        word_index(t, id);
    }
    free(all);
    if (st)
        ct_tokenizer_free(&t);
    *out = t;
    return st;
}

int ct_tokenizer_copy(const ct_tokenizer *tok, ct_tokenizer **out)
{
    *out = NULL;
    if (tok->kind == CT_TOKENS_BYTE)
        return ct_tokenizer_new_byte(out);
    ct_tokenizer *t = NULL;
    int st = word_new(tok->size, &t);
    for (size_t i = 2; !st && i < tok->size; i++) {
        t->words[i] = malloc(tok->wlen[i] + 1);
        if (!t->words[i]) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory copying a vocabulary");
            break;
        }
        memcpy(t->words[i], tok->words[i], tok->wlen[i] + 1);
        t->wlen[i] = tok->wlen[i];
    }
    if (!st)
        memcpy(t->slots, tok->slots, t->nslots * sizeof *t->slots);
    if (st)
        ct_tokenizer_free(&t);
    *out = t;
    return st;
}

int ct_tokenizer_kind(const ct_tokenizer *tok)
{
    return tok ? tok->kind : -1;
}

size_t ct_tokenizer_size(const ct_tokenizer *tok)
{
    return tok ? tok->size : 0;
}

/* ---- encoding and decoding ---- */

static int sink_put(ct_idsink *s, int32_t id)
{
    if (s->grow && s->count == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 4096;
        int32_t *n = ncap > SIZE_MAX / sizeof *n ? NULL : realloc(s->ids, ncap * sizeof *n);
        if (!n)
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %zu token ids", s->count);
        s->ids = n;
        s->cap = ncap;
    }
    if (s->count < s->cap)
        s->ids[s->count] = id;
    s->count++;
    return CT_OK;
}

typedef struct encoder {
    const ct_tokenizer *tok;
    ct_idsink *sink;
} encoder;

static int encode_word(void *user, const char *w, size_t len)
{
    encoder *e = user;
    return sink_put(e->sink, ct_tokenizer_lookup(e->tok, w, len));
}

int ct_tokenizer_encode_to(const ct_tokenizer *tok, const char *text, size_t n, const char *where,
                           uint64_t base, ct_idsink *sink)
{
    if (tok->kind == CT_TOKENS_WORD) {
        encoder e = { tok, sink };
        return ct_words_scan(text, n, where, base, encode_word, &e);
    }
    const unsigned char *s = (const unsigned char *)text;
    if (sink->grow && sink->cap - sink->count < n) {
        size_t want = sink->count + n;
        int32_t *ids = want > SIZE_MAX / sizeof *ids ? NULL : realloc(sink->ids, want * sizeof *ids);
        if (!ids)
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of memory for %zu token ids", where, want);
        sink->ids = ids;
        sink->cap = want;
    }
    for (size_t i = 0; i < n; i++) {
        if (!s[i])
            return ct_not_text(where, base + i, s + i, n - i);
        if (sink->count < sink->cap)
            sink->ids[sink->count] = s[i];
        sink->count++;
    }
    return CT_OK;
}

int ct_tokenizer_encode(const ct_tokenizer *tok, const char *text, size_t len, int32_t *ids,
                        size_t cap, size_t *count)
{
    CT_VALIDATE(NULL, tok && (text || !len) && (ids || !cap) && count);
    ct_idsink sink = { ids, cap, 0, 0 };
    *count = 0;
    int st = ct_tokenizer_encode_to(tok, text, len, "text", 0, &sink);
    if (!st)
        *count = sink.count;
    return st;
}

const char *ct_tokenizer_token(const ct_tokenizer *tok, int32_t id, size_t *len)
{
    static const char bytes[256] = {
#define B4(i) (char)(i), (char)((i) + 1), (char)((i) + 2), (char)((i) + 3)
#define B16(i) B4(i), B4((i) + 4), B4((i) + 8), B4((i) + 12)
#define B64(i) B16(i), B16((i) + 16), B16((i) + 32), B16((i) + 48)
        B64(0), B64(64), B64(128), B64(192)
#undef B64
#undef B16
#undef B4
    };
    if (len)
        *len = 0;
    if (!tok || id < 0 || (size_t)id >= tok->size)
        return NULL;
    if (tok->kind == CT_TOKENS_BYTE) {
        if (len)
            *len = id == CT_TOKEN_PAD ? 0 : 1;
        return &bytes[id];
    }
    if (len)
        *len = tok->wlen[id];
    return tok->words[id];
}

/* snprintf-style appending: writes what fits, counts everything. */
static void put_bytes(char *buf, size_t cap, size_t *at, const char *s, size_t n)
{
    if (*at < cap) {
        size_t room = cap - 1 - *at, k = n < room ? n : room;
        memcpy(buf + *at, s, k);
        buf[*at + k] = 0;
    }
    *at += n;
}

size_t ct_tokenizer_decode(const ct_tokenizer *tok, const int32_t *ids, size_t n, char *buf,
                           size_t cap)
{
    size_t at = 0;
    if (cap)
        buf[0] = 0;
    if (!tok || (!ids && n))
        return 0;
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        const char *s = ct_tokenizer_token(tok, ids[i], &len);
        if (!s)
            s = "\xef\xbf\xbd", len = 3; /* U+FFFD for an id outside the vocabulary */
        else if (ids[i] == CT_TOKEN_PAD)
            continue;
        if (tok->kind == CT_TOKENS_WORD && !first)
            put_bytes(buf, cap, &at, " ", 1);
        put_bytes(buf, cap, &at, s, len);
        first = 0;
    }
    return at;
}

/* ---- JSON ---- */

size_t ct_tokenizer_to_json(const ct_tokenizer *tok, char *buf, size_t cap)
{
    size_t at = 0;
    if (cap)
        buf[0] = 0;
    if (!tok)
        return 0;
    char head[96];
    snprintf(head, sizeof head, "{\"format\":\"%s\",\"version\":%d,\"tokens\":\"%s\"", JSON_FORMAT,
             JSON_VERSION, tok->kind == CT_TOKENS_WORD ? "word" : "byte");
    put_bytes(buf, cap, &at, head, strlen(head));
    if (tok->kind == CT_TOKENS_WORD) {
        put_bytes(buf, cap, &at, ",\"words\":[", 10);
        for (size_t i = 0; i < tok->size; i++) {
            const char *w = tok->words[i];
            put_bytes(buf, cap, &at, i ? ",\"" : "\"", i ? 2 : 1);
            for (size_t k = 0; k < tok->wlen[i]; k++) {
                unsigned char c = (unsigned char)w[k];
                char esc[8];
                if (c == '"' || c == '\\') {
                    esc[0] = '\\';
                    esc[1] = (char)c;
                    put_bytes(buf, cap, &at, esc, 2);
                } else if (c < 0x20) {
                    snprintf(esc, sizeof esc, "\\u%04x", c);
                    put_bytes(buf, cap, &at, esc, 6);
                } else {
                    put_bytes(buf, cap, &at, w + k, 1);
                }
            }
            put_bytes(buf, cap, &at, "\"", 1);
        }
        put_bytes(buf, cap, &at, "]", 1);
    }
    put_bytes(buf, cap, &at, "}", 1);
    return at;
}

typedef struct one_token {
    const char *w;
    size_t len;
    int count, same;
} one_token;

static int check_one(void *user, const char *tok, size_t len)
{
    one_token *o = user;
    o->same = o->count == 0 && len == o->len && !memcmp(tok, o->w, len);
    o->count++;
    return CT_OK;
}

/* The number in n if it is an integer in [lo, hi]. */
static int json_int(const cJSON *n, double lo, double hi, int *out)
{
    if (!cJSON_IsNumber(n) || !(n->valuedouble >= lo && n->valuedouble <= hi) ||
        n->valuedouble != (double)(int)n->valuedouble)
        return 0;
    *out = (int)n->valuedouble;
    return 1;
}

static int parse_words(const cJSON *arr, const char *where, ct_tokenizer **out)
{
    int n = cJSON_GetArraySize(arr);
    if (n < 2 || (size_t)n - 2 > CT_VOCAB_MAX)
        return ct_fail(NULL, CT_ERR_CORRUPT,
                       "%s: 'words' holds %d entries; HINT: a word vocabulary starts with \"<pad>\" "
                       "and \"<unk>\" and holds at most %zu words after them",
                       where, n, CT_VOCAB_MAX);
    ct_tokenizer *t = NULL;
    int st = word_new((size_t)n, &t);
    int32_t id = 0;
    for (const cJSON *it = arr->child; !st && it; it = it->next, id++) {
        if (!cJSON_IsString(it) || !it->valuestring) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: word %d is not a string", where, (int)id);
            break;
        }
        const char *w = it->valuestring;
        size_t len = strlen(w);
        if (id < 2) {
            if (strcmp(w, t->words[id]))
                st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: word %d is \"%.40s\", want \"%s\"", where,
                             (int)id, w, t->words[id]);
            continue;
        }
        char place[4200];
        snprintf(place, sizeof place, "%s: word %d", where, (int)id);
        one_token o = { w, len, 0, 0 };
        if (!len)
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s is empty", place);
        else if (!(st = ct_words_scan(w, len, place, 0, check_one, &o)) && (o.count != 1 || !o.same))
            st = ct_fail(NULL, CT_ERR_CORRUPT,
                         "%s \"%.40s\" is not one token as word tokens read it (%d tokens%s); "
                         "HINT: words are lower-cased, without white space, and a punctuation "
                         "character is a word of its own",
                         place, w, o.count, o.count == 1 ? ", case-folded differently" : "");
        if (st)
            break;
        t->words[id] = ct_strdup(w);
        if (!t->words[id]) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
            break;
        }
        t->wlen[id] = len;
        int32_t was = word_index(t, id);
        if (was != id)
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s \"%.40s\" repeats word %d", place, w, (int)was);
    }
    if (st)
        ct_tokenizer_free(&t);
    *out = t;
    return st;
}

int ct_tokenizer_parse(const char *json, size_t len, const char *where, ct_tokenizer **out)
{
    *out = NULL;
    if (len > ((size_t)1 << 31))
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: %zu bytes of JSON is too large for a vocabulary",
                       where, len);
    const char *nul = memchr(json, 0, len);
    if (nul)
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: a NUL byte at byte offset %zu", where,
                       (size_t)(nul - json));
    /* cJSON would cut a string at an escaped NUL: refuse \u0000 */
    for (size_t i = 0; i + 1 < len; i++)
        if (json[i] == '\\') {
            if (json[i + 1] == 'u' && i + 5 < len && !memcmp(json + i + 2, "0000", 4))
                return ct_fail(NULL, CT_ERR_CORRUPT, "%s: an escaped NUL (\\u0000) at byte offset %zu",
                               where, i);
            i++;
        }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root) {
        size_t at = end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
        return ct_fail(NULL, CT_ERR_CORRUPT, "%s: not valid JSON at byte offset %zu", where, at);
    }
    for (const char *p = end; p < json + len; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            cJSON_Delete(root);
            return ct_fail(NULL, CT_ERR_CORRUPT, "%s: text after the JSON object at byte offset %zu",
                           where, (size_t)(p - json));
        }
    int st = CT_OK;
    const cJSON *fmt = NULL, *ver = NULL, *kind = NULL, *words = NULL;
    if (!cJSON_IsObject(root))
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: not a JSON object", where);
    for (const cJSON *it = cJSON_IsObject(root) ? root->child : NULL; !st && it; it = it->next) {
        const cJSON **slot = !strcmp(it->string, "format")    ? &fmt
                             : !strcmp(it->string, "version") ? &ver
                             : !strcmp(it->string, "tokens")  ? &kind
                             : !strcmp(it->string, "words")   ? &words
                                                              : NULL;
        if (!slot)
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: unknown key '%.40s'; HINT: a vocabulary has "
                         "format, version, tokens and (word tokens) words", where, it->string);
        else if (*slot)
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: key '%s' appears twice", where, it->string);
        else
            *slot = it;
    }
    int version = 0;
    if (!st && (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, JSON_FORMAT)))
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: 'format' is not \"%s\"", where, JSON_FORMAT);
    else if (!st && !json_int(ver, 1, 1e9, &version))
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: 'version' is not a positive integer", where);
    else if (!st && version != JSON_VERSION)
        st = ct_fail(NULL, CT_ERR_UNSUPPORTED,
                     "%s: vocabulary version %d; HINT: this cltrain reads version %d: use the "
                     "cltrain that wrote it",
                     where, version, JSON_VERSION);
    else if (!st && (!cJSON_IsString(kind) ||
                     (strcmp(kind->valuestring, "byte") && strcmp(kind->valuestring, "word"))))
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: 'tokens' is not \"byte\" or \"word\"", where);
    else if (!st && !strcmp(kind->valuestring, "byte")) {
        if (words)
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte tokens with a 'words' list", where);
        else
            st = ct_tokenizer_new_byte(out);
    } else if (!st) {
        if (!cJSON_IsArray(words))
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: word tokens without a 'words' array", where);
        else
            st = parse_words(words, where, out);
    }
    cJSON_Delete(root);
    return st;
}

int ct_tokenizer_from_json(const char *json, size_t len, ct_tokenizer **out)
{
    CT_VALIDATE(NULL, out);
    *out = NULL;
    CT_VALIDATE(NULL, json || !len);
    return ct_tokenizer_parse(json ? json : "", len, "vocabulary JSON", out);
}
