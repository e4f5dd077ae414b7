/*
 * parse.c - the model-file parser (docs/MODEL_FORMAT.md): one layer per
 * line, `[NAME:] TYPE [KEY=VALUE ...]`, `#` comments. Errors name
 * source:line:column and what was expected; shape errors name the layer and
 * both shapes. Nothing is guessed: unknown types and keys, repeated keys,
 * out-of-range values and dangling `from=` names are errors.
 */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "nn/layer.h"

typedef struct parser {
    const char *source;
    int line;
    const char *line_start;
} parser;

static int perr(const parser *p, const char *at, const char *fmt, ...) CT_PRINTF(3, 4);
static int perr(const parser *p, const char *at, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int col = at ? (int)(at - p->line_start) + 1 : 1;
    return ct_fail(NULL, CT_ERR_PARSE, "%s:%d:%d: %s", p->source, p->line, col, msg);
}

/* letters, digits, _ and -, in parts separated by single dots (PyTorch's
 * module paths, `layer1.0.conv1`); starting with a letter, digit or _ */
static int valid_name(const char *s, size_t n)
{
    if (n == 0 || n >= CT_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int start = i == 0 || s[i - 1] == '.';
        if (s[i] == '.' ? start || i + 1 == n
                        : !(isalnum((unsigned char)s[i]) || s[i] == '_' || (s[i] == '-' && !start)))
            return 0;
    }
    return 1;
}

static const char *const act_names[] = { "none", "relu",  "leaky_relu", "sigmoid",  "tanh",
                                         "gelu", "silu", "hardswish",  "relu6" };

static void key_list(const ct_layer_type *t, char *buf, size_t n)
{
    int at = snprintf(buf, n, "%s", t->nkeys ? "" : "no keys");
    for (int i = 0; i < t->nkeys && at >= 0 && (size_t)at < n; i++)
        at += snprintf(buf + at, n - (size_t)at, "%s%s", i ? ", " : "", t->keys[i].name);
    if (t->min_inputs > 0 && at >= 0 && (size_t)at < n)
        snprintf(buf + at, n - (size_t)at, "%sfrom", t->nkeys ? ", " : " but ");
}

static int parse_value(const parser *p, ct_layer *l, int k, const char *val, const char *at)
{
    const ct_key_spec *ks = &l->type->keys[k];
    char *end = NULL;
    errno = 0;
    switch (ks->kind) {
    case CT_KEY_INT: {
        long v = strtol(val, &end, 10);
        if (end == val || *end || errno)
            return perr(p, at, "%s=%s: expected an integer", ks->name, val);
        if (v < ks->min || v > ks->max)
            return perr(p, at, "%s=%ld is out of range [%.0f, %.0f]", ks->name, v, ks->min, ks->max);
        l->v[k] = (double)v;
        return CT_OK;
    }
    case CT_KEY_FLOAT: {
        double v = strtod(val, &end);
        if (end == val || *end || errno || !isfinite(v))
            return perr(p, at, "%s=%s: expected a number", ks->name, val);
        if (v < ks->min || v > ks->max)
            return perr(p, at, "%s=%g is out of range [%g, %g]", ks->name, v, ks->min, ks->max);
        l->v[k] = v;
        return CT_OK;
    }
    case CT_KEY_BOOL:
        if (!strcmp(val, "true"))
            l->v[k] = 1;
        else if (!strcmp(val, "false"))
            l->v[k] = 0;
        else
            return perr(p, at, "%s=%s: expected true or false", ks->name, val);
        return CT_OK;
    case CT_KEY_ACT:
        for (int i = 0; i < (int)CT_ARRAY_LEN(act_names); i++)
            if (!strcmp(val, act_names[i])) {
                l->v[k] = i;
                return CT_OK;
            }
        return perr(p, at, "%s=%s: expected none, relu, leaky_relu, sigmoid, tanh, gelu, silu, hardswish or relu6",
                    ks->name, val);
    case CT_KEY_CHOICE: {
        char names[256];
        int at_n = 0;
        for (int i = 0; ks->choices[i]; i++) {
            if (!strcmp(val, ks->choices[i])) {
                l->v[k] = i;
                return CT_OK;
            }
            if (at_n >= 0 && (size_t)at_n < sizeof names)
                at_n += snprintf(names + at_n, sizeof names - (size_t)at_n, "%s%s", i ? ", " : "",
                                 ks->choices[i]);
        }
        return perr(p, at, "%s=%s: expected one of %s", ks->name, val, at_n ? names : "(none)");
    }
    case CT_KEY_SHAPE: {
        const char *s = val;
        l->shape_key_n = 0;
        for (;;) {
            long v = strtol(s, &end, 10);
            if (end == s || errno || v < ks->min || v > ks->max || l->shape_key_n == 3)
                return perr(p, at, "%s=%s: expected up to three positive sizes like 1x28x28",
                            ks->name, val);
            l->shape_key[l->shape_key_n++] = (int)v;
            if (*end == '\0')
                break;
            if (*end != 'x')
                return perr(p, at, "%s=%s: expected sizes separated by 'x', like 3x32x32", ks->name, val);
            s = end + 1;
        }
        l->v[k] = 1;
        return CT_OK;
    }
    }
    return perr(p, at, "internal: key kind");
}

