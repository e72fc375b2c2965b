/* Times alertnet_run on the default model's architecture (random weights), one thread, against the direct
 * (naive) oracle. Prints figures; asserts nothing. Usage: bench_alertnet [RUNS] */
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

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 2000;
    if (runs < 1) runs = 1;
    model_builder *b = builder_default_architecture(1);
    size_t size;
    unsigned char *bytes = builder_bytes(b, &size);
    builder_free(b);
    alertnet_model *m;
    alertnet_error error;
    if (alertnet_load_memory(bytes, size, &m, &error) != ALERTNET_OK) {
        fprintf(stderr, "cannot load the benchmark model: %s\n", error.message);
        return 1;
    }
    free(bytes);
    int frames, bins;
    alertnet_input_shape(m, &frames, &bins);
    float *input = malloc((size_t)frames * bins * sizeof *input), out[6];
    uint64_t state = 5;
    for (int i = 0; i < frames * bins; i++) input[i] = 10.0f * builder_random(&state);
    const double mflops = alertnet_mflops(m);
    const double fast = median_seconds(alertnet_run, m, input, out, runs);
    const double naive = median_seconds(alertnet_run_reference, m, input, out, runs / 20 + 5);
    printf("alertnet inference, default architecture [1, %d, %d] -> %d, %zu parameters, %.2f MFLOP per run\n",
           frames, bins, alertnet_output_count(m), alertnet_parameter_count(m), mflops);
    printf("  im2col + OpenBLAS (1 thread): median %.3f ms over %d runs, %.1f GFLOP/s\n", fast * 1e3, runs,
           mflops / fast / 1e3);
    printf("  naive direct oracle:          median %.3f ms over %d runs, %.1f GFLOP/s (%.1fx slower)\n", naive * 1e3,
           runs / 20 + 5, mflops / naive / 1e3, naive / fast);
    free(input);
    alertnet_free(m);
    return 0;
}
