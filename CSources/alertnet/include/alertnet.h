/* alertnet: run a small alert-sound CNN (or a small recurrent network) stored in one safetensors file (format:
 * FORMAT.md beside this).
 *
 *     alertnet_model *model;
 *     alertnet_error error;
 *     if (alertnet_load_file("model.safetensors", &model, &error) != ALERTNET_OK) {
 *         fprintf(stderr, "%s\n", error.message);
 *         return 1;
 *     }
 *     float window[T * F], probabilities[K];        // T, F from alertnet_input_shape; K = alertnet_output_count
 *     alertnet_run(model, window, probabilities);   // allocates nothing, never blocks
 *     alertnet_free(model);
 *
 * Errors: every fallible call returns an alertnet_status; loaders also fill an alertnet_error with one line
 * naming what is wrong (the tensor, the expected and the found shape...). Nothing exits or aborts.
 *
 * Threads: a model is not thread-safe; use one loaded model per thread (loading twice is cheap). Queries on a
 * model are read-only and may run concurrently with each other, but not with alertnet_run on that model.
 * A stateful model (alertnet_is_stateful) is also one stream: its handle carries the stream's recurrent state
 * from run to run, so two streams need two handles, and a handle is reset (alertnet_reset_state) when its
 * stream restarts.
 * Loads on several threads at once work; the one shared write is cJSON's own error pointer, which cJSON sets
 * on every parse and alertnet never reads.
 *
 * BLAS: the layers call CBLAS (OpenBLAS in HearAlert). Its products here are small, so handing them to a thread
 * pool costs more than it saves; when built against OpenBLAS, loading a model therefore calls
 * openblas_set_num_threads(1), which is process-wide. A host that wants multithreaded OpenBLAS for its own
 * work may raise it again after loading, at the cost of alertnet_run sharing OpenBLAS's pool.
 */
#ifndef ALERTNET_H
#define ALERTNET_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct alertnet_model alertnet_model;

typedef enum {
    ALERTNET_OK = 0,
    ALERTNET_ERROR_IO = -1,       /* the file could not be opened or read */
    ALERTNET_ERROR_FORMAT = -2,   /* the bytes are not a valid alertnet model (the message says why) */
    ALERTNET_ERROR_MEMORY = -3,   /* out of memory, or the model needs more than ALERTNET_MAX_WORKSPACE */
    ALERTNET_ERROR_ARGUMENT = -4  /* a NULL pointer or an index out of range */
} alertnet_status;

enum { ALERTNET_ERROR_SIZE = 512 };

/* The one-line message of a failed load; always NUL-terminated. */
typedef struct {
    char message[ALERTNET_ERROR_SIZE];
} alertnet_error;

/* Limits enforced while loading (bytes). */
#define ALERTNET_MAX_HEADER (100u * 1024u * 1024u)
#define ALERTNET_MAX_WORKSPACE (256u * 1024u * 1024u)

/* Load a model. On success *model owns everything it needs (the memory passed in may be freed). On failure
 * *model is NULL and error (if not NULL) holds the reason. */
alertnet_status alertnet_load_file(const char *path, alertnet_model **model, alertnet_error *error);
alertnet_status alertnet_load_memory(const void *bytes, size_t size, alertnet_model **model, alertnet_error *error);
void alertnet_free(alertnet_model *model); /* NULL is allowed */

/* Run one input window: `input` is T frames of F bins, oldest first ([T][F], row-major); `probabilities`
 * receives alertnet_output_count values. Allocates nothing; returns ALERTNET_ERROR_ARGUMENT only for NULLs.
 * For a stateful model the T frames continue the stream: they are the T frames after the previous run's (no
 * overlap), each gru layer starts from the state the previous run left, and the answer is the newest frame's. */
alertnet_status alertnet_run(alertnet_model *model, const float *input, float *probabilities);

/* The same computation with direct loops instead of BLAS (naive convolution, dense and GRU layers): slow, kept as
 * the test oracle and the benchmark baseline. It reads and advances the same recurrent state as alertnet_run, so
 * the two are interchangeable run by run on one stream (a stream may even alternate between them). */
alertnet_status alertnet_run_reference(alertnet_model *model, const float *input, float *probabilities);

/* 1 when the graph holds a recurrent (gru) layer, whose hidden state persists in the handle between runs: each
 * run then depends on every frame the handle has seen since its load or its last reset. 0 otherwise (also for
 * NULL): every run depends on its input alone, as for every file without a gru. Why a host asks: a stateful model
 * must see each frame exactly once, in order, and be reset where its stream breaks. */
int alertnet_is_stateful(const alertnet_model *model);

/* Sets every recurrent state to zero, where a freshly loaded model starts (PyTorch's default initial state). Call
 * it where the stream the handle follows restarts (a new file, a reopened device): otherwise the first frames
 * after the gap are read as if they continued the audio before it. Also after a non-finite input: a NaN in the
 * state stays there, so every later answer would be NaN until a reset. Allocates nothing; a no-op for a stateless
 * model; ALERTNET_ERROR_ARGUMENT only for NULL. */
alertnet_status alertnet_reset_state(alertnet_model *model);

/* What the model expects and produces. Strings are owned by the model and live until alertnet_free. */
void alertnet_input_shape(const alertnet_model *model, int *frames, int *bins);
int alertnet_output_count(const alertnet_model *model);
/* A label is 1 to ALERTNET_MAX_LABEL_LENGTH characters of a-z, 0-9 and _ (the loader refuses any other). */
enum { ALERTNET_MAX_LABEL_LENGTH = 32 };
const char *alertnet_label(const alertnet_model *model, int index);   /* NULL when out of range */
float alertnet_threshold(const alertnet_model *model, int index);     /* default on-threshold; NaN out of range */
const char *alertnet_feature_spec(const alertnet_model *model);       /* the FeatureSpec JSON text */
int alertnet_context_frames(const alertnet_model *model);             /* T */
int alertnet_decision_step(const alertnet_model *model);              /* hops between decisions */
/* P, in [0, T - 1] (0 when the file's context has no start_padding): the model was trained to see a stream's
 * first window as P copies of its first frame followed by T - P real frames, so a host restarted while an alert
 * sounds can decide after T - P frames instead of waiting for a whole window. FORMAT.md gives the schedule. */
int alertnet_context_start_padding(const alertnet_model *model);
const char *alertnet_metadata(const alertnet_model *model, const char *key); /* any __metadata__ value, or NULL */

/* Size and cost, for `inspect` and benchmarks. */
size_t alertnet_parameter_count(const alertnet_model *model);
double alertnet_mflops(const alertnet_model *model); /* multiply-adds counted as 2 flops, per alertnet_run */
int alertnet_layer_count(const alertnet_model *model);

typedef struct {
    const char *op;      /* "conv2d", "maxpool2d", "dense", "gru", ... as in the file's graph */
    const char *detail;  /* e.g. "1->16 kernel 5x5 stride 2x2 padding 2x2"; "" when there is nothing to say */
    int rank;            /* 3 for [C, H, W], 2 for a sequence [T, N] (T steps of N values), 1 for [N] */
    int shape[3];        /* output shape (first `rank` entries) */
    size_t parameters;
    double mflops;
} alertnet_layer_info;

alertnet_status alertnet_layer(const alertnet_model *model, int index, alertnet_layer_info *info);

#ifdef __cplusplus
}
#endif

#endif