static int find_layer(const ct_model *m, size_t upto, const char *name)
{
    for (size_t i = 0; i < upto; i++)
        if (!strcmp(m->layers[i].name, name))
            return (int)i;
    return -1;
}

/* Parses one non-empty line (already stripped of its comment) into layer
 * `idx`. `s` is writable. */
static int parse_line(parser *p, ct_model *m, size_t idx, char *s, char **from_text, const char **from_at)
{
    ct_layer *l = &m->layers[idx];
    memset(l, 0, sizeof *l);
    l->line = p->line;
    *from_text = NULL;
    *from_at = NULL;
    char *tok[64];
    int ntok = 0;
    for (char *c = s; *c;) {
        while (*c && isspace((unsigned char)*c))
            *c++ = '\0';
        if (!*c)
            break;
        if (ntok == (int)CT_ARRAY_LEN(tok))
            return perr(p, c, "too many words on one line");
        tok[ntok++] = c;
        while (*c && !isspace((unsigned char)*c))
            c++;
    }
    int t = 0;
    /* NAME: TYPE  or  NAME:TYPE */
    char *colon = strchr(tok[0], ':');
    char *eq = strchr(tok[0], '=');
    char *type_name = tok[0];
    if (colon && (!eq || colon < eq)) {
        *colon = '\0';
        if (!valid_name(tok[0], strlen(tok[0])))
            return perr(p, tok[0], "'%s' is not a layer name (letters, digits, _ and -, in parts "
                        "joined by single dots like layer1.0.conv1, at most %d characters)", tok[0], CT_NAME_MAX - 1);
        snprintf(l->name, sizeof l->name, "%s", tok[0]);
        if (colon[1]) {
            type_name = colon + 1;
            t = 1;
        } else {
            if (ntok < 2)
                return perr(p, colon, "expected a layer type after '%s:'", tok[0]);
            type_name = tok[1];
            t = 2;
        }
    } else {
        t = 1;
    }
    l->type = ct_layer_type_find(type_name);
    if (!l->type) {
        char known[512];
        int at = 0;
        for (int i = 0; ct_layer_types[i] && at >= 0 && (size_t)at < sizeof known; i++)
            at += snprintf(known + at, sizeof known - (size_t)at, "%s%s", i ? ", " : "",
                           ct_layer_types[i]->name);
        return perr(p, type_name, "unknown layer type '%s'; known types: %s", type_name, known);
    }
    for (int k = 0; k < l->type->nkeys; k++)
        l->v[k] = l->type->keys[k].def;
    int seen[CT_MAX_KEYS] = { 0 };
    for (; t < ntok; t++) {
        char *kv = tok[t], *e = strchr(kv, '=');
        if (!e || e == kv || !e[1])
            return perr(p, kv, "expected KEY=VALUE, got '%s'", kv);
        *e = '\0';
        const char *val = e + 1;
        if (!strcmp(kv, "from")) {
            if (l->type->min_inputs == 0)
                return perr(p, kv, "%s reads no other layer: 'from' does not apply", l->type->name);
            if (*from_text)
                return perr(p, kv, "key 'from' given twice");
            *from_text = e + 1;
            *from_at = kv;
            continue;
        }
        int k = 0;
        while (k < l->type->nkeys && strcmp(l->type->keys[k].name, kv))
            k++;
        if (k == l->type->nkeys) {
            char keys[256];
            key_list(l->type, keys, sizeof keys);
            return perr(p, kv, "unknown key '%s' for %s; it takes %s", kv, l->type->name, keys);
        }
        if (seen[k]++)
            return perr(p, kv, "key '%s' given twice", kv);
        int st = parse_value(p, l, k, val, kv);
        if (st)
            return st;
    }
    for (int k = 0; k < l->type->nkeys; k++)
        if (l->type->keys[k].required && !seen[k])
            return perr(p, type_name, "%s needs %s= (%s)", l->type->name, l->type->keys[k].name,
                        l->type->keys[k].help);
    return CT_OK;
}

