/* libFuzzer target: any bytes given to alertnet_load_memory must load cleanly or fail with a message; a model
 * that loads must answer every query and run (both paths, then again after a state reset) without a sanitizer
 * report. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alertnet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    alertnet_model *model = NULL;
    alertnet_error error;
    if (alertnet_load_memory(data, size, &model, &error) != ALERTNET_OK) {
        if (model != NULL || memchr(error.message, '\0', sizeof error.message) == NULL || error.message[0] == '\0')
            __builtin_trap(); /* a failure must leave no model and say why */
        return 0;
    }
    int frames, bins;
    alertnet_input_shape(model, &frames, &bins);
    const int outputs = alertnet_output_count(model);
    for (int i = 0; i < outputs; i++) {
        if (!alertnet_label(model, i) || !(alertnet_threshold(model, i) > 0.0f)) __builtin_trap();
    }
    if (!alertnet_feature_spec(model) || !alertnet_metadata(model, "model_name")) __builtin_trap();
    alertnet_layer_info info;
    for (int i = 0; i < alertnet_layer_count(model); i++) {
        if (alertnet_layer(model, i, &info) != ALERTNET_OK || !info.op || !info.detail) __builtin_trap();
    }
    /* Running is cheap for the small models the fuzzer finds; skip the rare huge ones to keep iterations fast. */
    if (alertnet_mflops(model) < 20.0) {
        float *input = calloc((size_t)frames * (size_t)bins, sizeof *input);
        float *probabilities = malloc((size_t)outputs * sizeof *probabilities);
        if (input && probabilities) {
            for (size_t i = 0; i < (size_t)frames * (size_t)bins; i++) input[i] = (float)(i % 7) - 3.0f;
            alertnet_run(model, input, probabilities);
            alertnet_run_reference(model, input, probabilities);
            if (alertnet_reset_state(model) != ALERTNET_OK) __builtin_trap();
            alertnet_run(model, input, probabilities); /* a stateful model from its reset state */
        }
        free(input);
        free(probabilities);
    }
    alertnet_free(model);
    return 0;
}
