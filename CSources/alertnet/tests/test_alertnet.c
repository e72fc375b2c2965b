/* alertnet's C tests: loader errors, each layer against an independent oracle, the BLAS path against the direct
 * path on random architectures, and committed models against expectations from the numpy reference
 * (tools/alertnet_ref.py, via tools/fixtures/make_alertnet_fixtures.py). Usage: test_alertnet MODELS_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_builder.h"
#include "test_support.h"

/* ---- loader errors ---- */

/* 6 frames x 5 bins -> conv 1->4 3x3 pad 1 -> relu -> global avg -> dense 4->3 -> sigmoid */
static model_builder *small_model(void) {
    model_builder *b = builder_new(6, 5, 3, 7);
    builder_conv(b, "c", 4, 1, 3, 3, 1, 1, 1, 1, 1);
    builder_layer(b, "{\"op\":\"relu\"}");
    builder_layer(b, "{\"op\":\"global_avgpool\"}");
    builder_dense(b, "d", 3, 4, 1);
    builder_layer(b, "{\"op\":\"sigmoid\"}");
    return b;
}

static void set_header_length(unsigned char *bytes, uint64_t n) {
    for (int i = 0; i < 8; i++) bytes[i] = (unsigned char)(n >> (8 * i));
}

/* The file with the first `from` in its JSON header replaced by `to` (header re-padded), or NULL. */
static unsigned char *replace_in_header(const unsigned char *bytes, size_t size, const char *from, const char *to,
                                        size_t *new_size) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | bytes[i];
    char *text = calloc(1, (size_t)n + 1);
    memcpy(text, bytes + 8, (size_t)n);
    char *at = strstr(text, from);
    if (!at) {
        free(text);
        return NULL;
    }
    const size_t head = (size_t)(at - text), length = (size_t)n - strlen(from) + strlen(to);
    const size_t padded = (length + 7) / 8 * 8, data = size - 8 - (size_t)n;
    unsigned char *out = malloc(8 + padded + data);
    set_header_length(out, padded);
    memcpy(out + 8, text, head);
    memcpy(out + 8 + head, to, strlen(to));
    memcpy(out + 8 + head + strlen(to), at + strlen(from), (size_t)n - head - strlen(from));
    memset(out + 8 + length, ' ', padded - length);
    memcpy(out + 8 + padded, bytes + 8 + n, data);
    free(text);
    *new_size = 8 + padded + data;
    return out;
}

static void test_container_errors(void) {
    size_t size;
    model_builder *b = small_model();
    unsigned char *bytes = builder_bytes(b, &size);
    builder_free(b);
    alertnet_model *model;
    alertnet_error error;
    CHECK(alertnet_load_memory(bytes, size, &model, &error) == ALERTNET_OK, "small model loads: %s", error.message);
    alertnet_free(model);

    expect_failure(bytes, 5, ALERTNET_ERROR_FORMAT, "shorter than the 8-byte", "truncated to 5 bytes");
    expect_failure(bytes, 40, ALERTNET_ERROR_FORMAT, "runs past the end", "truncated inside the header");
    expect_failure(bytes, size - 1, ALERTNET_ERROR_FORMAT, "data_offsets", "truncated data");
    expect_failure(NULL, 0, ALERTNET_ERROR_FORMAT, "shorter", "empty");

    unsigned char *copy = malloc(size);
    memcpy(copy, bytes, size);
    set_header_length(copy, 200u * 1024u * 1024u);
    expect_failure(copy, size, ALERTNET_ERROR_FORMAT, "exceeds the", "oversized header length");
    set_header_length(copy, ~0ull);
    expect_failure(copy, size, ALERTNET_ERROR_FORMAT, "exceeds the", "header length 2^64-1");

    memcpy(copy, bytes, size);
    copy[8] = 'x';
    expect_failure(copy, size, ALERTNET_ERROR_FORMAT, "not valid JSON", "garbled JSON");
    memcpy(copy, bytes, size);
    copy[20] = '\0';
    expect_failure(copy, size, ALERTNET_ERROR_FORMAT, "NUL byte", "NUL in header");

    /* JSON followed by something other than space padding */
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | bytes[i];
    memcpy(copy, bytes, size);
    size_t last = 8 + (size_t)n - 1;
    while (copy[last] == ' ') last--;
    if (last + 1 < 8 + n) {
        copy[last + 1] = 'z';
        expect_failure(copy, size, ALERTNET_ERROR_FORMAT, "after its JSON", "trailing bytes after the header");
    }
    free(copy);
    free(bytes);

    model = (alertnet_model *)1;
    CHECK(alertnet_load_file("/nonexistent/model.safetensors", &model, &error) == ALERTNET_ERROR_IO &&
          model == NULL && strstr(error.message, "cannot open"), "missing file: %s", error.message);
    model = (alertnet_model *)1;
    CHECK(alertnet_load_file(".", &model, &error) == ALERTNET_ERROR_IO && model == NULL &&
          strstr(error.message, "cannot read ."), "directory: %s", error.message);
    CHECK(alertnet_load_memory("x", 1, NULL, &error) == ALERTNET_ERROR_ARGUMENT, "NULL model pointer");
}

