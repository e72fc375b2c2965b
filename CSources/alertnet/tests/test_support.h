/* What the C test files share: the CHECK tally, loading that must fail with a message, and random data for
 * holding one path against another (test code, not part of the library). */
#ifndef ALERTNET_TEST_SUPPORT_H
#define ALERTNET_TEST_SUPPORT_H

#include <stdint.h>
#include <stdio.h>

#include "alertnet.h"
#include "model_builder.h"

/* Checks made and failed, over every test file; main prints them and fails when any failed. */
extern int test_checks, test_failures;

#define CHECK(condition, ...)                                                    \
    do {                                                                         \
        test_checks++;                                                           \
        if (!(condition)) {                                                      \
            test_failures++;                                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                        \
            fprintf(stderr, "\n");                                               \
        }                                                                        \
    } while (0)

/* Loading `bytes` must fail with `status`, leave no model, and say `needle`; `what` names the case. */
void expect_failure(const unsigned char *bytes, size_t size, alertnet_status status, const char *needle,
                    const char *what);
/* The same for the builder's file, as a format error; frees the builder. */
void expect_builder_failure(model_builder *b, const char *needle, const char *what);
/* The builder's file loaded (the builder is freed), or NULL after a failed CHECK naming `what`. */
alertnet_model *load_built(model_builder *b, const char *what);

int random_int(uint64_t *state, int low, int high);                 /* uniform in [low, high] */
float *random_floats(uint64_t *state, size_t n);                    /* uniform in [-1, 1); caller frees */
float max_relative_error(const float *a, const float *b, size_t n); /* max |a - b| / (1 + |b|) */

/* The per-file test groups main runs. */
void test_gru(void);

#endif
