/* Building one layer of the graph from its JSON description (graph.c). */
#ifndef ALERTNET_GRAPH_H
#define ALERTNET_GRAPH_H

#include "internal.h"

/* Fills `layer` for the JSON object `json` (the index-th layer of `graph`) given the shape flowing in; marks the
 * tensors it names as used. On failure, `error` names the layer and what is wrong; layer->scale may need freeing. */
alertnet_status an_graph_build_layer(an_container *file, const an_json *graph, const cJSON *json, int index,
                                     an_shape in, an_layer *layer, alertnet_error *error);

#endif