static void test_tensor_errors(void) {
    model_builder *b = small_model();
    builder_override(b, "F16", -1, -1);
    expect_builder_failure(b, "tensor \"d.bias\": dtype F16 is not supported (only F32)", "wrong dtype");

    b = small_model();
    builder_override(b, NULL, 0, 1000000);
    expect_builder_failure(b, "tensor \"d.bias\": data_offsets must be [begin, end] within", "offset out of range");

    b = small_model();
    builder_override(b, NULL, 8, 4);
    expect_builder_failure(b, "data_offsets", "begin after end");

    b = small_model();
    builder_override(b, NULL, 0, 12); /* d.bias placed over c.weight */
    expect_builder_failure(b, "overlap", "overlapping tensors");

    b = small_model();
    builder_override(b, NULL, 0, 8); /* 2 floats for a [3] tensor */
    expect_builder_failure(b, "its shape needs more than the 8 bytes its data_offsets cover", "range too short");

    b = small_model();
    builder_override(b, NULL, 0, 16); /* 4 floats for a [3] tensor */
    expect_builder_failure(b, "data_offsets cover 16 bytes, its shape needs 12", "range too long");

    b = builder_new(6, 5, 3, 1);
    const float bad[3] = {0.0f, INFINITY, 1.0f};
    const int64_t three[1] = {3};
    builder_tensor(b, "w", 1, three, 0, bad);
    builder_layer(b, "{\"op\":\"global_avgpool\"}");
    expect_builder_failure(b, "tensor \"w\": value 1 is not finite", "non-finite value");

    b = small_model();
    const int64_t two[1] = {2};
    builder_tensor(b, "stray", 1, two, 1.0f, NULL);
    expect_builder_failure(b, "tensor \"stray\" is not used by the graph", "unused tensor");
}

static void test_graph_errors(void) {
    /* wrong shape: conv weight expects 1 input channel */
    model_builder *b = builder_new(6, 5, 3, 1);
    builder_conv(b, "c", 4, 2, 3, 3, 1, 1, 1, 1, 0);
    expect_builder_failure(b, "tensor \"c.weight\": expected shape [*, 1, *, *], found [4, 2, 3, 3]", "conv shape");

    b = builder_new(6, 5, 3, 1);
    builder_conv(b, "c", 4, 1, 3, 3, 1, 1, 1, 1, 0);
    builder_layer(b, "{\"op\":\"global_maxpool\"}");
    builder_dense(b, "d", 3, 5, 0);
    builder_layer(b, "{\"op\":\"softmax\"}");
    expect_builder_failure(b, "tensor \"d.weight\": expected shape [*, 4], found [3, 5]", "dense shape");

    b = builder_new(6, 5, 3, 1);
    builder_batchnorm(b, "bn", 2);
    expect_builder_failure(b, "tensor \"bn.weight\": expected shape [1], found [2]", "batchnorm shape");

    b = small_model();
    builder_layer(b, "{\"op\":\"relu\"}");
    expect_builder_failure(b, "last layer must be sigmoid or softmax", "not ending in probabilities");

    b = builder_new(6, 5, 2, 1);
    builder_layer(b, "{\"op\":\"flatten\"}");
    builder_dense(b, "d", 3, 30, 1);
    builder_layer(b, "{\"op\":\"sigmoid\"}");
    expect_builder_failure(b, "outputs 3 values, expected 2", "output count");

    b = builder_new(6, 5, 3, 1);
    builder_layer(b, "{\"op\":\"gelu\"}");
    expect_builder_failure(b, "layer 0: unknown op \"gelu\"", "unknown op");

    b = builder_new(6, 5, 3, 1);
    builder_layer(b, "{\"op\":\"maxpool2d\",\"kernel\":[2,2],\"dilation\":[2,2]}");
    expect_builder_failure(b, "layer 0 (maxpool2d): unknown field \"dilation\"", "unknown field");

    b = builder_new(6, 5, 3, 1);
    builder_dense(b, "d", 3, 30, 1);
    expect_builder_failure(b, "needs a flat input", "dense on [C,H,W]");

    b = builder_new(6, 5, 3, 1);
    builder_layer(b, "{\"op\":\"maxpool2d\",\"kernel\":[7,2]}");
    expect_builder_failure(b, "kernel 7 is larger than the padded input 6", "kernel larger than input");

    b = builder_new(6, 5, 3, 1);
    builder_layer(b, "{\"op\":\"avgpool2d\",\"kernel\":[2,2],\"padding\":[2,0]}");
    expect_builder_failure(b, "padding must be at most half the kernel", "pool padding");

    b = builder_new(6, 5, 3, 1);
    builder_layer(b, "{\"op\":\"maxpool2d\",\"kernel\":[2,2],\"stride\":[0,1]}");
    expect_builder_failure(b, "field \"stride\" must be two integers in [1, 65536]", "zero stride");

    b = builder_new(6, 5, 3, 1);
    builder_conv(b, "c", 1, 1, 1, 1, 1, 1, 30000, 30000, 0);
    expect_builder_failure(b, "more than the 256 MiB limit", "workspace limit");

    b = builder_new(6, 5, 3, 1);
    builder_layer(b, "{\"op\":\"conv2d\",\"weight\":\"nothing\"}");
    expect_builder_failure(b, "tensor \"nothing\" is not in the file", "missing tensor");
}

/* A metadata value that makes the small model fail to load, and what the message must say. */
typedef struct {
    const char *key, *value, *needle;
} metadata_case;

static void expect_metadata_failures(const metadata_case *cases, size_t count) {
    for (size_t i = 0; i < count; i++) {
        model_builder *b = small_model();
        builder_metadata(b, cases[i].key, cases[i].value);
        expect_builder_failure(b, cases[i].needle, cases[i].value ? cases[i].value : cases[i].needle);
    }
}