/* Resolves `from=` (or the previous layer) into l->inputs. */
static int link_inputs(parser *p, ct_model *m, size_t idx, const char *from, const char *from_at)
{
    ct_layer *l = &m->layers[idx];
    if (l->type->min_inputs == 0)
        return CT_OK;
    if (idx == 0)
        return perr(p, NULL, "%s has nothing to read: the first line must be an input layer",
                    l->type->name);
    char names[CT_MAX_INPUTS][CT_NAME_MAX];
    int n = 0;
    if (from) {
        const char *s = from;
        while (*s) {
            const char *c = strchr(s, ',');
            size_t len = c ? (size_t)(c - s) : strlen(s);
            if (n == CT_MAX_INPUTS || !valid_name(s, len))
                return perr(p, from_at, "from=%s: expected up to %d layer names separated by commas", from,
                            CT_MAX_INPUTS);
            memcpy(names[n], s, len);
            names[n++][len] = '\0';
            if (!c)
                break;
            s = c + 1;
            if (!*s)
                return perr(p, from_at, "from=%s: a name is missing after the comma", from);
        }
    }
    /* add with one name reads the previous layer too */
    if (l->type->min_inputs == 2 && n == 1) {
        memmove(names[1], names[0], sizeof names[0]);
        snprintf(names[0], sizeof names[0], "%s", m->layers[idx - 1].name);
        n = 2;
    }
    if (n == 0) {
        snprintf(names[0], sizeof names[0], "%s", m->layers[idx - 1].name);
        n = 1;
    }
    if (n < l->type->min_inputs || n > l->type->max_inputs) {
        if (l->type->min_inputs == l->type->max_inputs)
            return perr(p, from_at, "%s reads %d layer(s), not %d", l->type->name, l->type->min_inputs, n);
        return perr(p, from_at, "%s reads %d to %d layers, not %d", l->type->name, l->type->min_inputs,
                    l->type->max_inputs, n);
    }
    for (int i = 0; i < n; i++) {
        int j = find_layer(m, idx, names[i]);
        if (j < 0) {
            int later = find_layer(m, m->count, names[i]) >= 0;
            return perr(p, from_at, "from: no earlier layer is named '%s'%s", names[i],
                        later ? " (a layer may read only layers above it)" : "");
        }
        if (ct_layer_is_loss(&m->layers[j]))
            return perr(p, from_at, "from: '%s' is a loss; nothing can read it", names[i]);
        l->inputs[l->ninputs++] = j;
        m->layers[j].consumers++;
    }
    size_t at = 0;
    for (int i = 0; i < n; i++)
        at += (size_t)snprintf(l->inputs_text + at, sizeof l->inputs_text - at, "%s%s", i ? "," : "", names[i]);
    return CT_OK;
}

