/* The gru layer: PyTorch nn.GRU against numbers numpy computed, a stream run frame by frame against the same
 * frames run as sequences, the reset, both paths on one stream, the loader's checks and the reported costs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test_support.h"

/* A GRU with I = 3, H = 2 and weights exact in binary, over four steps from h = 0 (gates r, z, n stacked as
 * PyTorch stores them). GOLDEN_H holds h after each step, from numpy in float64 (the formula of FORMAT.md, written
 * out independently of the C code; PyTorch's nn.GRU with these weights gives the same to 8 digits). */
enum { GOLDEN_I = 3, GOLDEN_H = 2, GOLDEN_T = 4 };
static const float WEIGHT_IH[3 * GOLDEN_H * GOLDEN_I] = {
    0.5f, -0.25f, 0.125f, -0.75f, 0.5f, 0.25f, 0.375f, 0.625f, -0.5f,
    0.25f, -0.875f, 0.75f, 1.0f, 0.5f, -0.25f, -0.5f, 0.25f, 0.875f,
};
static const float WEIGHT_HH[3 * GOLDEN_H * GOLDEN_H] = {
    0.25f, -0.5f, 0.75f, 0.125f, -0.375f, 0.5f, 0.625f, -0.25f, 0.5f, 1.25f, -1.0f, 0.375f,
};
static const float BIAS_IH[3 * GOLDEN_H] = {0.125f, -0.25f, 0.5f, -0.125f, 0.25f, -0.375f};
static const float BIAS_HH[3 * GOLDEN_H] = {-0.25f, 0.375f, 0.125f, 0.5f, -0.5f, 0.75f};
static const float GOLDEN_X[GOLDEN_T * GOLDEN_I] = {
    1.0f, -0.5f, 0.25f, 0.75f, 1.5f, -1.0f, -2.0f, 0.5f, 1.25f, 0.5f, -1.5f, 2.0f,
};
static const double GOLDEN_STATES[GOLDEN_T * GOLDEN_H] = {
    0.200701833, -0.111587968, 0.273742335, -0.617576802, -0.600817539, -0.0914893322, -0.744651764, -0.0472942879,
};

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* The golden GRU as a model of `frames` frames: gru, then sigmoid (labels l0, l1 answer sigmoid(h)). */
static model_builder *golden_model(int frames) {
    model_builder *b = builder_new(frames, GOLDEN_I, GOLDEN_H, 1);
    const int64_t ih[2] = {3 * GOLDEN_H, GOLDEN_I}, hh[2] = {3 * GOLDEN_H, GOLDEN_H}, bias[1] = {3 * GOLDEN_H};
    builder_tensor(b, "g.weight_ih", 2, ih, 0, WEIGHT_IH);
    builder_tensor(b, "g.weight_hh", 2, hh, 0, WEIGHT_HH);
    builder_tensor(b, "g.bias_ih", 1, bias, 0, BIAS_IH);
    builder_tensor(b, "g.bias_hh", 1, bias, 0, BIAS_HH);
    builder_layer(b, "{\"op\":\"gru\",\"weight_ih\":\"g.weight_ih\",\"weight_hh\":\"g.weight_hh\","
                     "\"bias_ih\":\"g.bias_ih\",\"bias_hh\":\"g.bias_hh\"}");
    builder_layer(b, "{\"op\":\"sigmoid\"}");
    return b;
}