/* The small model's bytes with one metadata value replaced (caller frees). */
static unsigned char *small_model_with(const char *key, const char *value, size_t *size) {
    model_builder *b = small_model();
    builder_metadata(b, key, value);
    unsigned char *bytes = builder_bytes(b, size);
    builder_free(b);
    return bytes;
}

static void test_metadata_errors(void) {
    static const metadata_case cases[] = {
        {"format", "gguf", "metadata format is \"gguf\", expected \"alertnet\""},
        {"format", NULL, "metadata key \"format\" is missing"},
        {"format_version", "2", "format_version \"2\" is not supported"},
        {"trained_on", NULL, "metadata key \"trained_on\" is missing"},
        {"labels", "[\"a\",\"b\"]", "thresholds must be an array with one number per label (2)"},
        {"labels", "[\"a\",\"a\",\"b\"]", "label \"a\" appears twice"},
        {"labels", "{", "metadata \"labels\" is not valid JSON"},
        {"thresholds", "[0.5,1.0,0.5]", "threshold 1 (l1) must be a number in (0, 1)"},
        {"context", "{\"frames\":6}", "context must be {\"frames\": T, \"step\": S}"},
        {"context", "{\"frames\":6.5,\"step\":1}", "context: frames must be an integer in [1, 65536]"},
        {"context", "{\"frames\":6,\"step\":4,\"start_padding\":6}", "start_padding must be an integer in [0, 5]"},
        {"context", "{\"frames\":6,\"step\":4,\"start_padding\":-1}", "start_padding must be an integer in [0, 5]"},
        {"context", "{\"frames\":6,\"step\":4,\"start_padding\":1.5}", "start_padding must be an integer"},
        {"context", "{\"frames\":6,\"step\":4,\"start_padding\":\"2\"}", "start_padding must be an integer"},
        {"context", "{\"frames\":6,\"step\":4,\"padding\":1}", "no other key"},
        {"context", "{\"frames\":6,\"step\":4,\"start_padding\":1,\"extra\":0}", "no other key"},
        {"context", "{\"frames\":6,\"step\":4,\"start_padding\":1,\"start_padding\":2}", "no other key"},
        {"features", "{\"kind\":\"mfcc\"}", "features: kind must be \"log_mel\" or \"log_power\""},
        {"features", "{\"kind\":\"log_mel\",\"n_mels\":0}", "n_mels must be an integer"},
        {"graph", "[]", "graph must be a non-empty array"},
    };
    expect_metadata_failures(cases, sizeof cases / sizeof cases[0]);
    /* a log_power spec changes the input width: n_fft 8 gives 5 bins, the small model's width */
    size_t size;
    unsigned char *bytes = small_model_with("features", "{\"kind\":\"log_power\",\"n_fft\":8}", &size);
    alertnet_model *model;
    alertnet_error error;
    CHECK(alertnet_load_memory(bytes, size, &model, &error) == ALERTNET_OK, "log_power 5 bins: %s", error.message);
    alertnet_free(model);
    free(bytes);
}

/* Labels are identifiers, [a-z0-9_]{1,32} (FORMAT.md): whatever a file names is printed, written into TSV rows and
 * hook environments, so a label that a terminal or a parser could read as anything but a name is refused, and a
 * message quoting it shows its control bytes as \xNN. */
static void test_label_rule(void) {
    static const metadata_case cases[] = {
        {"labels", "[\"Siren\",\"b\",\"c\"]", "label 0 (\"Siren\") must be 1 to 32 characters of a-z, 0-9 and _"},
        {"labels", "[\"a\",\"car horn\",\"c\"]", "label 1 (\"car horn\") must be 1 to 32 characters"},
        {"labels", "[\"a\",\"b\",\"\"]", "label 2 (\"\") must be 1 to 32 characters"},
        {"labels", "[\"si\\tren\",\"b\",\"c\"]", "label 0 (\"si\\x09ren\") must be"},
        {"labels", "[\"siren\\n\",\"b\",\"c\"]", "label 0 (\"siren\\x0A\") must be"},
        {"labels", "[\"\\u001b[2J\\u001b]0;t\\u0007\",\"b\",\"c\"]", "label 0 (\"\\x1B[2J\\x1B]0;t\\x07\") must be"},
        {"labels", "[\"\\u009b2J\",\"b\",\"c\"]", "label 0 (\"\\xC2\\x9B2J\") must be"},
        {"labels", "[\"sir\xff\",\"b\",\"c\"]", "must be 1 to 32 characters of a-z, 0-9 and _"},
        {"labels", "[\"caf\u00e9\",\"b\",\"c\"]", "must be 1 to 32 characters of a-z, 0-9 and _"},
        {"labels", "[\"a\",\"b\",\"abcdefghijklmnopqrstuvwxyz0123456\"]", "label 2 (\"abcdefghijklmnopqrstuvwxyz0123456\")"},
        {"labels", "[\"a\",7,\"c\"]", "labels must be strings (label 1 is not)"},
        {"labels", "[\"sir\\u0000en\",\"b\",\"c\"]", "metadata \"labels\" holds a NUL character (\\u0000, near byte 5)"},
    };
    expect_metadata_failures(cases, sizeof cases / sizeof cases[0]);

    /* 32 characters of the whole alphabet load */
    size_t size;
    unsigned char *bytes =
        small_model_with("labels", "[\"abcdefghijklmnopqrstuvwxyz012345\",\"_\",\"car_horn_2\"]", &size);
    alertnet_model *model;
    alertnet_error error;
    CHECK(alertnet_load_memory(bytes, size, &model, &error) == ALERTNET_OK, "32-character label: %s", error.message);
    if (model) CHECK(strcmp(alertnet_label(model, 1), "_") == 0, "label 1 is \"_\"");
    alertnet_free(model);

    /* a NUL escaped in the header itself (not inside a metadata JSON text) would cut model_name short */
    size_t changed_size;
    unsigned char *changed = replace_in_header(bytes, size, "\"test model\"", "\"test\\u0000model\"", &changed_size);
    CHECK(changed != NULL, "the builder writes model_name \"test model\"");
    if (changed) expect_failure(changed, changed_size, ALERTNET_ERROR_FORMAT, "header holds a NUL character",
                                "NUL escaped in model_name");
    free(changed);
    /* an escaped backslash before "u0000" is a backslash and text, not a NUL */
    changed = replace_in_header(bytes, size, "\"test model\"", "\"test\\\\u0000model\"", &changed_size);
    if (changed) {
        CHECK(alertnet_load_memory(changed, changed_size, &model, &error) == ALERTNET_OK, "backslash u0000: %s",
              error.message);
        if (model) CHECK(strcmp(alertnet_metadata(model, "model_name"), "test\\u0000model") == 0, "name kept");
        alertnet_free(model);
    }
    free(changed);
    free(bytes);
}

