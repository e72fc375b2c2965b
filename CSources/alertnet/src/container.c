/* The safetensors container: header length, JSON header (cJSON), tensor table, byte ranges, values.
 * Every byte read from the file is bounds-checked here; later stages see only validated tensors. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static uint64_t read_u64_le(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static float read_f32_le(const unsigned char *p) {
    uint32_t bits = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Rejects an object with two members of the same name (cJSON would silently keep the first). */
static alertnet_status check_unique_keys(const cJSON *object, const char *what, alertnet_error *error) {
    int n = cJSON_GetArraySize(object);
    if (n < 2) return ALERTNET_OK;
    const char **names = malloc((size_t)n * sizeof *names);
    if (!names) return an_fail(error, ALERTNET_ERROR_MEMORY, "out of memory reading the %s", what);
    int i = 0;
    for (const cJSON *child = object->child; child; child = child->next) names[i++] = child->string;
    qsort(names, (size_t)n, sizeof *names, compare_names);
    alertnet_status status = ALERTNET_OK;
    for (i = 1; i < n; i++) {
        if (strcmp(names[i - 1], names[i]) == 0) {
            status = an_fail(error, ALERTNET_ERROR_FORMAT, "%s has the key \"%.64s\" twice", what, names[i]);
            break;
        }
    }
    free(names);
    return status;
}

static alertnet_status parse_tensor(const an_json *header, cJSON *entry, size_t data_size, an_tensor *t,
                                    alertnet_error *error) {
    const char *name = entry->string;
    if (!cJSON_IsObject(entry)) return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": not an object", name);
    for (const cJSON *field = entry->child; field; field = field->next) {
        if (strcmp(field->string, "dtype") && strcmp(field->string, "shape") && strcmp(field->string, "data_offsets"))
            return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": unknown field \"%.64s\"", name,
                           field->string);
    }
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(entry, "dtype");
    if (!cJSON_IsString(dtype))
        return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": dtype is missing", name);
    if (strcmp(dtype->valuestring, "F32") != 0)
        return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": dtype %.16s is not supported (only F32)",
                       name, dtype->valuestring);

    /* the byte range first: for a truncated file it is the clearest message */
    const cJSON *offsets = cJSON_GetObjectItemCaseSensitive(entry, "data_offsets");
    int64_t begin, end;
    if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2 ||
        !an_json_integer(header, offsets->child, INT64_MIN, INT64_MAX, &begin) ||
        !an_json_integer(header, offsets->child->next, INT64_MIN, INT64_MAX, &end))
        return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": data_offsets must be an array of two "
                       "integers [begin, end]", name);
    if (begin < 0 || begin > end || (uint64_t)end > data_size)
        return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": data_offsets must be [begin, end] within "
                       "the %zu-byte data (truncated file?)", name, data_size);

    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(entry, "shape");
    int rank = cJSON_GetArraySize(shape);
    if (!cJSON_IsArray(shape) || rank < 1 || rank > 8)
        return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": shape must be an array of 1 to 8 sizes", name);
    /* the running product stays <= the range's float count, so it cannot overflow */
    const uint64_t available = (uint64_t)(end - begin) / 4;
    uint64_t count = 1;
    t->rank = rank;
    int d = 0;
    for (const cJSON *dim = shape->child; dim; dim = dim->next, d++) {
        if (!an_json_integer(header, dim, 1, INT64_MAX, &t->dims[d]))
            return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": shape entry %d must be an integer >= 1",
                           name, d);
        if ((uint64_t)t->dims[d] > available / count)
            return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": its shape needs more than the %lld "
                           "bytes its data_offsets cover", name, (long long)(end - begin));
        count *= (uint64_t)t->dims[d];
    }
    if ((uint64_t)(end - begin) != 4 * count)
        return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": data_offsets cover %lld bytes, its shape "
                       "needs %llu", name, (long long)(end - begin), (unsigned long long)(4 * count));
    t->name = name;
    t->count = (size_t)count;
    t->begin = (size_t)begin;
    t->end = (size_t)end;
    return ALERTNET_OK;
}