/* Tensor k of layer l as checkpoints name it, `<layer>.<suffix>` (the
 * parameters, then the type's step count), or 0 past the last. */
static int tensor_name(const ct_layer *l, int k, char *buf, size_t n)
{
    const char *suffix = k < l->nparams ? l->params[k].suffix : k == l->nparams ? l->type->step_count : NULL;
    if (!suffix)
        return 0;
    snprintf(buf, n, "%s.%s", l->name, suffix);
    return 1;
}

/* Dotted names could give two layers one checkpoint tensor name (an
 * attention layer `a`'s `a.out_proj.weight` and a dense layer `a.out_proj`'s). */
static int check_tensor_names(const ct_model *m)
{
    char a[2 * CT_NAME_MAX], b[2 * CT_NAME_MAX];
    for (size_t i = 0; i < m->count; i++)
        for (int k = 0; tensor_name(&m->layers[i], k, a, sizeof a); k++)
            for (size_t j = 0; j < i; j++)
                for (int q = 0; tensor_name(&m->layers[j], q, b, sizeof b); q++)
                    if (!strcmp(a, b))
                        return ct_fail(NULL, CT_ERR_PARSE, "%s:%d: layer '%s' would save tensor '%s', which layer "
                                       "'%s' (line %d) saves too. HINT: rename one of them", m->source,
                                       m->layers[i].line, m->layers[i].name, a, m->layers[j].name,
                                       m->layers[j].line);
    return CT_OK;
}

void ct_model_free(ct_model **pm)
{
    if (!pm || !*pm)
        return;
    free((*pm)->text);
    free((*pm)->source);
    free((*pm)->layers);
    free(*pm);
    *pm = NULL;
}

