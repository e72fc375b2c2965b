/* The layer graph: each JSON layer checked against its tensors and the shape flowing in (messages name the
 * tensor, the expected and the found shape), then turned into an an_layer with its output shape and cost. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

enum { MAX_GEOMETRY = 1 << 16, MAX_DIMENSION = 1 << 24 };

typedef struct {
    const char *name;
    an_op op;
    const char *const fields[6]; /* every field the op understands besides "op"; NULL-terminated */
} op_spec;

static const op_spec OPS[] = {
    {"conv2d", AN_CONV2D, {"weight", "bias", "stride", "padding", NULL}},
    {"batchnorm", AN_BATCHNORM, {"weight", "bias", "running_mean", "running_var", "eps", NULL}},
    {"relu", AN_RELU, {NULL}},
    {"maxpool2d", AN_MAXPOOL2D, {"kernel", "stride", "padding", NULL}},
    {"avgpool2d", AN_AVGPOOL2D, {"kernel", "stride", "padding", NULL}},
    {"global_avgpool", AN_GLOBAL_AVGPOOL, {NULL}},
    {"global_maxpool", AN_GLOBAL_MAXPOOL, {NULL}},
    {"flatten", AN_FLATTEN, {NULL}},
    {"dense", AN_DENSE, {"weight", "bias", NULL}},
    {"sigmoid", AN_SIGMOID, {NULL}},
    {"softmax", AN_SOFTMAX, {NULL}},
    {"gru", AN_GRU, {"weight_ih", "weight_hh", "bias_ih", "bias_hh", NULL}},
};

typedef struct {
    an_container *file;
    const an_json *graph; /* the whole graph, whose integer literals pair_field asks about */
    const cJSON *json;
    int index;
    const char *op;
    alertnet_error *error;
} layer_context;

static alertnet_status layer_fail(const layer_context *x, const char *reason) {
    return an_fail(x->error, ALERTNET_ERROR_FORMAT, "layer %d (%s): %s", x->index, x->op, reason);
}

static void format_dims(char *out, size_t size, int rank, const int64_t *dims) {
    size_t used = (size_t)snprintf(out, size, "[");
    for (int i = 0; i < rank && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, i ? ", %lld" : "%lld", (long long)dims[i]);
    if (used < size) snprintf(out + used, size - used, "]");
}

/* "[c]", "[t, c]" (a sequence: rows first, as FORMAT.md writes it) or "[c, h, w]". */
static void format_shape(char *out, size_t size, an_shape s) {
    if (s.rank == 1) snprintf(out, size, "[%d]", s.c);
    else if (s.rank == 2) snprintf(out, size, "[%d, %d]", s.h, s.c);
    else snprintf(out, size, "[%d, %d, %d]", s.c, s.h, s.w);
}

/* The tensor named by field `key` (NULL and OK when optional and absent), with the expected shape; an entry of
 * -1 in `expected` accepts any size there (it is read from the tensor by the caller). */
static alertnet_status tensor_field(const layer_context *x, const char *key, int required, int rank,
                                    const int64_t *expected, const an_tensor **out) {
    *out = NULL;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(x->json, key);
    if (!item) {
        if (!required) return ALERTNET_OK;
        return an_fail(x->error, ALERTNET_ERROR_FORMAT, "layer %d (%s): field \"%s\" (a tensor name) is missing",
                       x->index, x->op, key);
    }
    if (!cJSON_IsString(item))
        return an_fail(x->error, ALERTNET_ERROR_FORMAT, "layer %d (%s): field \"%s\" must be a tensor name",
                       x->index, x->op, key);
    an_tensor *t = an_container_find(x->file, item->valuestring);
    if (!t)
        return an_fail(x->error, ALERTNET_ERROR_FORMAT, "layer %d (%s): tensor \"%.64s\" is not in the file",
                       x->index, x->op, item->valuestring);
    int matches = t->rank == rank;
    for (int i = 0; matches && i < rank; i++) matches = expected[i] < 0 || expected[i] == t->dims[i];
    for (int i = 0; matches && i < rank; i++) matches = t->dims[i] <= MAX_DIMENSION;
    if (!matches) {
        char want[96], found[160];
        size_t used = (size_t)snprintf(want, sizeof want, "[");
        for (int i = 0; i < rank && used < sizeof want; i++) {
            used += expected[i] < 0 ? (size_t)snprintf(want + used, sizeof want - used, i ? ", *" : "*")
                                    : (size_t)snprintf(want + used, sizeof want - used, i ? ", %lld" : "%lld",
                                                       (long long)expected[i]);
        }
        if (used < sizeof want) snprintf(want + used, sizeof want - used, "]");
        format_dims(found, sizeof found, t->rank, t->dims);
        return an_fail(x->error, ALERTNET_ERROR_FORMAT, "layer %d (%s): tensor \"%.64s\": expected shape %s, "
                       "found %s", x->index, x->op, t->name, want, found);
    }
    t->used = 1;
    *out = t;
    return ALERTNET_OK;
}

