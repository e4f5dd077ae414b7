/*
 * fuzz_model - model files (src/nn/parse.c): the text parser, shape
 * inference, and the memory plan of whatever parses. A model that parses
 * must print back to text that parses to the same layers.
 */
#include <string.h>

#include "cltrain/cltrain.h"
#include "fuzz.h"
#include "nn/model.h"
#include "nn/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0; /* real model files are a few kilobytes */
    char *text = fuzz_cstr(data, size);
    ct_model *m = NULL, *again = NULL;
    if (!text || ct_model_from_text(text, "fuzz.model", &m))
        goto done;
    FUZZ_CHECK(m->count > 0, "a model without layers parsed");
    for (size_t i = 0; i < ct_model_layer_count(m); i++) {
        ct_layer_info info;
        FUZZ_CHECK(ct_model_layer_info(m, i, &info) == CT_OK, "layer %zu has no info", i);
    }
    FUZZ_CHECK(ct_model_from_text(ct_model_text(m), "fuzz.model (again)", &again) == CT_OK,
               "the model's own text does not parse: %s", ct_last_error());
    FUZZ_CHECK(again->count == m->count && again->param_count == m->param_count,
               "the model's text parses to another model");
    ct_net net;
    memset(&net, 0, sizeof net);
    if (ct_net_plan(NULL, m, 2, &net) == CT_OK)
        FUZZ_CHECK(net.rt != NULL, "a plan without run-time layers");
    ct_net_release(&net);
done:
    ct_model_free(&again);
    ct_model_free(&m);
    free(text);
    return 0;
}