int ct_model_from_text(const char *text, const char *source, ct_model **out)
{
    CT_VALIDATE(NULL, text && out);
    *out = NULL;
    if (!source)
        source = "<model>";
    ct_model *m = calloc(1, sizeof *m);
    char *work = ct_strdup(text);
    if (m) {
        m->text = ct_strdup(text);
        m->source = ct_strdup(source);
    }
    size_t lines = 1;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    if (m)
        m->layers = calloc(lines, sizeof *m->layers);
    if (!m || !work || !m->text || !m->source || !m->layers) {
        free(work);
        ct_model_free(&m);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory parsing %s", source);
    }
    parser p = { m->source, 0, NULL };
    int st = CT_OK;
    char *next = work;
    int type_counts[64] = { 0 };
    while (next && st == CT_OK) {
        char *line = next;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        p.line++;
        p.line_start = line;
        for (char *c = line; *c; c++) {
            if (*c == '#') {
                *c = '\0';
                break;
            }
            if ((unsigned char)*c < 0x20 && *c != '\t' && *c != '\r') {
                st = perr(&p, c, "control character 0x%02x in the model text", (unsigned char)*c);
                break;
            }
        }
        if (st)
            break;
        const char *c = line;
        while (*c && isspace((unsigned char)*c))
            c++;
        if (!*c)
            continue;
        size_t idx = m->count;
        char *from = NULL;
        const char *from_at = NULL;
        st = parse_line(&p, m, idx, line, &from, &from_at);
        if (st)
            break;
        ct_layer *l = &m->layers[idx];
        if (idx == 0 && l->type->min_inputs != 0) {
            st = perr(&p, c, "the first layer must be 'input' (e.g. input shape=1x28x28), not %s",
                      l->type->name);
            break;
        }
        if (idx > 0 && l->type->min_inputs == 0) {
            st = perr(&p, c, "only the first line may be an input layer");
            break;
        }
        if (idx > 0 && ct_layer_is_loss(&m->layers[idx - 1])) {
            st = perr(&p, c, "the loss ('%s') must be the last layer", m->layers[idx - 1].name);
            break;
        }
        if (!l->name[0]) {
            int ti = 0;
            while (ct_layer_types[ti] != l->type)
                ti++;
            if (l->type->min_inputs == 0)
                snprintf(l->name, sizeof l->name, "input");
            else if (ct_layer_is_loss(l))
                snprintf(l->name, sizeof l->name, "loss");
            else
                snprintf(l->name, sizeof l->name, "%s%d", l->type->name, ++type_counts[ti]);
        }
        if (find_layer(m, idx, l->name) >= 0) {
            st = perr(&p, c, "a layer named '%s' already exists (line %d); names must be unique",
                      l->name, m->layers[find_layer(m, idx, l->name)].line);
            break;
        }
        m->count++;
        st = link_inputs(&p, m, idx, from, from_at);
    }
    free(work);
    if (st == CT_OK && m->count == 0)
        st = ct_fail(NULL, CT_ERR_PARSE, "%s: no layers (the first line should be like "
                     "'input shape=1x28x28')", source);
    if (st == CT_OK && !ct_layer_is_loss(&m->layers[m->count - 1]))
        st = ct_fail(NULL, CT_ERR_PARSE, "%s:%d: the last layer must be a loss "
                     "(softmax_cross_entropy, mse or bce_logits), not %s", source, m->layers[m->count - 1].line,
                     m->layers[m->count - 1].type->name);
    /* shapes, in order */
    for (size_t i = 0; st == CT_OK && i < m->count; i++) {
        ct_layer *l = &m->layers[i];
        ct_shape in[CT_MAX_INPUTS];
        for (int k = 0; k < l->ninputs; k++)
            in[k] = m->layers[l->inputs[k]].out;
        char err[512] = "";
        int s = l->type->infer(l, in, l->ninputs, err, sizeof err);
        if (s)
            st = ct_fail(NULL, s, "%s:%d: layer '%s' (%s): %s", source, l->line, l->name,
                         l->type->name, err);
        m->param_count += l->param_count;
        m->buffer_count += l->buffer_count;
    }
    if (st == CT_OK)
        st = check_tensor_names(m);
    for (size_t i = 0; st == CT_OK && i + 1 < m->count; i++)
        if (m->layers[i].consumers == 0)
            st = ct_fail(NULL, CT_ERR_PARSE, "%s:%d: the output of layer '%s' is never used; "
                         "every layer must lead to the loss", source, m->layers[i].line,
                         m->layers[i].name);
    if (st) {
        ct_model_free(&m);
        return st;
    }
    *out = m;
    return CT_OK;
}

int ct_model_from_file(const char *path, ct_model **out)
{
    CT_VALIDATE(NULL, path && out);
    *out = NULL;
    size_t n = 0;
    char *text = ct_read_file(path, &n);
    if (!text)
        return ct_fail(NULL, CT_ERR_IO, "cannot read model file %s: %s", path, strerror(errno));
    if (strlen(text) != n) {
        free(text);
        return ct_fail(NULL, CT_ERR_PARSE, "%s: the model file contains a NUL byte (is it a "
                       "text file?)", path);
    }
    int st = ct_model_from_text(text, path, out);
    free(text);
    return st;
}

const char *ct_model_text(const ct_model *m)
{
    return m ? m->text : NULL;
}

size_t ct_model_param_count(const ct_model *m)
{
    return m ? m->param_count : 0;
}

size_t ct_model_layer_count(const ct_model *m)
{
    return m ? m->count : 0;
}

int ct_model_layer_info(const ct_model *m, size_t i, ct_layer_info *info)
{
    CT_VALIDATE(NULL, m && info && i < m->count);
    const ct_layer *l = &m->layers[i];
    memset(info, 0, sizeof *info);
    info->name = l->name;
    info->type = l->type->name;
    info->line = l->line;
    info->ndim = l->out.ndim;
    for (int k = 0; k < 4; k++)
        info->shape[k] = l->out.d[k];
    info->sequence = l->out.sequence;
    info->params = l->param_count;
    info->inputs = l->inputs_text;
    return CT_OK;
}
