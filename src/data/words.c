/*
 * words.c - the text side of word tokens: strict UTF-8 decoding, the
 * character classes and case folding that tokenize.h describes, and the
 * scanner that cuts text into lower-cased words and punctuation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/tokenize.h"

/* ---- UTF-8 and characters ---- */

size_t ct_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range excludes overlongs and surrogates */
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        v = c & 0x0F;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        v = c & 0x07;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        unsigned b = s[i];
        if (b < lo || b > hi)
            return 0;
        lo = 0x80;
        hi = 0xBF;
        v = v << 6 | (b & 0x3F);
    }
    *cp = v;
    return len;
}

static size_t utf8_put(uint32_t c, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (c < 0x80) {
        o[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (unsigned char)(0xC0 | c >> 6);
        o[1] = (unsigned char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (unsigned char)(0xE0 | c >> 12);
        o[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
        o[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | c >> 18);
    o[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
    o[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
    o[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

enum { C_WORD, C_SPACE, C_PUNCT, C_SKIP };

static int char_class(uint32_t c)
{
    if (c < 0x80) {
        if (c <= 0x20 || c == 0x7F)
            return C_SPACE;
        if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
            return C_WORD;
        return C_PUNCT;
    }
    if (c <= 0xA0) /* C1 controls, NEL, no-break space */
        return C_SPACE;
    if (c == 0xAD) /* soft hyphen: invisible, inside words */
        return C_SKIP;
    if (c <= 0xBF) /* Latin-1 punctuation and symbols, but ª ² ³ µ ¹ º ¼ ½ ¾ are letters or numbers */
        return c == 0xAA || c == 0xB2 || c == 0xB3 || c == 0xB5 || c == 0xB9 || c == 0xBA ||
                       (c >= 0xBC && c <= 0xBE)
                   ? C_WORD
                   : C_PUNCT;
    if (c == 0xD7 || c == 0xF7 || c == 0x37E || c == 0x387)
        return C_PUNCT;
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
        c == 0x205F || c == 0x3000)
        return C_SPACE;
    if ((c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F) ||
        c == 0xFEFF || (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0100 && c <= 0xE01EF))
        return C_SKIP;
    if ((c >= 0x2010 && c <= 0x205E) || (c >= 0x20A0 && c <= 0x20CF) || (c >= 0x2190 && c <= 0x2BFF) ||
        (c >= 0x2E00 && c <= 0x2E7F) || (c >= 0x3001 && c <= 0x303F) || (c >= 0xFE10 && c <= 0xFE1F) ||
        (c >= 0xFE30 && c <= 0xFE6F) || (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
        (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65) || (c >= 0x1F000 && c <= 0x1FAFF))
        return C_PUNCT;
    return C_WORD;
}

/* Upper case at even code points, its lower case at the next odd one. */
static uint32_t even_pair(uint32_t c)
{
    return (c & 1) ? c : c + 1;
}

uint32_t ct_case_fold(uint32_t c)
{
    if (c < 0x80)
        return c >= 'A' && c <= 'Z' ? c + 32 : c;
    if (c < 0x100) {
        if (c == 0xB5) /* micro sign -> Greek mu */
            return 0x3BC;
        return c >= 0xC0 && c <= 0xDE && c != 0xD7 ? c + 32 : c;
    }
    if (c < 0x180) { /* Latin Extended-A */
        if (c == 0x130 || c == 0x131 || c == 0x138 || c == 0x149) /* no simple folding */
            return c;
        if (c == 0x178)
            return 0xFF;
        if (c == 0x17F) /* long s */
            return 's';
        if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
            return (c & 1) ? c + 1 : c;
        return even_pair(c);
    }
    if (c >= 0x200 && c <= 0x233) { /* Latin Extended-B: Romanian, Slovenian, Livonian */
        if (c == 0x220)
            return 0x19E;
        return c == 0x221 ? c : even_pair(c);
    }
    if (c >= 0x370 && c <= 0x3FF) { /* Greek */
        if (c <= 0x373 || c == 0x376 || (c >= 0x3D8 && c <= 0x3EF))
            return even_pair(c);
        if ((c >= 0x391 && c <= 0x3A1) || (c >= 0x3A3 && c <= 0x3AB))
            return c + 32;
        if (c >= 0x388 && c <= 0x38A)
            return c + 37;
        if (c == 0x38E || c == 0x38F)
            return c + 63;
        if (c >= 0x3FD)
            return c - 130;
        switch (c) {
        case 0x37F: return 0x3F3;
        case 0x386: return 0x3AC;
        case 0x38C: return 0x3CC;
        case 0x3C2: return 0x3C3;
        case 0x3CF: return 0x3D7;
        case 0x3D0: return 0x3B2;
        case 0x3D1: return 0x3B8;
        case 0x3D5: return 0x3C6;
        case 0x3D6: return 0x3C0;
        case 0x3F0: return 0x3BA;
        case 0x3F1: return 0x3C1;
        case 0x3F4: return 0x3B8;
        case 0x3F5: return 0x3B5;
        case 0x3F7: return 0x3F8;
        case 0x3F9: return 0x3F2;
        case 0x3FA: return 0x3FB;
        default: return c;
        }
    }
    if (c >= 0x400 && c <= 0x52F) { /* Cyrillic and its supplement */
        if (c <= 0x40F)
            return c + 0x50;
        if (c <= 0x42F)
            return c + 0x20;
        if (c < 0x460 || (c > 0x481 && c < 0x48A) || c == 0x4CF)
            return c;
        if (c == 0x4C0)
            return 0x4CF;
        if (c >= 0x4C1 && c <= 0x4CE)
            return (c & 1) ? c + 1 : c;
        return even_pair(c);
    }
    if (c >= 0x1E00 && c <= 0x1EFF) { /* Latin Extended Additional */
        if (c <= 0x1E95 || c >= 0x1EA0)
            return even_pair(c);
        if (c == 0x1E9B)
            return 0x1E61;
        if (c == 0x1E9E) /* capital sharp s */
            return 0xDF;
    }
    return c;
}

/* ---- scanning words ---- */

int ct_not_text(const char *where, uint64_t at, const unsigned char *s, size_t left)
{
    if (!s[0])
        return ct_fail(NULL, CT_ERR_CORRUPT,
                       "%s: a NUL byte at byte offset %llu: not a text file; HINT: text datasets "
                       "read text (NUL is the padding id)",
                       where, (unsigned long long)at);
    char bytes[16] = "";
    for (size_t i = 0, o = 0; i < left && i < 4; i++)
        o += (size_t)snprintf(bytes + o, sizeof bytes - o, "%s%02x", i ? " " : "", s[i]);
    return ct_fail(NULL, CT_ERR_CORRUPT,
                   "%s: invalid UTF-8 at byte offset %llu (bytes %s); HINT: word tokens read UTF-8 "
                   "text: convert the file (iconv -f LATIN1 -t UTF-8, say) or use tokens=byte, "
                   "which takes any bytes",
                   where, (unsigned long long)at, bytes);
}

int ct_words_scan(const char *text, size_t n, const char *where, uint64_t base, ct_token_fn fn,
                  void *user)
{
    const unsigned char *s = (const unsigned char *)text;
    char small[256], *w = small;
    size_t cap = sizeof small, len = 0;
    int st = CT_OK;
    for (size_t i = 0; i < n && !st;) {
        uint32_t c = 0;
        size_t k = ct_utf8_decode(s + i, n - i, &c);
        if (!k || !c) {
            st = ct_not_text(where, base + i, s + i, n - i);
            break;
        }
        int cls = char_class(c);
        if (cls == C_WORD) {
            if (len + 4 > cap) {
                char *nw = cap > SIZE_MAX / 2 ? NULL : malloc(cap * 2);
                if (!nw) {
                    st = ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of memory for a word of %zu bytes",
                                 where, len);
                    break;
                }
                memcpy(nw, w, len);
                if (w != small)
                    free(w);
                w = nw;
                cap *= 2;
            }
            len += utf8_put(ct_case_fold(c), w + len);
        } else if (cls != C_SKIP) {
            if (len)
                st = fn(user, w, len);
            len = 0;
            if (!st && cls == C_PUNCT)
                st = fn(user, text + i, k);
        }
        i += k;
    }
    if (!st && len)
        st = fn(user, w, len);
    if (w != small)
        free(w);
    return st;
}
