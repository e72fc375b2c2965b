/* alertnet internals shared by the loader, the layers and the tests. Not part of the public API. */
#ifndef ALERTNET_INTERNAL_H
#define ALERTNET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "alertnet.h"

typedef struct cJSON cJSON;

/* ---- JSON whose integer literals are known (json.c) ---- */

/* A number item written as a JSON integer (no fraction, no exponent) and its exact value, saturated at the
 * int64 limits. */
typedef struct {
    const cJSON *item;
    int64_t value;
} an_json_integer_literal;

typedef struct {
    cJSON *root;
    an_json_integer_literal *integers; /* sorted by item address, for an_json_integer */
    size_t integer_count;
} an_json;

/* Parses `length` bytes of `text` (cJSON, then the strict JSON number grammar); `end` (optional) receives where
 * the value ended. On failure the message starts with `what` and `doc` owns nothing. */
alertnet_status an_json_parse(an_json *doc, const char *text, size_t length, const char **end, const char *what,
                              alertnet_error *error);
/* 1 and the value in *out when `item` (may be NULL) was written as a JSON integer within [minimum, maximum],
 * as json.loads gives a Python int; 0 for anything else (3.0, 3e0, "3", true, out of range). */
int an_json_integer(const an_json *doc, const cJSON *item, int64_t minimum, int64_t maximum, int64_t *out);
void an_json_free(an_json *doc);

/* ---- the safetensors container (container.c) ---- */

typedef struct {
    const char *name;  /* points into the parsed header */
    int rank;
    int64_t dims[8];
    size_t count;      /* product of dims */
    size_t begin, end; /* byte offsets into the data buffer */
    const float *data; /* converted values, set by an_container_read_values */
    int used;
} an_tensor;

typedef struct {
    an_json header;    /* the whole parsed JSON header */
    cJSON *metadata;   /* its __metadata__ object (owned by header) */
    an_tensor *tensors;
    int tensor_count;
    float *values;     /* every tensor's values, converted from little-endian */
} an_container;

alertnet_status an_container_parse(const unsigned char *bytes, size_t size, an_container *out, alertnet_error *error);
void an_container_free(an_container *container);
an_tensor *an_container_find(an_container *container, const char *name);

/* ---- layers (layers.c: BLAS; reference.c: direct loops) ---- */

typedef enum {
    AN_CONV2D, AN_BATCHNORM, AN_RELU, AN_MAXPOOL2D, AN_AVGPOOL2D, AN_GLOBAL_AVGPOOL, AN_GLOBAL_MAXPOOL,
    AN_FLATTEN, AN_DENSE, AN_SIGMOID, AN_SOFTMAX, AN_GRU
} an_op;

/* rank 3: [c, h, w]; rank 1: [c] with h = w = 1; rank 2: a sequence [h, c] of h rows (time steps, oldest first) of
 * c values each, w = 1. Rows come second so that c is the per-step width for rank 1 and 2 alike: dense and gru read
 * c and treat rank 1 as one row (an_shape_rows). Memory is row-major in every rank. */
typedef struct {
    int rank;
    int c, h, w;
} an_shape;

typedef struct {
    an_op op;
    an_shape in, out;
    int kh, kw, sh, sw, ph, pw; /* conv and pool geometry */
    const float *weight;        /* conv [O, I, KH, KW], dense [O, I], gru weight_ih [3H, I] */
    const float *bias;          /* [O] or NULL; gru bias_ih [3H] or NULL */
    const float *weight_hh;     /* gru [3H, H] */
    const float *bias_hh;       /* gru [3H] or NULL */
    float *scale, *shift;       /* batchnorm as y = scale * x + shift, owned by the model */
    float *state;               /* gru hidden state [H], kept between runs; points into the model's workspace */
    size_t parameters;
    double mflops;
    char detail[96];
} an_layer;

static inline size_t an_shape_count(an_shape s) { return (size_t)s.c * (size_t)s.h * (size_t)s.w; }
/* Rows a per-row layer (dense, gru, softmax) sees: a sequence's steps; 1 for a flat [c]. */
static inline int an_shape_rows(an_shape s) { return s.rank == 2 ? s.h : 1; }

const char *an_op_name(an_op op);

/* Elementwise and pooling kernels; src == dst is allowed for the elementwise ones. */
void an_conv2d_blas(const an_layer *layer, const float *src, float *dst, float *columns);
void an_conv2d_direct(const an_layer *layer, const float *src, float *dst);
void an_dense_blas(const an_layer *layer, const float *src, float *dst);
void an_dense_direct(const an_layer *layer, const float *src, float *dst);
/* A GRU over the sequence `src` (its input rows, an_gru_steps x input width), from and into layer->state;
 * `dst` receives every step's hidden state. The BLAS form needs an_gru_scratch floats of `scratch`. */
void an_gru_blas(const an_layer *layer, const float *src, float *dst, float *scratch);
void an_gru_direct(const an_layer *layer, const float *src, float *dst);
size_t an_gru_scratch(const an_layer *layer);
void an_batchnorm(const an_layer *layer, const float *src, float *dst);
void an_relu(size_t n, const float *src, float *dst);
void an_pool2d(const an_layer *layer, const float *src, float *dst);
void an_global_pool(const an_layer *layer, const float *src, float *dst);
void an_sigmoid(size_t n, const float *src, float *dst);
void an_softmax(size_t n, const float *src, float *dst);

/* Floats needed by an_conv2d_blas's `columns` scratch (0 when the layer reads its input directly). */
size_t an_conv2d_columns(const an_layer *layer);

/* ---- errors ---- */

alertnet_status an_fail(alertnet_error *error, alertnet_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
