/*
 * registry.c - the table of layer types, made from list.h: indexed by id,
 * ending in NULL.
 */
#include <string.h>

#include "nn/layer.h"

const ct_layer_type *const ct_layer_types[] = {
#define CT_LAYER(name, file) &ct_layer_##name,
#include "nn/layers/list.h"
#undef CT_LAYER
    NULL,
};

const ct_layer_type *ct_layer_type_find(const char *name)
{
    for (int i = 0; ct_layer_types[i]; i++)
        if (!strcmp(ct_layer_types[i]->name, name))
            return ct_layer_types[i];
    return NULL;
}

int ct_layer_is_loss(const ct_layer *l)
{
    return (l->type->flags & CT_LAYER_LOSS) != 0;
}