/* An optional [a, b] of integers in [minimum, MAX_GEOMETRY]; `fallback` when absent. */
static alertnet_status pair_field(const layer_context *x, const char *key, int minimum, const int *fallback,
                                  int *a, int *b) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(x->json, key);
    if (!item) {
        if (!fallback)
            return an_fail(x->error, ALERTNET_ERROR_FORMAT, "layer %d (%s): field \"%s\" is missing", x->index,
                           x->op, key);
        *a = fallback[0];
        *b = fallback[1];
        return ALERTNET_OK;
    }
    int64_t values[2];
    int n = 0;
    if (cJSON_IsArray(item) && cJSON_GetArraySize(item) == 2) {
        for (const cJSON *v = item->child; v && an_json_integer(x->graph, v, minimum, MAX_GEOMETRY, &values[n]);
             v = v->next)
            n++;
    }
    if (n != 2)
        return an_fail(x->error, ALERTNET_ERROR_FORMAT, "layer %d (%s): field \"%s\" must be two integers in "
                       "[%d, %d]", x->index, x->op, key, minimum, MAX_GEOMETRY);
    *a = (int)values[0];
    *b = (int)values[1];
    return ALERTNET_OK;
}

/* floor((size + 2 pad - kernel) / stride) + 1, as PyTorch computes it without ceil_mode. */
static alertnet_status sliding_output(const layer_context *x, int size, int kernel, int stride, int pad, int *out) {
    int64_t padded = (int64_t)size + 2 * (int64_t)pad;
    if (padded < kernel) {
        char reason[128];
        snprintf(reason, sizeof reason, "kernel %d is larger than the padded input %lld", kernel, (long long)padded);
        return layer_fail(x, reason);
    }
    int64_t n = (padded - kernel) / stride + 1;
    if (n > MAX_DIMENSION) return layer_fail(x, "output is too large");
    *out = (int)n;
    return ALERTNET_OK;
}

/* Keeps every activation and im2col buffer within the workspace limit (and every size product far from overflow). */
static alertnet_status check_fits(const layer_context *x, double floats) {
    if (floats <= (double)(ALERTNET_MAX_WORKSPACE / sizeof(float))) return ALERTNET_OK;
    char reason[128];
    snprintf(reason, sizeof reason, "needs %.0f floats of workspace, more than the %u MiB limit", floats,
             ALERTNET_MAX_WORKSPACE >> 20);
    return layer_fail(x, reason);
}

