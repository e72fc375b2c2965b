/* JSON parsing that keeps what cJSON forgets: whether a number was written as an integer.
 *
 * cJSON stores every number as a double, so `3` and `3.0` look the same to it, while the format (and its
 * reference loader, tools/alertnet_ref.py, where json.loads makes `3.0` a float) requires a JSON integer for
 * sizes, offsets and geometry. After cJSON has accepted a text, this file scans the same text for its number
 * literals, in document order, and pairs the k-th literal with the k-th number item of a pre-order walk of the
 * tree (cJSON builds items in document order). Literals that are not strict JSON numbers (`01`, `1.`, which
 * strtod inside cJSON accepts and json.loads does not) make the text invalid. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
    const char *next, *end; /* the unscanned rest of the text */
    an_json *doc;
    size_t capacity;
    const char *bad;        /* the first literal that is not a strict JSON number, or a pairing failure */
} number_walk;

/* The next number literal's first character at or after `p` (outside strings), or NULL. */
static const char *find_number(const char *p, const char *end) {
    while (p < end) {
        if (*p == '"') {
            for (p++; p < end && *p != '"'; p++) {
                if (*p == '\\') p++; /* the escaped character cannot close the string */
            }
            p++;
        } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            return p;
        } else {
            p++;
        }
    }
    return NULL;
}

/* The first \u0000 escape inside a string of the text, or NULL. cJSON decodes it into a NUL that ends the C
 * string early, so "sir\u0000en" would silently become "sir": such a text is refused instead. */
static const char *find_nul_escape(const char *p, const char *end) {
    int in_string = 0;
    for (; p < end; p++) {
        if (*p == '"') {
            in_string = !in_string;
        } else if (in_string && *p == '\\') {
            if (end - p >= 6 && memcmp(p + 1, "u0000", 5) == 0) return p;
            p++; /* the escaped character cannot close the string or start an escape */
        }
    }
    return NULL;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The characters cJSON's number parser collects before handing them to strtod. */
static int in_literal(char c) { return is_digit(c) || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E'; }

/* The length of the literal at `p` (the characters cJSON's number parser takes) and whether it is a strict JSON
 * number, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, and whether it is an integer (no fraction, no exponent). */
static size_t read_literal(const char *p, const char *end, int *strict, int *integer) {
    size_t n = 0;
    while (p + n < end && in_literal(p[n])) n++;
    size_t i = p[0] == '-';
    int ok = i < n && is_digit(p[i]);
    if (ok && p[i] == '0') i++;
    else while (i < n && is_digit(p[i])) i++;
    *integer = i == n;
    if (ok && i < n && p[i] == '.') {
        ok = ++i < n && is_digit(p[i]);
        while (i < n && is_digit(p[i])) i++;
    }
    if (ok && i < n && (p[i] == 'e' || p[i] == 'E')) {
        if (++i < n && (p[i] == '+' || p[i] == '-')) i++;
        ok = i < n && is_digit(p[i]);
        while (i < n && is_digit(p[i])) i++;
    }
    *strict = ok && i == n;
    return n;
}

/* The integer literal's exact value, saturated at the int64 limits (every range the loader checks is far inside). */
static int64_t literal_value(const char *p, size_t n) {
    const int negative = p[0] == '-';
    uint64_t magnitude = 0;
    for (size_t i = (size_t)negative; i < n; i++) {
        const unsigned digit = (unsigned)(p[i] - '0');
        if (magnitude > (UINT64_MAX - digit) / 10) return negative ? INT64_MIN : INT64_MAX;
        magnitude = magnitude * 10 + digit;
    }
    if (negative) return magnitude > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)magnitude;
    return magnitude > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)magnitude;
}

static void walk_numbers(number_walk *w, const cJSON *item) {
    for (; item && !w->bad; item = item->next) {
        if (item->child) walk_numbers(w, item->child);
        if (!cJSON_IsNumber(item)) continue;
        const char *p = find_number(w->next, w->end);
        if (!p) {
            w->bad = w->end; /* cannot happen for text cJSON accepted; refused rather than trusted */
            return;
        }
        int strict, integer;
        const size_t n = read_literal(p, w->end, &strict, &integer);
        if (!strict || w->doc->integer_count >= w->capacity) {
            w->bad = p;
            return;
        }
        if (integer) w->doc->integers[w->doc->integer_count++] = (an_json_integer_literal){item, literal_value(p, n)};
        w->next = p + n;
    }
}

static int compare_items(const void *a, const void *b) {
    const uintptr_t x = (uintptr_t)((const an_json_integer_literal *)a)->item;
    const uintptr_t y = (uintptr_t)((const an_json_integer_literal *)b)->item;
    return (x > y) - (x < y);
}

alertnet_status an_json_parse(an_json *doc, const char *text, size_t length, const char **end, const char *what,
                              alertnet_error *error) {
    memset(doc, 0, sizeof *doc);
    const char *stop = NULL;
    doc->root = cJSON_ParseWithLengthOpts(text, length, &stop, 0);
    if (end) *end = stop;
    if (!doc->root) /* on failure cJSON points `stop` at the error (its global error pointer is not used) */
        return an_fail(error, ALERTNET_ERROR_FORMAT, "%s is not valid JSON (near byte %lld)", what,
                       stop && stop >= text && stop <= text + length ? (long long)(stop - text) : -1LL);
    const char *nul = find_nul_escape(text, stop);
    if (nul) {
        const long long at = (long long)(nul - text);
        an_json_free(doc);
        return an_fail(error, ALERTNET_ERROR_FORMAT, "%s holds a NUL character (\\u0000, near byte %lld), which "
                       "would cut its string short", what, at);
    }
    size_t literals = 0;
    for (const char *p = text; (p = find_number(p, stop)) != NULL; literals++) {
        int strict, integer;
        p += read_literal(p, stop, &strict, &integer);
    }
    number_walk w = {text, stop, doc, literals, NULL};
    if (literals && !(doc->integers = malloc(literals * sizeof *doc->integers))) {
        an_json_free(doc);
        return an_fail(error, ALERTNET_ERROR_MEMORY, "out of memory reading the %s", what);
    }
    walk_numbers(&w, doc->root);
    if (w.bad) {
        const long long at = (long long)(w.bad - text);
        an_json_free(doc);
        return an_fail(error, ALERTNET_ERROR_FORMAT, "%s is not valid JSON (near byte %lld: not a JSON number)",
                       what, at);
    }
    if (doc->integer_count) qsort(doc->integers, doc->integer_count, sizeof *doc->integers, compare_items);
    return ALERTNET_OK;
}

int an_json_integer(const an_json *doc, const cJSON *item, int64_t minimum, int64_t maximum, int64_t *out) {
    if (!item || !doc->integer_count) return 0;
    const an_json_integer_literal key = {item, 0};
    const an_json_integer_literal *found =
        bsearch(&key, doc->integers, doc->integer_count, sizeof *doc->integers, compare_items);
    if (!found || found->value < minimum || found->value > maximum) return 0;
    *out = found->value;
    return 1;
}

void an_json_free(an_json *doc) {
    cJSON_Delete(doc->root);
    free(doc->integers);
    memset(doc, 0, sizeof *doc);
}
