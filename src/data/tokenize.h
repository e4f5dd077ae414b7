/*
 * tokenize.h - text to token ids, the internals behind the ct_tokenizer
 * calls of cltrain/data.h.
 *
 * Byte tokens: each byte of the text is its own id (1..255); 0, the NUL
 * byte, which text does not hold, is the padding id. Vocabulary 256, any
 * language, no state.
 *
 * Word tokens: the text must be UTF-8 (strict: no overlong forms, no
 * surrogates, nothing above U+10FFFF). It is lower-cased by simple case
 * folding of Latin-1, Latin Extended-A, the Latin Extended-B block
 * U+0200..U+0233, Greek, Cyrillic (U+0400..U+052F) and Latin Extended
 * Additional; other scripts pass unchanged. White space and control
 * characters separate tokens; soft hyphens, zero-width characters and
 * variation selectors are dropped without separating; every punctuation
 * or symbol character (ASCII punctuation, the punctuation and symbols of
 * Latin-1, General Punctuation, currency, arrows to dingbats, CJK and
 * fullwidth punctuation, emoji) is a token of its own; the rest (letters,
 * digits, marks, other scripts) runs together into words. "Don't stop!"
 * is: don ' t stop !
 *
 * A word vocabulary holds <pad> (id 0), <unk> (id 1, any token outside it)
 * and then the N most frequent tokens of the training split, by count
 * (descending), ties by byte order (ascending), so the same text always
 * gives the same ids.
 */
#ifndef CT_DATA_TOKENIZE_H
#define CT_DATA_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

#include "cltrain/data.h"

/* Words a vocabulary may hold, <pad> and <unk> not counted. */
#define CT_VOCAB_MAX ((size_t)1 << 24)

struct ct_tokenizer {
    int kind;        /* CT_TOKENS_BYTE or CT_TOKENS_WORD */
    size_t size;     /* ids: 256, or words + 2 */
    char **words;    // (size) word tokens: NUL-terminated, [0] "<pad>", [1] "<unk>"
    size_t *wlen;    // (size)
    uint32_t *slots; // (nslots) open-addressed index of words: id + 1, 0 empty
    size_t nslots;
};

/* One UTF-8 sequence at s (n > 0 bytes left): its length (1..4) with the
 * code point in *cp, or 0 when the bytes there are not UTF-8. */
size_t ct_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
/* The simple case folding of c over the ranges above (c elsewhere). */
uint32_t ct_case_fold(uint32_t c);

/* Called with each token in order; tok (len bytes, not NUL-terminated) is
 * valid only during the call. A non-zero return stops the scan and is
 * returned. */
typedef int (*ct_token_fn)(void *user, const char *tok, size_t len);

/* The word tokens of text[0, n), lower-cased. Invalid UTF-8 or a NUL byte
 * is CT_ERR_CORRUPT naming `where` and the byte offset base + k. */
int ct_words_scan(const char *text, size_t n, const char *where, uint64_t base, ct_token_fn fn,
                  void *user);
/* The CT_ERR_CORRUPT status for text that holds the bytes at s (left > 0
 * of them) at byte offset `at` of `where`: a NUL byte, or else invalid
 * UTF-8 (the bytes shown). */
int ct_not_text(const char *where, uint64_t at, const unsigned char *s, size_t left);

/* A word -> count table for building vocabularies. */
typedef struct ct_wordcount ct_wordcount;
int ct_wordcount_new(ct_wordcount **out);
void ct_wordcount_free(ct_wordcount **wc);
/* Counts one token (a ct_token_fn: user is the table). */
int ct_wordcount_add(void *wc, const char *tok, size_t len);
size_t ct_wordcount_distinct(const ct_wordcount *wc);

/* The vocabulary of the (at most) nwords most frequent words of wc. */
int ct_tokenizer_build(const ct_wordcount *wc, size_t nwords, ct_tokenizer **out);
int ct_tokenizer_copy(const ct_tokenizer *tok, ct_tokenizer **out);
/* ct_tokenizer_from_json naming `where` (the file and key, say) in its
 * messages. */
int ct_tokenizer_parse(const char *json, size_t len, const char *where, ct_tokenizer **out);
/* A word's id, CT_TOKEN_UNK when the vocabulary lacks it. */
int32_t ct_tokenizer_lookup(const ct_tokenizer *tok, const char *w, size_t len);

/* Where encoded ids go: at most cap of them into ids (which grows as
 * needed, cap ignored, when grow is set); count counts all. */
typedef struct ct_idsink {
    int32_t *ids;
    size_t cap, count;
    int grow;
} ct_idsink;

/* Appends the ids of text[0, n) to the sink. A NUL byte (both kinds) and
 * invalid UTF-8 (word tokens) are CT_ERR_CORRUPT naming `where` and the
 * byte offset base + k. */
int ct_tokenizer_encode_to(const ct_tokenizer *tok, const char *text, size_t n, const char *where,
                           uint64_t base, ct_idsink *sink);

#endif /* CT_DATA_TOKENIZE_H */
