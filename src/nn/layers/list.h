/*
 * list.h - every layer type: CT_LAYER(name, file) names the type as the
 * model format spells it and the module in src/nn/layers/ that defines
 * `ct_layer_<name>`. Included with CT_LAYER defined: the registry, the id
 * enum (src/nn/layer.h) and meson.build's source list are made from it, so
 * adding a type here is the only registration it needs. The order is the
 * ids' order; the model parser names unnamed layers by type.
 */
CT_LAYER(input, input)
CT_LAYER(dense, dense)
CT_LAYER(conv2d, conv2d)
CT_LAYER(batchnorm, batchnorm)
CT_LAYER(relu, act)
CT_LAYER(leaky_relu, act)
CT_LAYER(sigmoid, act)
CT_LAYER(tanh, act)
CT_LAYER(gelu, act)
CT_LAYER(dropout, dropout)
CT_LAYER(maxpool, pool)
CT_LAYER(avgpool, pool)
CT_LAYER(global_avgpool, global_avgpool)
CT_LAYER(flatten, flatten)
CT_LAYER(lrn, lrn)
CT_LAYER(add, add)
CT_LAYER(shortcut_a, shortcut_a)
CT_LAYER(embedding, embedding)
CT_LAYER(lstm, lstm)
CT_LAYER(seqpool, seqpool)
CT_LAYER(attention, attention)
CT_LAYER(layernorm, layernorm)
CT_LAYER(posembed, posembed)
CT_LAYER(softmax_cross_entropy, softmax_cross_entropy)
CT_LAYER(mse, mse)
CT_LAYER(silu, act)
CT_LAYER(hardswish, act)
CT_LAYER(relu6, act)
CT_LAYER(mul, mul)
CT_LAYER(concat, concat)
CT_LAYER(rmsnorm, rmsnorm)
CT_LAYER(upsample, upsample)
CT_LAYER(bce_logits, bce_logits)
CT_LAYER(conv_transpose2d, conv_transpose2d)
CT_LAYER(to_sequence, to_sequence)
CT_LAYER(gru, gru)