/* Each kernel over the whole sequence at once, and one step per call: every step's state is numpy's. */
static void test_gru_kernels_against_numpy(void) {
    float state[GOLDEN_H], rows[GOLDEN_T * GOLDEN_H], scratch[3 * GOLDEN_H * (GOLDEN_T + 1)];
    an_layer l = {.op = AN_GRU, .weight = WEIGHT_IH, .bias = BIAS_IH, .weight_hh = WEIGHT_HH, .bias_hh = BIAS_HH,
                  .state = state};
    l.out = (an_shape){2, GOLDEN_H, GOLDEN_T, 1};
    for (int path = 0; path < 4; path++) {
        const int direct = path & 1, at_once = path < 2, steps = at_once ? GOLDEN_T : 1;
        l.in = (an_shape){2, GOLDEN_I, steps, 1};
        memset(state, 0, sizeof state);
        for (int t = 0; t < GOLDEN_T; t += steps) {
            if (direct) an_gru_direct(&l, GOLDEN_X + t * GOLDEN_I, rows + t * GOLDEN_H);
            else an_gru_blas(&l, GOLDEN_X + t * GOLDEN_I, rows + t * GOLDEN_H, scratch);
        }
        for (int i = 0; i < GOLDEN_T * GOLDEN_H; i++)
            CHECK(fabs(rows[i] - GOLDEN_STATES[i]) < 1e-6, "gru %s %s: step %d unit %d: %.9f, numpy %.9f",
                  direct ? "direct" : "BLAS", at_once ? "at once" : "step by step", i / GOLDEN_H, i % GOLDEN_H,
                  rows[i], GOLDEN_STATES[i]);
        CHECK(memcmp(state, rows + (GOLDEN_T - 1) * GOLDEN_H, sizeof state) == 0, "the state is the last step's");
    }
}

/* The model streamed one frame per run gives numpy's sigmoid(h_t) at every frame; four frames in one run answer
 * with the last; a reset starts the stream again, bit for bit. */
static void test_gru_model_streams_and_resets(void) {
    alertnet_model *one = load_built(golden_model(1), "golden gru, 1 frame");
    alertnet_model *four = load_built(golden_model(GOLDEN_T), "golden gru, 4 frames");
    if (!one || !four) {
        alertnet_free(one);
        alertnet_free(four);
        return;
    }
    CHECK(alertnet_is_stateful(one) == 1 && alertnet_is_stateful(four) == 1, "a gru makes the model stateful");
    float first[GOLDEN_H], p[GOLDEN_H];
    for (int t = 0; t < GOLDEN_T; t++) {
        CHECK(alertnet_run(one, GOLDEN_X + t * GOLDEN_I, p) == ALERTNET_OK, "run frame %d", t);
        if (t == 0) memcpy(first, p, sizeof p);
        for (int j = 0; j < GOLDEN_H; j++) {
            const double expected = sigmoid(GOLDEN_STATES[t * GOLDEN_H + j]);
            CHECK(fabs(p[j] - expected) < 1e-6, "streamed frame %d output %d: %.9f, numpy %.9f", t, j, p[j], expected);
        }
    }
    CHECK(alertnet_run(four, GOLDEN_X, p) == ALERTNET_OK, "run four frames");
    for (int j = 0; j < GOLDEN_H; j++) {
        const double expected = sigmoid(GOLDEN_STATES[(GOLDEN_T - 1) * GOLDEN_H + j]);
        CHECK(fabs(p[j] - expected) < 1e-6, "sequence output %d: %.9f (the last step's), numpy %.9f", j, p[j],
              expected);
    }
    CHECK(alertnet_reset_state(one) == ALERTNET_OK, "reset");
    CHECK(alertnet_run(one, GOLDEN_X, p) == ALERTNET_OK && memcmp(p, first, sizeof p) == 0,
          "after a reset the first frame answers as after loading");
    CHECK(alertnet_run(one, GOLDEN_X, p) == ALERTNET_OK && memcmp(p, first, sizeof p) != 0,
          "without a reset the same frame answers differently (the state moved)");
    CHECK(alertnet_reset_state(NULL) == ALERTNET_ERROR_ARGUMENT && alertnet_is_stateful(NULL) == 0, "NULL model");

    alertnet_layer_info info;
    CHECK(alertnet_layer(four, 0, &info) == ALERTNET_OK && strcmp(info.op, "gru") == 0 && info.rank == 2 &&
              info.shape[0] == GOLDEN_T && info.shape[1] == GOLDEN_H && info.shape[2] == 0 &&
              strcmp(info.detail, "3->2 over 4 steps, state kept between runs") == 0,
          "gru layer info: %s rank %d [%d, %d] \"%s\"", info.op, info.rank, info.shape[0], info.shape[1], info.detail);
    const size_t parameters = 3 * GOLDEN_H * (GOLDEN_I + GOLDEN_H + 2);
    CHECK(info.parameters == parameters && alertnet_parameter_count(four) == parameters, "gru parameters %zu",
          info.parameters);
    /* per step: 2 flops per weight, 1 per bias, 14 per unit (FORMAT.md) */
    const double per_step = 2.0 * 3 * GOLDEN_H * (GOLDEN_I + GOLDEN_H) + 6.0 * GOLDEN_H + 14.0 * GOLDEN_H;
    CHECK(fabs(info.mflops - GOLDEN_T * per_step / 1e6) < 1e-12, "gru mflops %g", info.mflops);
    CHECK(fabs(alertnet_mflops(four) - (GOLDEN_T * per_step + 3.0 * GOLDEN_T * GOLDEN_H) / 1e6) < 1e-12,
          "model mflops %g (gru, then the sigmoid over every step)", alertnet_mflops(four));
    alertnet_free(one);
    alertnet_free(four);
}