static alertnet_status build_conv2d(const layer_context *x, an_layer *l) {
    const an_tensor *weight, *bias;
    const int64_t want_weight[4] = {-1, l->in.c, -1, -1};
    alertnet_status s = tensor_field(x, "weight", 1, 4, want_weight, &weight);
    if (s != ALERTNET_OK) return s;
    if (weight->dims[2] > MAX_GEOMETRY || weight->dims[3] > MAX_GEOMETRY) return layer_fail(x, "kernel too large");
    const int64_t want_bias[1] = {weight->dims[0]};
    if ((s = tensor_field(x, "bias", 0, 1, want_bias, &bias)) != ALERTNET_OK) return s;
    const int one[2] = {1, 1}, zero[2] = {0, 0};
    if ((s = pair_field(x, "stride", 1, one, &l->sh, &l->sw)) != ALERTNET_OK) return s;
    if ((s = pair_field(x, "padding", 0, zero, &l->ph, &l->pw)) != ALERTNET_OK) return s;
    l->kh = (int)weight->dims[2];
    l->kw = (int)weight->dims[3];
    l->weight = weight->data;
    l->bias = bias ? bias->data : NULL;
    l->out.rank = 3;
    l->out.c = (int)weight->dims[0];
    if ((s = sliding_output(x, l->in.h, l->kh, l->sh, l->ph, &l->out.h)) != ALERTNET_OK) return s;
    if ((s = sliding_output(x, l->in.w, l->kw, l->sw, l->pw, &l->out.w)) != ALERTNET_OK) return s;
    const double pixels = (double)l->out.h * l->out.w;
    if ((s = check_fits(x, pixels * l->out.c)) != ALERTNET_OK) return s;
    if ((s = check_fits(x, pixels * l->in.c * l->kh * l->kw)) != ALERTNET_OK) return s;
    l->parameters = weight->count + (bias ? bias->count : 0);
    double macs = (double)an_shape_count(l->out) * l->in.c * l->kh * l->kw;
    l->mflops = (2.0 * macs + (bias ? (double)an_shape_count(l->out) : 0.0)) / 1e6;
    snprintf(l->detail, sizeof l->detail, "%d->%d kernel %dx%d stride %dx%d padding %dx%d", l->in.c, l->out.c,
             l->kh, l->kw, l->sh, l->sw, l->ph, l->pw);
    return ALERTNET_OK;
}

static alertnet_status build_batchnorm(const layer_context *x, an_layer *l) {
    static const char *const keys[4] = {"weight", "bias", "running_mean", "running_var"};
    const an_tensor *t[4];
    const int64_t want[1] = {l->in.c};
    for (int i = 0; i < 4; i++) {
        alertnet_status s = tensor_field(x, keys[i], 1, 1, want, &t[i]);
        if (s != ALERTNET_OK) return s;
    }
    const cJSON *eps = cJSON_GetObjectItemCaseSensitive(x->json, "eps");
    if (!cJSON_IsNumber(eps) || !isfinite(eps->valuedouble) || !(eps->valuedouble > 0.0))
        return layer_fail(x, "field \"eps\" must be a positive number");
    l->scale = malloc(2 * (size_t)l->in.c * sizeof *l->scale);
    if (!l->scale) return an_fail(x->error, ALERTNET_ERROR_MEMORY, "out of memory for batchnorm");
    l->shift = l->scale + l->in.c;
    for (int c = 0; c < l->in.c; c++) {
        double variance = (double)t[3]->data[c] + eps->valuedouble;
        if (!(variance > 0.0)) return layer_fail(x, "running_var + eps must be positive");
        double scale = t[0]->data[c] / sqrt(variance);
        l->scale[c] = (float)scale;
        l->shift[c] = (float)(t[1]->data[c] - t[2]->data[c] * scale);
        if (!isfinite(l->scale[c]) || !isfinite(l->shift[c])) return layer_fail(x, "scale or shift overflows float");
    }
    l->out = l->in;
    l->parameters = 4 * (size_t)l->in.c;
    l->mflops = 2.0 * (double)an_shape_count(l->in) / 1e6;
    snprintf(l->detail, sizeof l->detail, "%d channels eps %g", l->in.c, eps->valuedouble);
    return ALERTNET_OK;
}

static alertnet_status build_pool2d(const layer_context *x, an_layer *l) {
    alertnet_status s = pair_field(x, "kernel", 1, NULL, &l->kh, &l->kw);
    if (s != ALERTNET_OK) return s;
    const int kernel[2] = {l->kh, l->kw}, zero[2] = {0, 0};
    if ((s = pair_field(x, "stride", 1, kernel, &l->sh, &l->sw)) != ALERTNET_OK) return s;
    if ((s = pair_field(x, "padding", 0, zero, &l->ph, &l->pw)) != ALERTNET_OK) return s;
    if (2 * l->ph > l->kh || 2 * l->pw > l->kw) return layer_fail(x, "padding must be at most half the kernel");
    l->out.rank = 3;
    l->out.c = l->in.c;
    if ((s = sliding_output(x, l->in.h, l->kh, l->sh, l->ph, &l->out.h)) != ALERTNET_OK) return s;
    if ((s = sliding_output(x, l->in.w, l->kw, l->sw, l->pw, &l->out.w)) != ALERTNET_OK) return s;
    if ((s = check_fits(x, (double)l->out.c * l->out.h * l->out.w)) != ALERTNET_OK) return s;
    l->mflops = (double)an_shape_count(l->out) * l->kh * l->kw / 1e6;
    snprintf(l->detail, sizeof l->detail, "kernel %dx%d stride %dx%d padding %dx%d", l->kh, l->kw, l->sh, l->sw,
             l->ph, l->pw);
    return ALERTNET_OK;
}

