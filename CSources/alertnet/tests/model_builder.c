#include "model_builder.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char name[64];
    int rank;
    int64_t dims[8];
    size_t count;
    float *values;
    char dtype[16];
    int64_t begin, end; /* overrides; -1 = real */
} built_tensor;

struct model_builder {
    cJSON *metadata, *graph;
    built_tensor tensors[64];
    int tensor_count;
    uint64_t state;
};

float builder_random(uint64_t *state) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (float)((*state * 2685821657736338717ull) >> 40) / (float)(1 << 23) - 1.0f;
}

model_builder *builder_new(int frames, int bins, int labels, uint64_t seed) {
    model_builder *b = calloc(1, sizeof *b);
    b->state = seed * 0x9E3779B97F4A7C15ull + 1;
    b->metadata = cJSON_CreateObject();
    b->graph = cJSON_CreateArray();
    char text[512];
    builder_metadata(b, "format", "alertnet");
    builder_metadata(b, "format_version", "1");
    builder_metadata(b, "model_name", "test model");
    builder_metadata(b, "trained_on", "nothing: random weights");
    snprintf(text, sizeof text, "{\"sample_rate\":16000,\"n_fft\":512,\"win_length\":400,\"hop_length\":160,"
             "\"window\":\"hann\",\"kind\":\"log_mel\",\"n_mels\":%d,\"fmin\":50.0,\"fmax\":8000.0,\"mel_scale\":"
             "\"slaney\",\"mel_norm\":\"slaney\",\"power\":2.0,\"log_base\":10.0,\"log_multiplier\":10.0,"
             "\"log_floor\":1e-10,\"normalization\":null}", bins);
    builder_metadata(b, "features", text);
    snprintf(text, sizeof text, "{\"frames\":%d,\"step\":4}", frames);
    builder_metadata(b, "context", text);
    cJSON *names = cJSON_CreateArray(), *thresholds = cJSON_CreateArray();
    for (int i = 0; i < labels; i++) {
        snprintf(text, sizeof text, "l%d", i);
        cJSON_AddItemToArray(names, cJSON_CreateString(text));
        cJSON_AddItemToArray(thresholds, cJSON_CreateNumber(0.5));
    }
    char *printed = cJSON_PrintUnformatted(names);
    builder_metadata(b, "labels", printed);
    free(printed);
    printed = cJSON_PrintUnformatted(thresholds);
    builder_metadata(b, "thresholds", printed);
    free(printed);
    cJSON_Delete(names);
    cJSON_Delete(thresholds);
    return b;
}

void builder_free(model_builder *b) {
    if (!b) return;
    for (int i = 0; i < b->tensor_count; i++) free(b->tensors[i].values);
    cJSON_Delete(b->metadata);
    cJSON_Delete(b->graph);
    free(b);
}

void builder_metadata(model_builder *b, const char *key, const char *value) {
    cJSON_DeleteItemFromObjectCaseSensitive(b->metadata, key);
    if (value) cJSON_AddStringToObject(b->metadata, key, value);
}

void builder_tensor(model_builder *b, const char *name, int rank, const int64_t *dims, float scale,
                    const float *values) {
    built_tensor *t = &b->tensors[b->tensor_count++];
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->dtype, sizeof t->dtype, "F32");
    t->rank = rank;
    t->count = 1;
    for (int i = 0; i < rank; i++) t->count *= (size_t)(t->dims[i] = dims[i]);
    t->values = malloc(t->count * sizeof *t->values);
    for (size_t i = 0; i < t->count; i++) t->values[i] = values ? values[i] : scale * builder_random(&b->state);
    t->begin = t->end = -1;
}

void builder_override(model_builder *b, const char *dtype, int64_t begin, int64_t end) {
    built_tensor *t = &b->tensors[b->tensor_count - 1];
    if (dtype) snprintf(t->dtype, sizeof t->dtype, "%s", dtype);
    t->begin = begin;
    t->end = end;
}