/* A random recurrent model of `frames` frames: one or two GRUs (with or without biases), maybe a relu, a dense
 * per step and sigmoid or softmax per step. The same seed always builds the same weights, whatever `frames`. */
static model_builder *random_gru_model(uint64_t seed, int frames, int *bins, int *labels) {
    uint64_t state = seed * 7 + 3;
    *bins = random_int(&state, 1, 9);
    *labels = random_int(&state, 1, 5);
    const int hidden = random_int(&state, 1, 12), stacked = random_int(&state, 0, 1);
    const int second = random_int(&state, 1, 8);
    model_builder *b = builder_new(frames, *bins, *labels, seed);
    builder_gru(b, "g1", hidden, *bins, (int)(seed % 2));
    if (stacked) builder_gru(b, "g2", second, hidden, 1);
    if (seed % 3 == 0) builder_layer(b, "{\"op\":\"relu\"}");
    builder_dense(b, "out", *labels, stacked ? second : hidden, (int)(seed % 4 != 1));
    builder_layer(b, seed % 5 == 0 ? "{\"op\":\"softmax\"}" : "{\"op\":\"sigmoid\"}");
    return b;
}

/* One stream of frames: run frame by frame (the reference), in chunks of T frames per run, frame by frame by the
 * direct oracle on its own handle, and alternating between the two paths on one handle. */
