/* Builds alertnet files in memory for the tests and the benchmark (test code, not part of the library). */
#ifndef ALERTNET_MODEL_BUILDER_H
#define ALERTNET_MODEL_BUILDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct model_builder model_builder;

/* A log_mel model of `frames` x `bins` input with `labels` outputs named l0, l1... (thresholds 0.5). */
model_builder *builder_new(int frames, int bins, int labels, uint64_t seed);
void builder_free(model_builder *b);

/* A tensor with random values uniform in [-scale, scale] (or `values` when not NULL). */
void builder_tensor(model_builder *b, const char *name, int rank, const int64_t *dims, float scale,
                    const float *values);
/* Appends a layer given as JSON text, e.g. {"op":"relu"}. */
void builder_layer(model_builder *b, const char *json);
/* Sets (or with NULL removes) a __metadata__ value. */
void builder_metadata(model_builder *b, const char *key, const char *value);
/* Overrides what the header says about the most recent tensor (NULL / -1 keeps the real value). */
void builder_override(model_builder *b, const char *dtype, int64_t begin, int64_t end);

/* Layers that add their own random tensors named NAME.weight, NAME.bias... */
void builder_conv(model_builder *b, const char *name, int out, int in, int kh, int kw, int sh, int sw, int ph, int pw,
                  int bias);
void builder_dense(model_builder *b, const char *name, int out, int in, int bias);
void builder_batchnorm(model_builder *b, const char *name, int channels);
/* A gru layer with NAME.weight_ih [3H, I], NAME.weight_hh [3H, H] and, with `bias`, NAME.bias_ih, NAME.bias_hh. */
void builder_gru(model_builder *b, const char *name, int hidden, int in, int bias);

/* The file's bytes (caller frees): header padded with spaces to a multiple of 8, then the tensors in order. */
unsigned char *builder_bytes(model_builder *b, size_t *size);

/* The default model's architecture (issue 3) with random weights: 64x64 input, six outputs. */
model_builder *builder_default_architecture(uint64_t seed);

/* A uniform random float in [-1, 1) from a caller-held state (xorshift64*). */
float builder_random(uint64_t *state);

#endif
