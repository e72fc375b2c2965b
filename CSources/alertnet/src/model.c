/* Loading (metadata, graph, workspace), queries, running and freeing a model. */
#include <cblas.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "internal.h"

enum { MAX_LABELS = 1024, MAX_INPUT_SIDE = 1 << 16 };

struct alertnet_model {
    an_container file;  /* the parsed header (metadata strings) and every weight */
    an_json labels;     /* parsed `labels` array; label strings point into it */
    float *thresholds;
    int label_count, frames, bins, step;
    int start_padding;  /* copies of a stream's first frame before it; 0 <= start_padding < frames */
    an_layer *layers;
    int layer_count;
    size_t parameters;
    double mflops;
    float *workspace;   /* buffers[0], buffers[1] (ping-pong activations), columns (im2col, GRU gates), states */
    float *buffers[2], *columns;
    float *states;      /* every gru layer's hidden state, one after another; zero after load and reset */
    size_t state_count;
};

/* ---- metadata ---- */

static alertnet_status metadata_text(const alertnet_model *m, const char *key, const char **out, alertnet_error *e) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(m->file.metadata, key);
    if (!item) return an_fail(e, ALERTNET_ERROR_FORMAT, "metadata key \"%s\" is missing", key);
    *out = item->valuestring; /* every metadata value was checked to be a string */
    return ALERTNET_OK;
}

/* The JSON text held by metadata `key`: nothing may follow the value (json.loads refuses trailing data). */
static alertnet_status metadata_json(const alertnet_model *m, const char *key, an_json *out, alertnet_error *e) {
    const char *text = "", *end = NULL;
    alertnet_status s = metadata_text(m, key, &text, e);
    if (s != ALERTNET_OK) return s;
    char what[64];
    snprintf(what, sizeof what, "metadata \"%.40s\"", key);
    const size_t length = strlen(text);
    if ((s = an_json_parse(out, text, length, &end, what, e)) != ALERTNET_OK) return s;
    while (end < text + length && strchr(" \t\n\r", *end)) end++;
    if (end < text + length) {
        an_json_free(out);
        return an_fail(e, ALERTNET_ERROR_FORMAT, "%s is not valid JSON (something follows its value)", what);
    }
    return ALERTNET_OK;
}

/* A member written as a JSON integer in [minimum, maximum] (so 3.0 is refused, as the reference refuses it). */
static int integer_in(const an_json *doc, const char *key, int minimum, int maximum, int *out) {
    int64_t value;
    if (!an_json_integer(doc, cJSON_GetObjectItemCaseSensitive(doc->root, key), minimum, maximum, &value)) return 0;
    *out = (int)value;
    return 1;
}

static alertnet_status read_features(alertnet_model *m, alertnet_error *e) {
    an_json features;
    alertnet_status s = metadata_json(m, "features", &features, e);
    if (s != ALERTNET_OK) return s;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(features.root, "kind");
    int n = 0;
    if (cJSON_IsString(kind) && strcmp(kind->valuestring, "log_mel") == 0) {
        if (!integer_in(&features, "n_mels", 1, MAX_INPUT_SIDE, &n))
            s = an_fail(e, ALERTNET_ERROR_FORMAT, "features: n_mels must be an integer in [1, %d]", MAX_INPUT_SIDE);
        m->bins = n;
    } else if (cJSON_IsString(kind) && strcmp(kind->valuestring, "log_power") == 0) {
        if (!integer_in(&features, "n_fft", 1, 2 * MAX_INPUT_SIDE - 2, &n))
            s = an_fail(e, ALERTNET_ERROR_FORMAT, "features: n_fft must be an integer in [1, %d]",
                        2 * MAX_INPUT_SIDE - 2);
        m->bins = n / 2 + 1;
    } else {
        s = an_fail(e, ALERTNET_ERROR_FORMAT, "features: kind must be \"log_mel\" or \"log_power\"");
    }
    an_json_free(&features);
    return s;
}