static int compare_begin(const void *a, const void *b) {
    const an_tensor *x = *(const an_tensor *const *)a, *y = *(const an_tensor *const *)b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

static alertnet_status check_no_overlap(an_container *c, alertnet_error *error) {
    if (c->tensor_count < 2) return ALERTNET_OK;
    an_tensor **order = malloc((size_t)c->tensor_count * sizeof *order);
    if (!order) return an_fail(error, ALERTNET_ERROR_MEMORY, "out of memory checking tensor ranges");
    for (int i = 0; i < c->tensor_count; i++) order[i] = &c->tensors[i];
    qsort(order, (size_t)c->tensor_count, sizeof *order, compare_begin);
    alertnet_status status = ALERTNET_OK;
    for (int i = 1; i < c->tensor_count; i++) {
        if (order[i]->begin < order[i - 1]->end) {
            status = an_fail(error, ALERTNET_ERROR_FORMAT, "tensors \"%.64s\" and \"%.64s\" overlap in the data",
                             order[i - 1]->name, order[i]->name);
            break;
        }
    }
    free(order);
    return status;
}

static alertnet_status read_values(an_container *c, const unsigned char *data, alertnet_error *error) {
    size_t total = 0;
    for (int i = 0; i < c->tensor_count; i++) total += c->tensors[i].count; /* <= data size / 4: no overlap */
    c->values = malloc((total ? total : 1) * sizeof *c->values);
    if (!c->values) return an_fail(error, ALERTNET_ERROR_MEMORY, "out of memory for %zu weights", total);
    float *next = c->values;
    for (int i = 0; i < c->tensor_count; i++) {
        an_tensor *t = &c->tensors[i];
        const unsigned char *p = data + t->begin;
        for (size_t k = 0; k < t->count; k++, p += 4) {
            next[k] = read_f32_le(p);
            if (!isfinite(next[k]))
                return an_fail(error, ALERTNET_ERROR_FORMAT, "tensor \"%.64s\": value %zu is not finite", t->name, k);
        }
        t->data = next;
        next += t->count;
    }
    return ALERTNET_OK;
}

static alertnet_status parse_header(an_container *c, const unsigned char *bytes, size_t size, size_t *data_start,
                                    alertnet_error *error) {
    if (size < 8) return an_fail(error, ALERTNET_ERROR_FORMAT, "file is %zu bytes, shorter than the 8-byte header "
                                 "length (truncated?)", size);
    uint64_t n = read_u64_le(bytes);
    if (n > ALERTNET_MAX_HEADER)
        /* Almost always some other kind of file (a WAV, a PyTorch checkpoint): say that first. */
        return an_fail(error, ALERTNET_ERROR_FORMAT, "not a safetensors model file (its header length %llu "
                       "exceeds the %u-byte limit)", (unsigned long long)n, ALERTNET_MAX_HEADER);
    if (n > size - 8)
        return an_fail(error, ALERTNET_ERROR_FORMAT, "header length %llu runs past the end of the %zu-byte file "
                       "(truncated?)", (unsigned long long)n, size);
    const char *text = (const char *)bytes + 8;
    if (n == 0 || memchr(text, '\0', (size_t)n))
        return an_fail(error, ALERTNET_ERROR_FORMAT, "header is empty or contains a NUL byte");
    const char *end = NULL;
    alertnet_status status = an_json_parse(&c->header, text, (size_t)n, &end, "header", error);
    if (status != ALERTNET_OK) return status;
    for (const char *p = end; p < text + n; p++) {
        if (*p != ' ') return an_fail(error, ALERTNET_ERROR_FORMAT, "header has bytes after its JSON value "
                                      "(only space padding is allowed)");
    }
    if (!cJSON_IsObject(c->header.root))
        return an_fail(error, ALERTNET_ERROR_FORMAT, "header is not a JSON object");
    *data_start = 8 + (size_t)n;
    return check_unique_keys(c->header.root, "header", error);
}

alertnet_status an_container_parse(const unsigned char *bytes, size_t size, an_container *c, alertnet_error *error) {
    memset(c, 0, sizeof *c);
    size_t data_start = 0;
    alertnet_status status = parse_header(c, bytes, size, &data_start, error);
    if (status != ALERTNET_OK) return status;
    size_t data_size = size - data_start;

    c->metadata = cJSON_GetObjectItemCaseSensitive(c->header.root, "__metadata__");
    if (!cJSON_IsObject(c->metadata))
        return an_fail(error, ALERTNET_ERROR_FORMAT, "header has no __metadata__ object");
    for (const cJSON *item = c->metadata->child; item; item = item->next) {
        if (!cJSON_IsString(item))
            return an_fail(error, ALERTNET_ERROR_FORMAT, "__metadata__ value \"%.64s\" is not a string", item->string);
    }
    status = check_unique_keys(c->metadata, "__metadata__", error);
    if (status != ALERTNET_OK) return status;

    int entries = cJSON_GetArraySize(c->header.root);
    c->tensors = calloc((size_t)entries, sizeof *c->tensors);
    if (!c->tensors) return an_fail(error, ALERTNET_ERROR_MEMORY, "out of memory for %d tensors", entries);
    for (cJSON *entry = c->header.root->child; entry; entry = entry->next) {
        if (entry == c->metadata) continue;
        status = parse_tensor(&c->header, entry, data_size, &c->tensors[c->tensor_count], error);
        if (status != ALERTNET_OK) return status;
        c->tensor_count++;
    }
    status = check_no_overlap(c, error);
    if (status != ALERTNET_OK) return status;
    return read_values(c, bytes + data_start, error);
}

an_tensor *an_container_find(an_container *c, const char *name) {
    for (int i = 0; i < c->tensor_count; i++) {
        if (strcmp(c->tensors[i].name, name) == 0) return &c->tensors[i];
    }
    return NULL;
}

void an_container_free(an_container *c) {
    an_json_free(&c->header);
    free(c->tensors);
    free(c->values);
    memset(c, 0, sizeof *c);
}