void builder_layer(model_builder *b, const char *json) { cJSON_AddItemToArray(b->graph, cJSON_Parse(json)); }

void builder_conv(model_builder *b, const char *name, int out, int in, int kh, int kw, int sh, int sw, int ph, int pw,
                  int bias) {
    char weight[80], text[256];
    snprintf(weight, sizeof weight, "%s.weight", name);
    const int64_t dims[4] = {out, in, kh, kw};
    builder_tensor(b, weight, 4, dims, 1.0f / (float)(in * kh * kw) * 2.0f, NULL);
    if (bias) {
        const int64_t bias_dims[1] = {out};
        char bias_name[80];
        snprintf(bias_name, sizeof bias_name, "%s.bias", name);
        builder_tensor(b, bias_name, 1, bias_dims, 0.1f, NULL);
        snprintf(text, sizeof text, "{\"op\":\"conv2d\",\"weight\":\"%s\",\"bias\":\"%s\",\"stride\":[%d,%d],"
                 "\"padding\":[%d,%d]}", weight, bias_name, sh, sw, ph, pw);
    } else {
        snprintf(text, sizeof text, "{\"op\":\"conv2d\",\"weight\":\"%s\",\"stride\":[%d,%d],\"padding\":[%d,%d]}",
                 weight, sh, sw, ph, pw);
    }
    builder_layer(b, text);
}

void builder_dense(model_builder *b, const char *name, int out, int in, int bias) {
    char weight[80], bias_name[80], text[256];
    snprintf(weight, sizeof weight, "%s.weight", name);
    snprintf(bias_name, sizeof bias_name, "%s.bias", name);
    const int64_t dims[2] = {out, in}, bias_dims[1] = {out};
    builder_tensor(b, weight, 2, dims, 2.0f / (float)in, NULL);
    if (bias) builder_tensor(b, bias_name, 1, bias_dims, 0.1f, NULL);
    snprintf(text, sizeof text, bias ? "{\"op\":\"dense\",\"weight\":\"%s\",\"bias\":\"%s\"}"
                                     : "{\"op\":\"dense\",\"weight\":\"%s\"}", weight, bias_name);
    builder_layer(b, text);
}

void builder_batchnorm(model_builder *b, const char *name, int channels) {
    static const char *const parts[4] = {"weight", "bias", "running_mean", "running_var"};
    char names[4][80], text[512];
    const int64_t dims[1] = {channels};
    for (int i = 0; i < 4; i++) {
        snprintf(names[i], sizeof names[i], "%s.%s", name, parts[i]);
        builder_tensor(b, names[i], 1, dims, 0.5f, NULL);
        built_tensor *t = &b->tensors[b->tensor_count - 1];
        if (i == 0 || i == 3) {
            for (size_t k = 0; k < t->count; k++) t->values[k] += 1.0f; /* scale and variance around 1 */
        }
    }
    snprintf(text, sizeof text, "{\"op\":\"batchnorm\",\"weight\":\"%s\",\"bias\":\"%s\",\"running_mean\":\"%s\","
             "\"running_var\":\"%s\",\"eps\":1e-5}", names[0], names[1], names[2], names[3]);
    builder_layer(b, text);
}