/* {"frames": T, "step": S} with an optional "start_padding": P in [0, T - 1]; nothing else. */
static alertnet_status read_context(alertnet_model *m, alertnet_error *e) {
    an_json context;
    alertnet_status s = metadata_json(m, "context", &context, e);
    if (s != ALERTNET_OK) return s;
    const cJSON *root = context.root;
    const int padding = cJSON_GetObjectItemCaseSensitive(root, "start_padding") != NULL;
    m->start_padding = 0;
    if (!cJSON_IsObject(root) || cJSON_GetArraySize(root) != (padding ? 3 : 2) ||
        !cJSON_GetObjectItemCaseSensitive(root, "frames") || !cJSON_GetObjectItemCaseSensitive(root, "step"))
        s = an_fail(e, ALERTNET_ERROR_FORMAT, "context must be {\"frames\": T, \"step\": S}, and optionally "
                    "\"start_padding\": P; no other key");
    else if (!integer_in(&context, "frames", 1, MAX_INPUT_SIDE, &m->frames))
        s = an_fail(e, ALERTNET_ERROR_FORMAT, "context: frames must be an integer in [1, %d]", MAX_INPUT_SIDE);
    else if (!integer_in(&context, "step", 1, MAX_INPUT_SIDE, &m->step))
        s = an_fail(e, ALERTNET_ERROR_FORMAT, "context: step must be an integer in [1, %d]", MAX_INPUT_SIDE);
    else if (padding && !integer_in(&context, "start_padding", 0, m->frames - 1, &m->start_padding))
        s = an_fail(e, ALERTNET_ERROR_FORMAT, "context: start_padding must be an integer in [0, %d] (frames - 1)",
                    m->frames - 1);
    an_json_free(&context);
    return s;
}

/* A label is an identifier: 1 to ALERTNET_MAX_LABEL_LENGTH of a-z, 0-9 and _ (FORMAT.md). Hosts print labels,
 * put them in TSV rows and hook environments; nothing a file names may be read by a terminal or a parser as
 * anything but a name (no control characters, TAB, newline, quote or non-ASCII byte). */