/* Sizes, steps, offsets and geometry must be JSON integers, as json.loads gives tools/alertnet_ref.py a Python int:
 * 6.0, 6e0 and true are refused although cJSON stores 6.0 and 6 alike; 06 and 4. are no JSON numbers at all. */
static void test_integers_as_written(void) {
    static const metadata_case metadata[] = {
        {"context", "{\"frames\":6.0,\"step\":4}", "context: frames must be an integer in [1, 65536]"},
        {"context", "{\"frames\":6,\"step\":4e0}", "context: step must be an integer in [1, 65536]"},
        {"context", "{\"frames\":6,\"step\":true}", "context: step must be an integer in [1, 65536]"},
        {"context", "{\"frames\":6,\"step\":4,\"start_padding\":3.0}", "start_padding must be an integer in [0, 5]"},
        {"context", "{\"frames\":6,\"step\":4,\"start_padding\":0E5}", "start_padding must be an integer in [0, 5]"},
        {"context", "{\"frames\":6,\"step\":04}", "metadata \"context\" is not valid JSON (near byte 19: not a JSON"},
        {"context", "{\"frames\":6,\"step\":4.}", "metadata \"context\" is not valid JSON (near byte 19: not a JSON"},
        {"context", "{\"frames\":6,\"step\":4} 5", "metadata \"context\" is not valid JSON (something follows"},
        {"features", "{\"kind\":\"log_mel\",\"n_mels\":5.0}", "features: n_mels must be an integer in [1, 65536]"},
        {"features", "{\"kind\":\"log_power\",\"n_fft\":8.0}", "features: n_fft must be an integer in [1, 131070]"},
    };
    expect_metadata_failures(metadata, sizeof metadata / sizeof metadata[0]);

    /* the small model's graph (plus a 1x1 max pool) as text, so its numbers keep the spelling given here; the
     * first spelling, export.py's, loads */
    static const char *const strides[][2] = {
        {"[1,1]", NULL},
        {"[1.0,1]", "layer 0 (conv2d): field \"stride\" must be two integers in [1, 65536]"},
        {"[1,1e0]", "layer 0 (conv2d): field \"stride\" must be two integers in [1, 65536]"},
    };
    for (size_t i = 0; i < sizeof strides / sizeof strides[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "[{\"op\":\"conv2d\",\"weight\":\"c.weight\",\"bias\":\"c.bias\",\"stride\":%s,"
                 "\"padding\":[1,1]},{\"op\":\"relu\"},{\"op\":\"maxpool2d\",\"kernel\":[1,1],\"padding\":[0,0]},"
                 "{\"op\":\"global_avgpool\"},{\"op\":\"dense\",\"weight\":\"d.weight\",\"bias\":\"d.bias\"},"
                 "{\"op\":\"sigmoid\"}]", strides[i][0]);
        model_builder *b = small_model();
        builder_metadata(b, "graph", text);
        if (strides[i][1]) {
            expect_builder_failure(b, strides[i][1], strides[i][0]);
            continue;
        }
        size_t size;
        unsigned char *bytes = builder_bytes(b, &size);
        builder_free(b);
        alertnet_model *m = NULL;
        alertnet_error error;
        CHECK(alertnet_load_memory(bytes, size, &m, &error) == ALERTNET_OK, "graph as written: %s", error.message);
        alertnet_free(m);
        free(bytes);
    }
    model_builder *b = small_model();
    builder_metadata(b, "graph", "[{\"op\":\"maxpool2d\",\"kernel\":[2,2.0]}]");
    expect_builder_failure(b, "layer 0 (maxpool2d): field \"kernel\" must be two integers", "kernel [2,2.0]");
    b = small_model();
    builder_metadata(b, "graph", "[{\"op\":\"avgpool2d\",\"kernel\":[2,2],\"padding\":[0,-0.0]}]");
    expect_builder_failure(b, "layer 0 (avgpool2d): field \"padding\" must be two integers", "padding [0,-0.0]");

    /* the container's own numbers, edited in the header text the builder wrote (d.bias is the only [3]); the
     * last two edits keep the numbers integers and load */
    static const char *const header[][3] = {
        {"\"shape\":[3]", "\"shape\":[3.0]", "tensor \"d.bias\": shape entry 0 must be an integer >= 1"},
        {"\"shape\":[3]", "\"shape\":[true]", "tensor \"d.bias\": shape entry 0 must be an integer >= 1"},
        {"\"shape\":[3]", "\"shape\":[03]", "header is not valid JSON (near byte"},
        {"\"data_offsets\":[0,", "\"data_offsets\":[0.0,", "tensor \"c.weight\": data_offsets must be an array of two "
                                                            "integers"},
        {"\"data_offsets\":[0,", "\"data_offsets\":[-0,", NULL},
        {"\"shape\":[3]", "\"shape\": [3]", NULL},
    };
    for (size_t i = 0; i < sizeof header / sizeof header[0]; i++) {
        b = small_model();
        size_t size;
        unsigned char *bytes = builder_bytes(b, &size);
        builder_free(b);
        unsigned char *edited = replace_in_header(bytes, size, header[i][0], header[i][1], &size);
        free(bytes);
        CHECK(edited != NULL, "%s is not in the header", header[i][0]);
        if (!edited) continue;
        if (header[i][2]) {
            expect_failure(edited, size, ALERTNET_ERROR_FORMAT, header[i][2], header[i][1]);
        } else {
            alertnet_model *m = NULL;
            alertnet_error error;
            CHECK(alertnet_load_memory(edited, size, &m, &error) == ALERTNET_OK, "%s: %s", header[i][1],
                  error.message);
            alertnet_free(m);
        }
        free(edited);
    }
}