void builder_gru(model_builder *b, const char *name, int hidden, int in, int bias) {
    static const char *const parts[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    const int64_t dims[4][2] = {{3 * hidden, in}, {3 * hidden, hidden}, {3 * hidden, 1}, {3 * hidden, 1}};
    char names[4][80], text[512];
    for (int i = 0; i < (bias ? 4 : 2); i++) {
        snprintf(names[i], sizeof names[i], "%s.%s", name, parts[i]);
        builder_tensor(b, names[i], i < 2 ? 2 : 1, dims[i], 2.0f / sqrtf((float)hidden), NULL); /* PyTorch uses 1 / sqrt(H) */
    }
    if (bias)
        snprintf(text, sizeof text, "{\"op\":\"gru\",\"weight_ih\":\"%s\",\"weight_hh\":\"%s\",\"bias_ih\":\"%s\","
                 "\"bias_hh\":\"%s\"}", names[0], names[1], names[2], names[3]);
    else
        snprintf(text, sizeof text, "{\"op\":\"gru\",\"weight_ih\":\"%s\",\"weight_hh\":\"%s\"}", names[0], names[1]);
    builder_layer(b, text);
}

unsigned char *builder_bytes(model_builder *b, size_t *size) {
    cJSON *header = cJSON_CreateObject();
    char *graph = cJSON_PrintUnformatted(b->graph);
    cJSON *metadata = cJSON_Duplicate(b->metadata, 1);
    if (!cJSON_HasObjectItem(metadata, "graph")) cJSON_AddStringToObject(metadata, "graph", graph); /* unless set */
    free(graph);
    cJSON_AddItemToObject(header, "__metadata__", metadata);
    size_t data_size = 0;
    for (int i = 0; i < b->tensor_count; i++) {
        built_tensor *t = &b->tensors[i];
        cJSON *entry = cJSON_CreateObject(), *shape = cJSON_CreateArray(), *offsets = cJSON_CreateArray();
        cJSON_AddStringToObject(entry, "dtype", t->dtype);
        for (int d = 0; d < t->rank; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->dims[d]));
        cJSON_AddItemToObject(entry, "shape", shape);
        const int64_t begin = (int64_t)data_size, end = begin + 4 * (int64_t)t->count;
        cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)(t->begin >= 0 ? t->begin : begin)));
        cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)(t->end >= 0 ? t->end : end)));
        cJSON_AddItemToObject(entry, "data_offsets", offsets);
        cJSON_AddItemToObject(header, t->name, entry);
        data_size += 4 * t->count;
    }
    char *text = cJSON_PrintUnformatted(header);
    cJSON_Delete(header);
    size_t n = strlen(text), padded = (n + 7) / 8 * 8;
    *size = 8 + padded + data_size;
    unsigned char *bytes = malloc(*size);
    for (int i = 0; i < 8; i++) bytes[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    memcpy(bytes + 8, text, n);
    memset(bytes + 8 + n, ' ', padded - n);
    free(text);
    unsigned char *p = bytes + 8 + padded;
    for (int i = 0; i < b->tensor_count; i++) {
        for (size_t k = 0; k < b->tensors[i].count; k++, p += 4) {
            uint32_t bits;
            memcpy(&bits, &b->tensors[i].values[k], 4);
            for (int j = 0; j < 4; j++) p[j] = (unsigned char)(bits >> (8 * j));
        }
    }
    return bytes;
}

model_builder *builder_default_architecture(uint64_t seed) {
    model_builder *b = builder_new(64, 64, 6, seed);
    builder_conv(b, "conv1", 16, 1, 5, 5, 2, 2, 2, 2, 1);
    builder_layer(b, "{\"op\":\"relu\"}");
    builder_layer(b, "{\"op\":\"maxpool2d\",\"kernel\":[2,2]}");
    builder_conv(b, "conv2", 32, 16, 3, 3, 1, 1, 1, 1, 1);
    builder_layer(b, "{\"op\":\"relu\"}");
    builder_layer(b, "{\"op\":\"maxpool2d\",\"kernel\":[2,2]}");
    builder_conv(b, "conv3", 64, 32, 3, 3, 1, 1, 1, 1, 1);
    builder_layer(b, "{\"op\":\"relu\"}");
    builder_layer(b, "{\"op\":\"maxpool2d\",\"kernel\":[2,2]}");
    builder_conv(b, "conv4", 128, 64, 3, 3, 1, 1, 1, 1, 1);
    builder_layer(b, "{\"op\":\"relu\"}");
    builder_layer(b, "{\"op\":\"global_avgpool\"}");
    builder_dense(b, "dense", 6, 128, 1);
    builder_layer(b, "{\"op\":\"sigmoid\"}");
    return b;
}
