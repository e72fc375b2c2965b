#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int test_checks, test_failures;

void expect_failure(const unsigned char *bytes, size_t size, alertnet_status status, const char *needle,
                    const char *what) {
    alertnet_model *model = (alertnet_model *)1;
    alertnet_error error;
    alertnet_status s = alertnet_load_memory(bytes, size, &model, &error);
    CHECK(s == status, "%s: status %d, expected %d (message: %s)", what, s, status, error.message);
    CHECK(model == NULL, "%s: model not NULL on failure", what);
    CHECK(strstr(error.message, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, error.message, needle);
    if (s == ALERTNET_OK) alertnet_free(model);
}

void expect_builder_failure(model_builder *b, const char *needle, const char *what) {
    size_t size;
    unsigned char *bytes = builder_bytes(b, &size);
    expect_failure(bytes, size, ALERTNET_ERROR_FORMAT, needle, what);
    free(bytes);
    builder_free(b);
}

alertnet_model *load_built(model_builder *b, const char *what) {
    size_t size;
    unsigned char *bytes = builder_bytes(b, &size);
    builder_free(b);
    alertnet_model *m = NULL;
    alertnet_error error;
    const alertnet_status s = alertnet_load_memory(bytes, size, &m, &error);
    free(bytes);
    CHECK(s == ALERTNET_OK, "%s: %s", what, error.message);
    return s == ALERTNET_OK ? m : NULL;
}

int random_int(uint64_t *state, int low, int high) {
    return low + (int)((builder_random(state) + 1.0f) * 0.5f * (float)(high - low + 1)) % (high - low + 1);
}

float max_relative_error(const float *a, const float *b, size_t n) {
    float worst = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float e = fabsf(a[i] - b[i]) / (1.0f + fabsf(b[i]));
        worst = e > worst ? e : worst;
    }
    return worst;
}

float *random_floats(uint64_t *state, size_t n) {
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = builder_random(state);
    return v;
}
