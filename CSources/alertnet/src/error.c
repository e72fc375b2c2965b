/* The one way every stage reports a failure: a status code, and a one-line message in the caller's
 * alertnet_error. Its own file so that the stages that fail (container, JSON, model, graph) all depend on it and
 * on nothing of each other's for it. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

alertnet_status an_fail(alertnet_error *error, alertnet_status status, const char *format, ...) {
    if (error) {
        va_list args;
        va_start(args, format);
        vsnprintf(error->message, sizeof error->message, format, args);
        va_end(args);
    }
    return status;
}
