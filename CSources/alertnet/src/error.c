/* The one way every stage reports a failure: a status code, and a one-line message in the caller's
 * alertnet_error. Its own file so that the stages that fail (container, JSON, model, graph) all depend on it and
 * on nothing of each other's for it. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

/* Messages quote what a file holds (a label, a key, a tensor name), and a file is data from anyone: every control
 * byte (C0, DEL, and C1 as UTF-8's C2 80..C2 9F) is written as \xNN, so no message can act on a terminal. */
alertnet_status an_fail(alertnet_error *error, alertnet_status status, const char *format, ...) {
    if (error) {
        char raw[ALERTNET_ERROR_SIZE];
        va_list args;
        va_start(args, format);
        vsnprintf(raw, sizeof raw, format, args);
        va_end(args);
        size_t out = 0;
        for (const unsigned char *p = (const unsigned char *)raw; *p; p++) {
            const int c1 = p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F;
            const int escape = p[0] < 0x20 || p[0] == 0x7F || c1;
            const size_t need = escape ? (c1 ? 8u : 4u) : 1u;
            if (out + need >= sizeof error->message) break;
            if (!escape) {
                error->message[out++] = (char)*p;
                continue;
            }
            out += (size_t)snprintf(error->message + out, sizeof error->message - out, "\\x%02X", p[0]);
            if (c1) out += (size_t)snprintf(error->message + out, sizeof error->message - out, "\\x%02X", *++p);
        }
        error->message[out] = '\0';
    }
    return status;
}