static int is_label(const char *label) {
    size_t n = 0;
    for (; label[n]; n++) {
        const char c = label[n];
        if (n == ALERTNET_MAX_LABEL_LENGTH || !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return 0;
    }
    return n > 0;
}

static alertnet_status read_labels(alertnet_model *m, alertnet_error *e) {
    alertnet_status s = metadata_json(m, "labels", &m->labels, e);
    if (s != ALERTNET_OK) return s;
    const cJSON *labels = m->labels.root;
    int n = cJSON_GetArraySize(labels);
    if (!cJSON_IsArray(labels) || n < 1 || n > MAX_LABELS)
        return an_fail(e, ALERTNET_ERROR_FORMAT, "labels must be an array of 1 to %d strings", MAX_LABELS);
    int index = 0;
    for (const cJSON *a = labels->child; a; a = a->next, index++) {
        if (!cJSON_IsString(a))
            return an_fail(e, ALERTNET_ERROR_FORMAT, "labels must be strings (label %d is not)", index);
        if (!is_label(a->valuestring))
            return an_fail(e, ALERTNET_ERROR_FORMAT, "label %d (\"%.40s\") must be 1 to %d characters of a-z, 0-9 "
                           "and _", index, a->valuestring, ALERTNET_MAX_LABEL_LENGTH);
        for (const cJSON *b = a->next; b; b = b->next) {
            if (cJSON_IsString(b) && strcmp(a->valuestring, b->valuestring) == 0)
                return an_fail(e, ALERTNET_ERROR_FORMAT, "label \"%.64s\" appears twice", a->valuestring);
        }
    }
    m->label_count = n;

    an_json thresholds;
    if ((s = metadata_json(m, "thresholds", &thresholds, e)) != ALERTNET_OK) return s;
    m->thresholds = malloc((size_t)n * sizeof *m->thresholds);
    if (!m->thresholds) {
        s = an_fail(e, ALERTNET_ERROR_MEMORY, "out of memory for thresholds");
    } else if (!cJSON_IsArray(thresholds.root) || cJSON_GetArraySize(thresholds.root) != n) {
        s = an_fail(e, ALERTNET_ERROR_FORMAT, "thresholds must be an array with one number per label (%d)", n);
    } else {
        int i = 0;
        for (const cJSON *t = thresholds.root->child; t; t = t->next, i++) {
            if (!cJSON_IsNumber(t) || !(t->valuedouble > 0.0 && t->valuedouble < 1.0)) {
                s = an_fail(e, ALERTNET_ERROR_FORMAT, "threshold %d (%.64s) must be a number in (0, 1)", i,
                            cJSON_GetArrayItem(labels, i)->valuestring);
                break;
            }
            m->thresholds[i] = (float)t->valuedouble;
        }
    }
    an_json_free(&thresholds);
    return s;
}

static alertnet_status read_metadata(alertnet_model *m, alertnet_error *e) {
    const char *text = "";
    alertnet_status s = metadata_text(m, "format", &text, e);
    if (s != ALERTNET_OK) return s;
    if (strcmp(text, "alertnet") != 0)
        return an_fail(e, ALERTNET_ERROR_FORMAT, "metadata format is \"%.32s\", expected \"alertnet\"", text);
    if ((s = metadata_text(m, "format_version", &text, e)) != ALERTNET_OK) return s;
    if (strcmp(text, "1") != 0)
        return an_fail(e, ALERTNET_ERROR_FORMAT, "format_version \"%.32s\" is not supported (expected \"1\")", text);
    if ((s = metadata_text(m, "model_name", &text, e)) != ALERTNET_OK) return s;
    if ((s = metadata_text(m, "trained_on", &text, e)) != ALERTNET_OK) return s;
    if ((s = read_features(m, e)) != ALERTNET_OK) return s;
    if ((s = read_context(m, e)) != ALERTNET_OK) return s;
    return read_labels(m, e);
}

/* ---- graph and workspace ---- */

static alertnet_status read_graph(alertnet_model *m, alertnet_error *e) {
    an_json graph;
    alertnet_status s = metadata_json(m, "graph", &graph, e);
    if (s != ALERTNET_OK) return s;
    int n = cJSON_GetArraySize(graph.root);
    if (!cJSON_IsArray(graph.root) || n < 1) {
        an_json_free(&graph);
        return an_fail(e, ALERTNET_ERROR_FORMAT, "graph must be a non-empty array of layers");
    }
    m->layers = calloc((size_t)n, sizeof *m->layers);
    if (!m->layers) {
        an_json_free(&graph);
        return an_fail(e, ALERTNET_ERROR_MEMORY, "out of memory for %d layers", n);
    }
    an_shape shape = {3, 1, m->frames, m->bins};
    for (const cJSON *layer = graph.root->child; layer; layer = layer->next) {
        an_layer *l = &m->layers[m->layer_count++]; /* counted first so a failed layer's scale is freed */
        if ((s = an_graph_build_layer(&m->file, &graph, layer, m->layer_count - 1, shape, l, e)) != ALERTNET_OK) break;
        shape = l->out;
        m->parameters += l->parameters;
        m->mflops += l->mflops;
    }
    an_json_free(&graph);
    if (s != ALERTNET_OK) return s;

    an_op last = m->layers[n - 1].op;
    if (last != AN_SIGMOID && last != AN_SOFTMAX)
        return an_fail(e, ALERTNET_ERROR_FORMAT, "the last layer must be sigmoid or softmax (outputs are "
                       "probabilities), found %s", an_op_name(last));
    /* a sequence [T, K] answers with its last row, the newest step's K values */
    if (shape.rank == 3 || shape.c != m->label_count)
        return an_fail(e, ALERTNET_ERROR_FORMAT, "the graph outputs %zu values%s, expected %d (one per label)",
                       shape.rank == 2 ? (size_t)shape.c : an_shape_count(shape),
                       shape.rank == 2 ? " per step" : "", m->label_count);
    for (int i = 0; i < m->file.tensor_count; i++) {
        if (!m->file.tensors[i].used)
            return an_fail(e, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\" is not used by the graph",
                           m->file.tensors[i].name);
    }
    return ALERTNET_OK;
}

static alertnet_status allocate_workspace(alertnet_model *m, alertnet_error *e) {
    size_t activation = (size_t)m->frames * (size_t)m->bins, columns = 0;
    for (int i = 0; i < m->layer_count; i++) {
        const an_layer *l = &m->layers[i];
        if (an_shape_count(l->out) > activation) activation = an_shape_count(l->out);
        if (l->op == AN_CONV2D && an_conv2d_columns(l) > columns) columns = an_conv2d_columns(l);
        if (l->op == AN_GRU && an_gru_scratch(l) > columns) columns = an_gru_scratch(l);
        if (l->op == AN_GRU) m->state_count += (size_t)l->out.c;
    }
    /* each term is below 2^48 (dimensions are capped), so the sum cannot overflow */
    const size_t floats = 2 * activation + columns + m->state_count;
    if (floats > ALERTNET_MAX_WORKSPACE / sizeof(float))
        return an_fail(e, ALERTNET_ERROR_MEMORY, "the model needs %zu MiB of workspace, more than the %u MiB limit",
                       floats * sizeof(float) >> 20, ALERTNET_MAX_WORKSPACE >> 20);
    m->workspace = malloc(floats * sizeof(float));
    if (!m->workspace) return an_fail(e, ALERTNET_ERROR_MEMORY, "out of memory for %zu floats of workspace", floats);
    m->buffers[0] = m->workspace;
    m->buffers[1] = m->workspace + activation;
    m->columns = m->workspace + 2 * activation;
    m->states = m->columns + columns;
    float *state = m->states;
    for (int i = 0; i < m->layer_count; i++) {
        if (m->layers[i].op != AN_GRU) continue;
        m->layers[i].state = state;
        state += m->layers[i].out.c;
    }
    return alertnet_reset_state(m);
}

/* ---- public API ---- */

alertnet_status alertnet_load_memory(const void *bytes, size_t size, alertnet_model **model, alertnet_error *error) {
    if (error) error->message[0] = '\0';
    if (!model) return an_fail(error, ALERTNET_ERROR_ARGUMENT, "no place to store the model");
    *model = NULL;
    if (!bytes && size) return an_fail(error, ALERTNET_ERROR_ARGUMENT, "no bytes given");
    alertnet_model *m = calloc(1, sizeof *m);
    if (!m) return an_fail(error, ALERTNET_ERROR_MEMORY, "out of memory for the model");
    alertnet_status s = an_container_parse(bytes, size, &m->file, error);
    if (s == ALERTNET_OK) s = read_metadata(m, error);
    if (s == ALERTNET_OK) s = read_graph(m, error);
    if (s == ALERTNET_OK) s = allocate_workspace(m, error);
    if (s != ALERTNET_OK) {
        alertnet_free(m);
        return s;
    }
#if defined(OPENBLAS_VERSION)
    openblas_set_num_threads(1); /* see "BLAS" in alertnet.h */
#endif
    *model = m;
    return ALERTNET_OK;
}

alertnet_status alertnet_load_file(const char *path, alertnet_model **model, alertnet_error *error) {
    if (model) *model = NULL;
    if (!path || !model) return an_fail(error, ALERTNET_ERROR_ARGUMENT, "no path or no place to store the model");
    FILE *file = fopen(path, "rb");
    if (!file) return an_fail(error, ALERTNET_ERROR_IO, "cannot open %.300s: %s", path, strerror(errno));
    unsigned char *bytes = NULL;
    long size = -1;
    if (fseek(file, 0, SEEK_END) == 0) size = ftell(file);
    alertnet_status s = ALERTNET_OK;
    if (size < 0 || fseek(file, 0, SEEK_SET) != 0) {
        s = an_fail(error, ALERTNET_ERROR_IO, "cannot size %.300s (not a regular file?)", path);
    } else if (fgetc(file) == EOF && ferror(file)) {
        /* A directory opens and "sizes" as LONG_MAX on Linux; one byte read first gives its real error (EISDIR)
         * instead of a bogus out-of-memory for an exabyte buffer. C11 has no portable stat to ask up front. */
        s = an_fail(error, ALERTNET_ERROR_IO, "cannot read %.300s: %s", path, strerror(errno));
    } else if (rewind(file), !(bytes = malloc(size ? (size_t)size : 1))) { /* rewind: undo the probe */
        s = an_fail(error, ALERTNET_ERROR_MEMORY, "out of memory reading %.300s (%ld bytes)", path, size);
    } else if (fread(bytes, 1, (size_t)size, file) != (size_t)size) {
        s = an_fail(error, ALERTNET_ERROR_IO, "cannot read %.300s: %s", path,
                    ferror(file) ? strerror(errno) : "it is shorter than its size (changed while reading?)");
    }
    fclose(file);
    if (s == ALERTNET_OK) s = alertnet_load_memory(bytes, (size_t)size, model, error);
    free(bytes);
    return s;
}

void alertnet_free(alertnet_model *m) {
    if (!m) return;
    for (int i = 0; i < m->layer_count; i++) free(m->layers[i].scale);
    free(m->layers);
    free(m->workspace);
    free(m->thresholds);
    an_json_free(&m->labels);
    an_container_free(&m->file);
    free(m);
}

static alertnet_status run(alertnet_model *m, const float *input, float *probabilities, int reference) {
    if (!m || !input || !probabilities) return ALERTNET_ERROR_ARGUMENT;
    const float *x = input;
    for (int i = 0; i < m->layer_count; i++) {
        const an_layer *l = &m->layers[i];
        float *next = x == m->buffers[0] ? m->buffers[1] : m->buffers[0];
        float *in_place = x == input ? m->buffers[0] : (float *)x; /* never write the caller's input */
        switch (l->op) {
        case AN_CONV2D:
            if (reference) an_conv2d_direct(l, x, next);
            else an_conv2d_blas(l, x, next, m->columns);
            x = next;
            break;
        case AN_DENSE:
            if (reference) an_dense_direct(l, x, next);
            else an_dense_blas(l, x, next);
            x = next;
            break;
        case AN_GRU:
            if (reference) an_gru_direct(l, x, next);
            else an_gru_blas(l, x, next, m->columns);
            x = next;
            break;
        case AN_MAXPOOL2D:
        case AN_AVGPOOL2D:
            an_pool2d(l, x, next);
            x = next;
            break;
        case AN_GLOBAL_AVGPOOL:
        case AN_GLOBAL_MAXPOOL:
            an_global_pool(l, x, next);
            x = next;
            break;
        case AN_BATCHNORM: an_batchnorm(l, x, in_place); x = in_place; break;
        case AN_RELU: an_relu(an_shape_count(l->in), x, in_place); x = in_place; break;
        case AN_SIGMOID: an_sigmoid(an_shape_count(l->in), x, in_place); x = in_place; break;
        case AN_SOFTMAX:
            if (l->in.rank == 2) { /* per step */
                for (int row = 0; row < l->in.h; row++)
                    an_softmax((size_t)l->in.c, x + (size_t)row * l->in.c, in_place + (size_t)row * l->in.c);
            } else {
                an_softmax(an_shape_count(l->in), x, in_place);
            }
            x = in_place;
            break;
        case AN_FLATTEN: break; /* row-major [C, H, W] already is the flat vector */
        }
    }
    /* a sequence's answer is its last row (read_graph checked the width) */
    const an_shape out = m->layers[m->layer_count - 1].out;
    const size_t last_row = out.rank == 2 ? (size_t)(out.h - 1) * (size_t)out.c : 0;
    memcpy(probabilities, x + last_row, (size_t)m->label_count * sizeof *probabilities);
    return ALERTNET_OK;
}

alertnet_status alertnet_run(alertnet_model *m, const float *input, float *probabilities) {
    return run(m, input, probabilities, 0);
}

alertnet_status alertnet_run_reference(alertnet_model *m, const float *input, float *probabilities) {
    return run(m, input, probabilities, 1);
}

alertnet_status alertnet_reset_state(alertnet_model *m) {
    if (!m) return ALERTNET_ERROR_ARGUMENT;
    for (size_t i = 0; i < m->state_count; i++) m->states[i] = 0.0f;
    return ALERTNET_OK;
}

int alertnet_is_stateful(const alertnet_model *m) { return m && m->state_count > 0; }

void alertnet_input_shape(const alertnet_model *m, int *frames, int *bins) {
    if (frames) *frames = m ? m->frames : 0;
    if (bins) *bins = m ? m->bins : 0;
}

int alertnet_output_count(const alertnet_model *m) { return m ? m->label_count : 0; }

const char *alertnet_label(const alertnet_model *m, int i) {
    if (!m || i < 0 || i >= m->label_count) return NULL;
    return cJSON_GetArrayItem(m->labels.root, i)->valuestring;
}

float alertnet_threshold(const alertnet_model *m, int i) {
    if (!m || i < 0 || i >= m->label_count) return NAN;
    return m->thresholds[i];
}

const char *alertnet_metadata(const alertnet_model *m, const char *key) {
    if (!m || !key) return NULL;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(m->file.metadata, key);
    return item ? item->valuestring : NULL;
}

const char *alertnet_feature_spec(const alertnet_model *m) { return alertnet_metadata(m, "features"); }
int alertnet_context_frames(const alertnet_model *m) { return m ? m->frames : 0; }
int alertnet_decision_step(const alertnet_model *m) { return m ? m->step : 0; }
int alertnet_context_start_padding(const alertnet_model *m) { return m ? m->start_padding : 0; }
size_t alertnet_parameter_count(const alertnet_model *m) { return m ? m->parameters : 0; }
double alertnet_mflops(const alertnet_model *m) { return m ? m->mflops : 0.0; }
int alertnet_layer_count(const alertnet_model *m) { return m ? m->layer_count : 0; }

alertnet_status alertnet_layer(const alertnet_model *m, int i, alertnet_layer_info *info) {
    if (!m || !info || i < 0 || i >= m->layer_count) return ALERTNET_ERROR_ARGUMENT;
    const an_layer *l = &m->layers[i];
    *info = (alertnet_layer_info){an_op_name(l->op), l->detail, l->out.rank, {l->out.c, l->out.h, l->out.w},
                                  l->parameters, l->mflops};
    if (l->out.rank == 1) info->shape[1] = info->shape[2] = 0;
    if (l->out.rank == 2) info->shape[0] = l->out.h, info->shape[1] = l->out.c, info->shape[2] = 0; /* [T, N] */
    return ALERTNET_OK;
}