static void test_gru_streams_agree(void) {
    enum { CHUNK_STEPS = 5, FRAMES = 6 * CHUNK_STEPS };
    for (uint64_t seed = 0; seed < 24; seed++) {
        int bins, labels;
        alertnet_model *frame = load_built(random_gru_model(seed, 1, &bins, &labels), "random gru, 1 frame");
        alertnet_model *chunk = load_built(random_gru_model(seed, CHUNK_STEPS, &bins, &labels), "random gru, chunk");
        alertnet_model *oracle = load_built(random_gru_model(seed, 1, &bins, &labels), "random gru, oracle");
        alertnet_model *mixed = load_built(random_gru_model(seed, 1, &bins, &labels), "random gru, alternating");
        uint64_t state = seed + 100;
        float *x = random_floats(&state, (size_t)FRAMES * bins);
        for (int i = 0; i < FRAMES * bins; i++) x[i] *= 3.0f;
        float p[5], q[5], first[5];
        for (int t = 0; frame && chunk && oracle && mixed && t < FRAMES; t++) {
            alertnet_run(frame, x + t * bins, p);
            if (t == 0) memcpy(first, p, sizeof p);
            alertnet_run_reference(oracle, x + t * bins, q);
            CHECK(max_relative_error(q, p, (size_t)labels) < 1e-5f, "seed %d frame %d: direct and BLAS differ",
                  (int)seed, t);
            if (t % 2) alertnet_run_reference(mixed, x + t * bins, q);
            else alertnet_run(mixed, x + t * bins, q);
            CHECK(max_relative_error(q, p, (size_t)labels) < 1e-5f, "seed %d frame %d: alternating paths differ",
                  (int)seed, t);
            if (t % CHUNK_STEPS == CHUNK_STEPS - 1) {
                alertnet_run(chunk, x + (t - CHUNK_STEPS + 1) * bins, q);
                CHECK(max_relative_error(q, p, (size_t)labels) < 1e-5f, "seed %d frame %d: %d frames at once and "
                      "one by one differ", (int)seed, t, CHUNK_STEPS);
            }
        }
        if (frame) {
            alertnet_reset_state(frame);
            alertnet_run(frame, x, p);
            CHECK(memcmp(p, first, (size_t)labels * sizeof *p) == 0, "seed %d: reset restores the start", (int)seed);
        }
        free(x);
        alertnet_free(frame), alertnet_free(chunk), alertnet_free(oracle), alertnet_free(mixed);
    }
}