/* [N] -> [O], or per row [T, N] -> [T, O]. */
static alertnet_status build_dense(const layer_context *x, an_layer *l) {
    const an_tensor *weight, *bias;
    const int64_t want_weight[2] = {-1, l->in.c};
    alertnet_status s = tensor_field(x, "weight", 1, 2, want_weight, &weight);
    if (s != ALERTNET_OK) return s;
    const int64_t want_bias[1] = {weight->dims[0]};
    if ((s = tensor_field(x, "bias", 0, 1, want_bias, &bias)) != ALERTNET_OK) return s;
    l->weight = weight->data;
    l->bias = bias ? bias->data : NULL;
    const int rows = an_shape_rows(l->in);
    l->out = (an_shape){l->in.rank, (int)weight->dims[0], rows, 1};
    if ((s = check_fits(x, (double)rows * (double)l->out.c)) != ALERTNET_OK) return s;
    l->parameters = weight->count + (bias ? bias->count : 0);
    l->mflops = rows * (2.0 * (double)weight->count + (bias ? (double)bias->count : 0.0)) / 1e6;
    snprintf(l->detail, sizeof l->detail, "%d->%d", l->in.c, l->out.c);
    return ALERTNET_OK;
}

/* PyTorch nn.GRU (one layer, batch_first): [1, T, I] or [T, I] -> [T, H]; H from weight_hh [3H, H]. */
static alertnet_status build_gru(const layer_context *x, an_layer *l) {
    if (l->in.rank == 3) l->in = (an_shape){2, l->in.w, l->in.h, 1}; /* [1, T, I] is the sequence [T, I] */
    const an_tensor *weight_ih, *weight_hh, *bias_ih, *bias_hh;
    const int64_t any[2] = {-1, -1};
    alertnet_status s = tensor_field(x, "weight_hh", 1, 2, any, &weight_hh);
    if (s != ALERTNET_OK) return s;
    const int64_t H = weight_hh->dims[1];
    if (weight_hh->dims[0] != 3 * H) {
        char reason[192];
        snprintf(reason, sizeof reason, "tensor \"%.64s\": expected shape [3H, H] (gates r, z, n), found [%lld, %lld]",
                 weight_hh->name, (long long)weight_hh->dims[0], (long long)H);
        return layer_fail(x, reason);
    }
    const int64_t want_ih[2] = {3 * H, l->in.c}, want_bias[1] = {3 * H};
    if ((s = tensor_field(x, "weight_ih", 1, 2, want_ih, &weight_ih)) != ALERTNET_OK) return s;
    if ((s = tensor_field(x, "bias_ih", 0, 1, want_bias, &bias_ih)) != ALERTNET_OK) return s;
    if ((s = tensor_field(x, "bias_hh", 0, 1, want_bias, &bias_hh)) != ALERTNET_OK) return s;
    l->weight = weight_ih->data;
    l->weight_hh = weight_hh->data;
    l->bias = bias_ih ? bias_ih->data : NULL;
    l->bias_hh = bias_hh ? bias_hh->data : NULL;
    const int steps = l->in.h;
    l->out = (an_shape){2, (int)H, steps, 1};
    if ((s = check_fits(x, 3.0 * (double)H * (steps + 1.0))) != ALERTNET_OK) return s; /* an_gru_scratch */
    l->parameters = weight_ih->count + weight_hh->count + (bias_ih ? bias_ih->count : 0) +
                    (bias_hh ? bias_hh->count : 0);
    /* per step: the two products (a multiply-add is 2), the biases, and about 14 operations per unit for the gates
     * (two sigmoids and a tanh at 3, r * gh_n + gi_n, (1 - z) * n + z * h) */
    const double per_step = 2.0 * (double)(weight_ih->count + weight_hh->count) +
                            (double)((bias_ih ? bias_ih->count : 0) + (bias_hh ? bias_hh->count : 0)) + 14.0 * (double)H;
    l->mflops = steps * per_step / 1e6;
    snprintf(l->detail, sizeof l->detail, "%d->%d over %d step%s, state kept between runs", l->in.c, l->out.c, steps,
             steps == 1 ? "" : "s");
    return ALERTNET_OK;
}