/* start_padding: absent means 0; every value in [0, T - 1] loads and reads back. */
static void test_start_padding(void) {
    static const struct {
        const char *context;
        int padding;
    } cases[] = {
        {NULL, 0},
        {"{\"frames\":6,\"step\":4,\"start_padding\":0}", 0},
        {"{\"start_padding\":2,\"frames\":6,\"step\":4}", 2},
        {"{\"frames\":6,\"step\":4,\"start_padding\":5}", 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model_builder *b = small_model();
        const char *context = cases[i].context ? cases[i].context : "without start_padding";
        if (cases[i].context) builder_metadata(b, "context", cases[i].context);
        size_t size;
        unsigned char *bytes = builder_bytes(b, &size);
        builder_free(b);
        alertnet_model *m;
        alertnet_error error;
        alertnet_status s = alertnet_load_memory(bytes, size, &m, &error);
        free(bytes);
        CHECK(s == ALERTNET_OK, "context %s: %s", context, error.message);
        if (s != ALERTNET_OK) continue;
        CHECK(alertnet_context_start_padding(m) == cases[i].padding && alertnet_context_frames(m) == 6 &&
                  alertnet_decision_step(m) == 4,
              "context %s: start_padding %d", context, alertnet_context_start_padding(m));
        alertnet_free(m);
    }
    CHECK(alertnet_context_start_padding(NULL) == 0, "start_padding of NULL");
}

/* ---- queries ---- */

static void test_queries(void) {
    model_builder *b = small_model();
    builder_metadata(b, "tracker", "{\"off_ratio\":0.5}");
    builder_metadata(b, "thresholds", "[0.25,0.5,0.75]");
    size_t size;
    unsigned char *bytes = builder_bytes(b, &size);
    builder_free(b);
    alertnet_model *m;
    alertnet_error error;
    if (alertnet_load_memory(bytes, size, &m, &error) != ALERTNET_OK) {
        CHECK(0, "load: %s", error.message);
        free(bytes);
        return;
    }
    free(bytes); /* the model owns copies of everything */
    int frames, bins;
    alertnet_input_shape(m, &frames, &bins);
    CHECK(frames == 6 && bins == 5, "input shape %dx%d", frames, bins);
    CHECK(alertnet_output_count(m) == 3, "outputs");
    CHECK(strcmp(alertnet_label(m, 2), "l2") == 0 && alertnet_label(m, 3) == NULL && alertnet_label(m, -1) == NULL,
          "labels");
    CHECK(alertnet_threshold(m, 0) == 0.25f && alertnet_threshold(m, 2) == 0.75f && isnan(alertnet_threshold(m, 3)),
          "thresholds");
    CHECK(strstr(alertnet_feature_spec(m), "\"n_mels\":5") != NULL, "feature spec");
    CHECK(alertnet_context_frames(m) == 6 && alertnet_decision_step(m) == 4, "context");
    CHECK(strcmp(alertnet_metadata(m, "tracker"), "{\"off_ratio\":0.5}") == 0, "tracker metadata");
    CHECK(strcmp(alertnet_metadata(m, "model_name"), "test model") == 0, "model name");
    CHECK(alertnet_metadata(m, "absent") == NULL, "absent metadata");
    CHECK(alertnet_parameter_count(m) == 4 * 9 + 4 + 3 * 4 + 3, "parameters %zu", alertnet_parameter_count(m));
    const double conv = (2.0 * 4 * 30 * 9 + 4 * 30) / 1e6, relu = 120 / 1e6, pool = 120 / 1e6, dense = 27 / 1e6,
                 sigmoid = 9 / 1e6;
    CHECK(fabs(alertnet_mflops(m) - (conv + relu + pool + dense + sigmoid)) < 1e-12, "mflops %g", alertnet_mflops(m));
    CHECK(alertnet_layer_count(m) == 5, "layer count");
    alertnet_layer_info info;
    CHECK(alertnet_layer(m, 0, &info) == ALERTNET_OK && strcmp(info.op, "conv2d") == 0 && info.rank == 3 &&
              info.shape[0] == 4 && info.shape[1] == 6 && info.shape[2] == 5 &&
              strcmp(info.detail, "1->4 kernel 3x3 stride 1x1 padding 1x1") == 0,
          "layer 0: %s %s", info.op, info.detail);
    CHECK(alertnet_layer(m, 2, &info) == ALERTNET_OK && info.rank == 1 && info.shape[0] == 4, "layer 2 shape");
    CHECK(alertnet_layer(m, 5, &info) == ALERTNET_ERROR_ARGUMENT, "layer out of range");

    float input[30], copy[30], p[3], q[3];
    uint64_t state = 3;
    for (int i = 0; i < 30; i++) copy[i] = input[i] = builder_random(&state);
    CHECK(alertnet_run(m, input, p) == ALERTNET_OK, "run");
    CHECK(memcmp(input, copy, sizeof input) == 0, "run must not write its input");
    CHECK(alertnet_run(m, input, q) == ALERTNET_OK && memcmp(p, q, sizeof p) == 0, "run is repeatable");
    CHECK(alertnet_run(NULL, input, p) == ALERTNET_ERROR_ARGUMENT && alertnet_run(m, NULL, p) == ALERTNET_ERROR_ARGUMENT,
          "NULL arguments");
    alertnet_free(m);
    alertnet_free(NULL);
}

/* ---- layers against oracles ---- */

static void test_conv_against_direct(void) {
    uint64_t state = 11;
    for (int trial = 0; trial < 200; trial++) {
        an_layer l = {.op = AN_CONV2D};
        l.in = (an_shape){3, random_int(&state, 1, 5), random_int(&state, 1, 12), random_int(&state, 1, 12)};
        l.kh = random_int(&state, 1, 5);
        l.kw = random_int(&state, 1, 5);
        l.sh = random_int(&state, 1, 3);
        l.sw = random_int(&state, 1, 3);
        l.ph = random_int(&state, 0, 3);
        l.pw = random_int(&state, 0, 3);
        if (trial % 5 == 0) l.kh = l.kw = l.sh = l.sw = 1, l.ph = l.pw = 0; /* the no-im2col path */
        if (l.in.h + 2 * l.ph < l.kh || l.in.w + 2 * l.pw < l.kw) continue;
        l.out = (an_shape){3, random_int(&state, 1, 6), (l.in.h + 2 * l.ph - l.kh) / l.sh + 1,
                           (l.in.w + 2 * l.pw - l.kw) / l.sw + 1};
        float *weight = random_floats(&state, (size_t)l.out.c * l.in.c * l.kh * l.kw);
        float *bias = trial % 2 ? random_floats(&state, (size_t)l.out.c) : NULL;
        l.weight = weight;
        l.bias = bias;
        float *x = random_floats(&state, an_shape_count(l.in));
        float *columns = malloc((an_conv2d_columns(&l) + 1) * sizeof *columns);
        float *fast = malloc(an_shape_count(l.out) * sizeof *fast), *slow = malloc(an_shape_count(l.out) * sizeof *slow);
        an_conv2d_blas(&l, x, fast, columns);
        an_conv2d_direct(&l, x, slow);
        float error = max_relative_error(fast, slow, an_shape_count(l.out));
        CHECK(error < 1e-5f, "conv %dx%dx%d k%dx%d s%dx%d p%dx%d -> %d: error %g", l.in.c, l.in.h, l.in.w, l.kh, l.kw,
              l.sh, l.sw, l.ph, l.pw, l.out.c, error);
        free(weight), free(bias), free(x), free(columns), free(fast), free(slow);
    }
}

static void test_dense_against_direct(void) {
    uint64_t state = 12;
    for (int trial = 0; trial < 50; trial++) {
        an_layer l = {.op = AN_DENSE};
        l.in = (an_shape){1, random_int(&state, 1, 300), 1, 1};
        l.out = (an_shape){1, random_int(&state, 1, 20), 1, 1};
        float *weight = random_floats(&state, (size_t)l.in.c * l.out.c), *x = random_floats(&state, (size_t)l.in.c);
        float *bias = trial % 2 ? random_floats(&state, (size_t)l.out.c) : NULL;
        l.weight = weight;
        l.bias = bias;
        float fast[20], slow[20];
        an_dense_blas(&l, x, fast);
        an_dense_direct(&l, x, slow);
        CHECK(max_relative_error(fast, slow, (size_t)l.out.c) < 1e-5f, "dense %d->%d", l.in.c, l.out.c);
        free(weight), free(bias), free(x);
    }
}

/* Pooling oracle: materialise the padded input (-inf or 0 outside), then reduce every window in full. */
static void pool_oracle(const an_layer *l, const float *x, float *y) {
    const int is_max = l->op == AN_MAXPOOL2D, hp = l->in.h + 2 * l->ph, wp = l->in.w + 2 * l->pw;
    float *padded = malloc((size_t)l->in.c * hp * wp * sizeof *padded);
    for (int c = 0; c < l->in.c; c++)
        for (int i = 0; i < hp; i++)
            for (int j = 0; j < wp; j++) {
                int si = i - l->ph, sj = j - l->pw;
                int inside = si >= 0 && si < l->in.h && sj >= 0 && sj < l->in.w;
                padded[((size_t)c * hp + i) * wp + j] =
                    inside ? x[((size_t)c * l->in.h + si) * l->in.w + sj] : (is_max ? -INFINITY : 0.0f);
            }
    for (int c = 0; c < l->out.c; c++)
        for (int oy = 0; oy < l->out.h; oy++)
            for (int ox = 0; ox < l->out.w; ox++) {
                double acc = is_max ? -INFINITY : 0.0;
                for (int i = 0; i < l->kh; i++)
                    for (int j = 0; j < l->kw; j++) {
                        double v = padded[((size_t)c * hp + oy * l->sh + i) * wp + ox * l->sw + j];
                        acc = is_max ? (v > acc ? v : acc) : acc + v;
                    }
                y[((size_t)c * l->out.h + oy) * l->out.w + ox] = (float)(is_max ? acc : acc / (l->kh * l->kw));
            }
    free(padded);
}

static void test_pools_against_oracle(void) {
    uint64_t state = 13;
    for (int trial = 0; trial < 200; trial++) {
        an_layer l = {.op = trial % 2 ? AN_MAXPOOL2D : AN_AVGPOOL2D};
        l.in = (an_shape){3, random_int(&state, 1, 4), random_int(&state, 1, 10), random_int(&state, 1, 10)};
        l.kh = random_int(&state, 1, 4);
        l.kw = random_int(&state, 1, 4);
        l.sh = random_int(&state, 1, 3);
        l.sw = random_int(&state, 1, 3);
        l.ph = random_int(&state, 0, l.kh / 2);
        l.pw = random_int(&state, 0, l.kw / 2);
        if (l.in.h + 2 * l.ph < l.kh || l.in.w + 2 * l.pw < l.kw) continue;
        l.out = (an_shape){3, l.in.c, (l.in.h + 2 * l.ph - l.kh) / l.sh + 1, (l.in.w + 2 * l.pw - l.kw) / l.sw + 1};
        float *x = random_floats(&state, an_shape_count(l.in));
        float *fast = malloc(an_shape_count(l.out) * sizeof *fast), *slow = malloc(an_shape_count(l.out) * sizeof *slow);
        an_pool2d(&l, x, fast);
        pool_oracle(&l, x, slow);
        CHECK(max_relative_error(fast, slow, an_shape_count(l.out)) < 1e-6f, "%s %dx%d k%dx%d s%dx%d p%dx%d",
              an_op_name(l.op), l.in.h, l.in.w, l.kh, l.kw, l.sh, l.sw, l.ph, l.pw);
        free(x), free(fast), free(slow);
    }
}

static void test_activations(void) {
    const float x[5] = {-100.0f, -1.0f, 0.0f, 2.0f, 100.0f};
    float y[5];
    an_sigmoid(5, x, y);
    for (int i = 0; i < 5; i++) {
        double expected = 1.0 / (1.0 + exp(-(double)x[i]));
        CHECK(fabs(y[i] - expected) < 1e-7, "sigmoid(%g) = %g, expected %g", x[i], y[i], expected);
    }
    an_softmax(5, x, y);
    double sum = 0.0, denominator = 0.0;
    for (int i = 0; i < 5; i++) denominator += exp((double)x[i] - 100.0);
    for (int i = 0; i < 5; i++) {
        CHECK(fabs(y[i] - exp((double)x[i] - 100.0) / denominator) < 1e-7, "softmax %d", i);
        sum += y[i];
    }
    CHECK(fabs(sum - 1.0) < 1e-6, "softmax sums to %g", sum);
    an_relu(5, x, y);
    CHECK(y[0] == 0.0f && y[2] == 0.0f && y[3] == 2.0f, "relu");
}

/* Random architectures: alertnet_run (im2col + BLAS) against alertnet_run_reference (direct loops). */
static void test_random_models_blas_against_direct(void) {
    uint64_t state = 21;
    for (int trial = 0; trial < 30; trial++) {
        int frames = random_int(&state, 8, 20), bins = random_int(&state, 6, 16), labels = random_int(&state, 1, 5);
        model_builder *b = builder_new(frames, bins, labels, (uint64_t)trial);
        int c = 1, h = frames, w = bins;
        for (int block = 0, blocks = random_int(&state, 1, 3); block < blocks; block++) {
            char name[16], text[160];
            int out = random_int(&state, 2, 8), k = random_int(&state, 1, 3), s = random_int(&state, 1, 2);
            int p = random_int(&state, 0, k / 2 + 1);
            if (h + 2 * p < k || w + 2 * p < k) break;
            snprintf(name, sizeof name, "conv%d", block);
            builder_conv(b, name, out, c, k, k, s, s, p, p, trial % 2);
            c = out, h = (h + 2 * p - k) / s + 1, w = (w + 2 * p - k) / s + 1;
            if (trial % 3 == 0) {
                snprintf(name, sizeof name, "bn%d", block);
                builder_batchnorm(b, name, c);
            }
            builder_layer(b, "{\"op\":\"relu\"}");
            if (h >= 2 && w >= 2) {
                const int stride_h = random_int(&state, 1, 2), stride_w = random_int(&state, 1, 2);
                snprintf(text, sizeof text, "{\"op\":\"%s\",\"kernel\":[2,2],\"stride\":[%d,%d],\"padding\":[1,0]}",
                         block % 2 ? "avgpool2d" : "maxpool2d", stride_h, stride_w);
                builder_layer(b, text);
                h = h / stride_h + 1, w = (w - 2) / stride_w + 1; /* (h + 2 - 2) / s + 1 */
            }
        }
        int flat = c;
        if (trial % 2) {
            builder_layer(b, "{\"op\":\"flatten\"}");
            flat = c * h * w;
        } else {
            builder_layer(b, trial % 4 ? "{\"op\":\"global_maxpool\"}" : "{\"op\":\"global_avgpool\"}");
        }
        builder_dense(b, "out", labels, flat, 1);
        builder_layer(b, trial % 5 == 0 ? "{\"op\":\"softmax\"}" : "{\"op\":\"sigmoid\"}");
        size_t size;
        unsigned char *bytes = builder_bytes(b, &size);
        builder_free(b);
        alertnet_model *m;
        alertnet_error error;
        if (alertnet_load_memory(bytes, size, &m, &error) != ALERTNET_OK) {
            CHECK(0, "random model %d: %s", trial, error.message);
            free(bytes);
            continue;
        }
        float *x = random_floats(&state, (size_t)frames * bins), fast[5], slow[5];
        alertnet_run(m, x, fast);
        alertnet_run_reference(m, x, slow);
        CHECK(max_relative_error(fast, slow, (size_t)labels) < 1e-5f, "random model %d: BLAS and direct differ",
              trial);
        free(x), free(bytes);
        alertnet_free(m);
    }
}

/* ---- committed models against the numpy reference ---- */

static float *read_floats(FILE *f, const char *tag, size_t *n) {
    char word[32];
    if (fscanf(f, "%31s %zu", word, n) != 2 || strcmp(word, tag) != 0) return NULL;
    float *v = malloc((*n ? *n : 1) * sizeof *v);
    for (size_t i = 0; i < *n; i++) {
        if (fscanf(f, "%f", &v[i]) != 1) {
            free(v);
            return NULL;
        }
    }
    return v;
}

/* Each window through alertnet_run on one handle and alertnet_run_reference on another: a stateful model's windows
 * are one stream, in order, so each path must carry its own state from window to window as numpy did. */
static void test_fixture(const char *directory, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.safetensors", directory, name);
    alertnet_model *m, *oracle;
    alertnet_error error;
    if (alertnet_load_file(path, &m, &error) != ALERTNET_OK) {
        CHECK(0, "%s: %s", name, error.message);
        return;
    }
    if (alertnet_load_file(path, &oracle, &error) != ALERTNET_OK) {
        CHECK(0, "%s (second load): %s", name, error.message);
        alertnet_free(m);
        return;
    }
    snprintf(path, sizeof path, "%s/%s.expect", directory, name);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) {
        alertnet_free(m);
        alertnet_free(oracle);
        return;
    }
    int frames, bins;
    alertnet_input_shape(m, &frames, &bins);
    for (int window = 0;; window++) {
        size_t n_in, n_out;
        float *input = read_floats(f, "input", &n_in);
        if (!input) {
            CHECK(window > 0, "%s: no input window in the expectation file", name);
            break;
        }
        float *expected = read_floats(f, "output", &n_out);
        CHECK(expected && n_in == (size_t)frames * bins && n_out == (size_t)alertnet_output_count(m),
              "%s: expectation sizes", name);
        if (expected && n_out <= 64 && n_out == (size_t)alertnet_output_count(m) && n_in == (size_t)frames * bins) {
            float found[64], reference[64];
            alertnet_run(m, input, found);
            alertnet_run_reference(oracle, input, reference);
            for (size_t i = 0; i < n_out; i++) {
                CHECK(fabsf(found[i] - expected[i]) <= 1e-5f, "%s window %d output %zu: %.8f, numpy %.8f", name,
                      window, i, found[i], expected[i]);
                CHECK(fabsf(reference[i] - expected[i]) <= 1e-5f, "%s window %d output %zu (direct): %.8f, numpy %.8f",
                      name, window, i, reference[i], expected[i]);
            }
        }
        free(input);
        free(expected);
    }
    fclose(f);
    alertnet_free(m);
    alertnet_free(oracle);
}

static void test_fixtures(const char *directory) {
    char path[1024], name[256];
    snprintf(path, sizeof path, "%s/MANIFEST", directory);
    FILE *manifest = fopen(path, "r");
    CHECK(manifest != NULL, "cannot open %s", path);
    if (!manifest) return;
    int count = 0;
    while (fscanf(manifest, "%255s", name) == 1) {
        test_fixture(directory, name);
        count++;
    }
    fclose(manifest);
    CHECK(count >= 3, "only %d fixture models listed", count);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODELS_DIR\n", argv[0]);
        return 2;
    }
    test_container_errors();
    test_tensor_errors();
    test_graph_errors();
    test_metadata_errors();
    test_label_rule();
    test_start_padding();
    test_integers_as_written();
    test_queries();
    test_conv_against_direct();
    test_dense_against_direct();
    test_pools_against_oracle();
    test_activations();
    test_random_models_blas_against_direct();
    test_gru();
    test_fixtures(argv[1]);
    printf("%d checks, %d failures\n", test_checks, test_failures);
    return test_failures ? 1 : 0;
}
