/* Times alertnet_run on the default model's architecture and on an enhancer-sized GRU network (random weights,
 * one frame per run), one thread, against the direct (naive) oracle; then on each model file named, e.g. the
 * shipped models/default.safetensors. Prints figures; asserts nothing.
 * Usage: bench_alertnet [RUNS [MODEL.safetensors...]] (the GRU network, about a hundred times cheaper, runs
 * 20 x RUNS times) */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "alertnet.h"
#include "model_builder.h"

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef alertnet_status (*run_function)(alertnet_model *, const float *, float *);

static double median_seconds(run_function run, alertnet_model *m, const float *input, float *out, int runs) {
    double *times = malloc((size_t)runs * sizeof *times);
    for (int i = 0; i < 10; i++) run(m, input, out); /* warm caches and OpenBLAS buffers */
    for (int i = 0; i < runs; i++) {
        double start = now_seconds();
        run(m, input, out);
        times[i] = now_seconds() - start;
    }
    qsort(times, (size_t)runs, sizeof *times, compare_doubles);
    double median = times[runs / 2];
    free(times);
    return median;
}

/* Times both paths of a loaded model (which it frees) on one random input and prints the figures. */
static int bench_model(const char *what, alertnet_model *m, int runs) {
    int frames, bins;
    alertnet_input_shape(m, &frames, &bins);
    const int outputs = alertnet_output_count(m);
    float *input = malloc((size_t)frames * bins * sizeof *input), *out = malloc((size_t)outputs * sizeof *out);
    uint64_t state = 5;
    for (int i = 0; i < frames * bins; i++) input[i] = 10.0f * builder_random(&state);
    const double mflops = alertnet_mflops(m);
    const double fast = median_seconds(alertnet_run, m, input, out, runs);
    const double naive = median_seconds(alertnet_run_reference, m, input, out, runs / 20 + 5);
    printf("alertnet, %s [1, %d, %d] -> %d, %zu parameters, %.3f MFLOP per run%s\n", what, frames, bins, outputs,
           alertnet_parameter_count(m), mflops, alertnet_is_stateful(m) ? " (stateful: one new frame per run)" : "");
    printf("  BLAS path, OpenBLAS (1 thread): median %.4f ms over %d runs, %.2f GFLOP/s\n", fast * 1e3, runs,
           mflops / fast / 1e3);
    printf("  naive direct oracle:            median %.4f ms over %d runs, %.2f GFLOP/s (%.1fx slower)\n",
           naive * 1e3, runs / 20 + 5, mflops / naive / 1e3, naive / fast);
    free(input);
    free(out);
    alertnet_free(m);
    return 0;
}

/* Loads the builder's model (freeing the builder) and times it. */
static int bench(const char *what, model_builder *b, int runs) {
    size_t size;
    unsigned char *bytes = builder_bytes(b, &size);
    builder_free(b);
    alertnet_model *m;
    alertnet_error error;
    const alertnet_status status = alertnet_load_memory(bytes, size, &m, &error);
    free(bytes);
    if (status != ALERTNET_OK) {
        fprintf(stderr, "cannot load the %s benchmark model: %s\n", what, error.message);
        return 1;
    }
    return bench_model(what, m, runs);
}

/* The enhancer's kind of recurrent network: 42 inputs per frame, a GRU of 96 units, dense 96 -> 32, sigmoid. */
static model_builder *enhancer_sized_gru(void) {
    model_builder *b = builder_new(1, 42, 32, 2);
    builder_gru(b, "gru", 96, 42, 1);
    builder_dense(b, "out", 32, 96, 1);
    builder_layer(b, "{\"op\":\"sigmoid\"}");
    return b;
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 2000;
    if (runs < 1) runs = 1;
    if (bench("default architecture", builder_default_architecture(1), runs) != 0) return 1;
    if (bench("GRU 42 -> 96, dense 96 -> 32, sigmoid", enhancer_sized_gru(), 20 * runs) != 0) return 1;
    for (int i = 2; i < argc; i++) {
        alertnet_model *m;
        alertnet_error error;
        if (alertnet_load_file(argv[i], &m, &error) != ALERTNET_OK) {
            fprintf(stderr, "cannot load %s: %s\n", argv[i], error.message);
            return 1;
        }
        if (bench_model(argv[i], m, runs) != 0) return 1;
    }
    return 0;
}