static alertnet_status check_fields(const layer_context *x, const op_spec *spec) {
    for (const cJSON *field = x->json->child; field; field = field->next) {
        int known = strcmp(field->string, "op") == 0;
        for (int i = 0; !known && spec->fields[i]; i++) known = strcmp(field->string, spec->fields[i]) == 0;
        if (!known)
            return an_fail(x->error, ALERTNET_ERROR_FORMAT, "layer %d (%s): unknown field \"%.64s\"", x->index,
                           x->op, field->string);
    }
    return ALERTNET_OK;
}

alertnet_status an_graph_build_layer(an_container *file, const an_json *graph, const cJSON *json, int index,
                                     an_shape in, an_layer *l, alertnet_error *error) {
    memset(l, 0, sizeof *l);
    l->in = in;
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(json, "op");
    if (!cJSON_IsObject(json) || !cJSON_IsString(op))
        return an_fail(error, ALERTNET_ERROR_FORMAT, "layer %d: not an object with a string \"op\"", index);
    const op_spec *spec = NULL;
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
        if (strcmp(op->valuestring, OPS[i].name) == 0) spec = &OPS[i];
    }
    if (!spec) return an_fail(error, ALERTNET_ERROR_FORMAT, "layer %d: unknown op \"%.32s\"", index, op->valuestring);
    const layer_context x = {file, graph, json, index, spec->name, error};
    alertnet_status s = check_fields(&x, spec);
    if (s != ALERTNET_OK) return s;
    l->op = spec->op;

    const int spatial = l->op == AN_CONV2D || l->op == AN_MAXPOOL2D || l->op == AN_AVGPOOL2D ||
                        l->op == AN_GLOBAL_AVGPOOL || l->op == AN_GLOBAL_MAXPOOL || l->op == AN_FLATTEN;
    char shape[64], reason[160];
    format_shape(shape, sizeof shape, in);
    if (spatial && in.rank != 3) {
        snprintf(reason, sizeof reason, "needs a [C, H, W] input, got %s", shape);
        return layer_fail(&x, reason);
    }
    if (l->op == AN_DENSE && in.rank == 3) {
        snprintf(reason, sizeof reason, "needs a flat input, got %s (add flatten or a global pool)", shape);
        return layer_fail(&x, reason);
    }
    if (l->op == AN_BATCHNORM && in.rank == 2) {
        snprintf(reason, sizeof reason, "needs a [C, H, W] or [C] input, got the sequence %s", shape);
        return layer_fail(&x, reason);
    }
    if (l->op == AN_GRU && !(in.rank == 2 || (in.rank == 3 && in.c == 1))) {
        snprintf(reason, sizeof reason, "needs a sequence [1, T, I] or [T, I], got %s", shape);
        return layer_fail(&x, reason);
    }
    switch (l->op) {
    case AN_CONV2D: return build_conv2d(&x, l);
    case AN_BATCHNORM: return build_batchnorm(&x, l);
    case AN_MAXPOOL2D:
    case AN_AVGPOOL2D: return build_pool2d(&x, l);
    case AN_DENSE: return build_dense(&x, l);
    case AN_GRU: return build_gru(&x, l);
    case AN_GLOBAL_AVGPOOL:
    case AN_GLOBAL_MAXPOOL:
        l->out = (an_shape){1, in.c, 1, 1};
        l->mflops = (double)an_shape_count(in) / 1e6;
        return ALERTNET_OK;
    case AN_FLATTEN:
        if (an_shape_count(in) > MAX_DIMENSION) return layer_fail(&x, "output is too large");
        l->out = (an_shape){1, (int)an_shape_count(in), 1, 1};
        return ALERTNET_OK;
    case AN_RELU:
    case AN_SIGMOID:
    case AN_SOFTMAX:
        l->out = in;
        l->mflops = (l->op == AN_RELU ? 1.0 : 3.0) * (double)an_shape_count(in) / 1e6;
        return ALERTNET_OK;
    }
    return layer_fail(&x, "unhandled op");
}