static void test_gru_loader_checks(void) {
    model_builder *b = builder_new(6, 5, 3, 1);
    builder_gru(b, "g", 3, 5, 1);
    builder_dense(b, "d", 3, 3, 1);
    builder_layer(b, "{\"op\":\"sigmoid\"}");
    alertnet_model *m = load_built(b, "gru over [1, 6, 5]");
    CHECK(m && alertnet_is_stateful(m), "a gru over the input loads");
    alertnet_free(m);

    static const struct {
        const char *layer, *needle;
    } cases[] = {
        {"{\"op\":\"gru\",\"weight_ih\":\"wi\",\"weight_hh\":\"wh\",\"hidden_size\":2}",
         "layer 0 (gru): unknown field \"hidden_size\""},
        {"{\"op\":\"gru\",\"weight_hh\":\"wh\"}", "layer 0 (gru): field \"weight_ih\" (a tensor name) is missing"},
        {"{\"op\":\"gru\",\"weight_ih\":\"wi\"}", "layer 0 (gru): field \"weight_hh\" (a tensor name) is missing"},
        {"{\"op\":\"gru\",\"weight_ih\":\"wi\",\"weight_hh\":7}", "layer 0 (gru): field \"weight_hh\" must be a tensor"},
        {"{\"op\":\"gru\",\"weight_ih\":\"wi\",\"weight_hh\":\"nothing\"}", "tensor \"nothing\" is not in the file"},
        {"{\"op\":\"gru\",\"weight_ih\":\"wh\",\"weight_hh\":\"wh\"}",
         "layer 0 (gru): tensor \"wh\": expected shape [6, 5], found [6, 2]"},
        {"{\"op\":\"gru\",\"weight_ih\":\"wi\",\"weight_hh\":\"wi\"}",
         "layer 0 (gru): tensor \"wi\": expected shape [3H, H] (gates r, z, n), found [6, 5]"},
        {"{\"op\":\"gru\",\"weight_ih\":\"wi\",\"weight_hh\":\"b\"}",
         "layer 0 (gru): tensor \"b\": expected shape [*, *], found [6]"},
        {"{\"op\":\"gru\",\"weight_ih\":\"wi\",\"weight_hh\":\"wh\",\"bias_ih\":\"short\"}",
         "layer 0 (gru): tensor \"short\": expected shape [6], found [5]"},
        {"{\"op\":\"gru\",\"weight_ih\":\"wi\",\"weight_hh\":\"wh\",\"bias_hh\":\"wi\"}",
         "layer 0 (gru): tensor \"wi\": expected shape [6], found [6, 5]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        b = builder_new(6, 5, 2, 1);
        const int64_t wi[2] = {6, 5}, wh[2] = {6, 2}, six[1] = {6}, five[1] = {5};
        builder_tensor(b, "wi", 2, wi, 0.5f, NULL);
        builder_tensor(b, "wh", 2, wh, 0.5f, NULL);
        builder_tensor(b, "b", 1, six, 0.5f, NULL);
        builder_tensor(b, "short", 1, five, 0.5f, NULL);
        builder_layer(b, cases[i].layer);
        builder_layer(b, "{\"op\":\"sigmoid\"}");
        expect_builder_failure(b, cases[i].needle, cases[i].needle);
    }

    /* where a gru may stand, and what may follow one: two layers over the [1, 6, 5] input */
    static const struct {
        const char *first, *second, *needle;
    } placements[] = {
        {"conv", "gru 3", "layer 1 (gru): needs a sequence [1, T, I] or [T, I], got [4, 6, 5]"},
        {"flatten", "gru 3", "layer 1 (gru): needs a sequence [1, T, I] or [T, I], got [30]"},
        {"gru 3", "flatten", "layer 1 (flatten): needs a [C, H, W] input, got [6, 3]"},
        {"gru 3", "batchnorm", "layer 1 (batchnorm): needs a [C, H, W] or [C] input, got the sequence [6, 3]"},
        {"gru 4", "sigmoid", "the graph outputs 4 values per step, expected 3 (one per label)"},
        {"gru 3", "dense", "layer 1 (dense): tensor \"d.weight\": expected shape [*, 3], found [3, 4]"},
    };
    for (size_t i = 0; i < sizeof placements / sizeof placements[0]; i++) {
        b = builder_new(6, 5, 3, 1);
        const char *layers[2] = {placements[i].first, placements[i].second};
        for (int k = 0; k < 2; k++) {
            const int width = k == 0 ? 5 : strcmp(placements[i].first, "flatten") == 0 ? 30 : 3;
            if (strncmp(layers[k], "gru ", 4) == 0) builder_gru(b, "g", atoi(layers[k] + 4), width, 1);
            else if (strcmp(layers[k], "conv") == 0) builder_conv(b, "c", 4, 1, 3, 3, 1, 1, 1, 1, 1);
            else if (strcmp(layers[k], "batchnorm") == 0) builder_batchnorm(b, "bn", 3);
            else if (strcmp(layers[k], "dense") == 0) builder_dense(b, "d", 3, 4, 1);
            else if (strcmp(layers[k], "flatten") == 0) builder_layer(b, "{\"op\":\"flatten\"}");
            else builder_layer(b, "{\"op\":\"sigmoid\"}");
        }
        expect_builder_failure(b, placements[i].needle, placements[i].needle);
    }

    /* a model without a gru is not stateful, and a reset changes nothing */
    b = builder_new(6, 5, 3, 1);
    builder_layer(b, "{\"op\":\"flatten\"}");
    builder_dense(b, "d", 3, 30, 1);
    builder_layer(b, "{\"op\":\"sigmoid\"}");
    m = load_built(b, "stateless");
    if (m) {
        float x[30] = {0}, p[3], q[3];
        x[7] = 1.0f;
        CHECK(alertnet_is_stateful(m) == 0, "no gru, no state");
        alertnet_run(m, x, p);
        CHECK(alertnet_reset_state(m) == ALERTNET_OK, "a stateless reset succeeds");
        alertnet_run(m, x, q);
        CHECK(memcmp(p, q, sizeof p) == 0, "a stateless model answers the same after a reset");
        alertnet_free(m);
    }
}

void test_gru(void) {
    test_gru_kernels_against_numpy();
    test_gru_model_streams_and_resets();
    test_gru_streams_agree();
    test_gru_loader_checks();
}
