#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

/* libasound writes its own "ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM x" lines to stderr unless a
 * handler is set (snd_lib_error_set_handler, a process-wide setting), while HearAlert reports each failure itself
 * in one line. These handlers drop libasound's messages, or hand each one, formatted, to HearAlertKit
 * (ALSALibraryMessages.swift). The handler type is variadic, which Swift cannot implement: hence this C. */

/* Defined in HearAlertKit: takes one formatted libasound message. */
void hearalertkit_alsa_library_message(const char *message);

static void calsa_drop_library_message(const char *file, int line, const char *function, int err,
                                       const char *fmt, ...) {
    (void)file;
    (void)line;
    (void)function;
    (void)err;
    (void)fmt;
}

static void calsa_forward_library_message(const char *file, int line, const char *function, int err,
                                          const char *fmt, ...) {
    char text[512], message[1024];
    va_list arguments;
    va_start(arguments, fmt);
    vsnprintf(text, sizeof text, fmt, arguments);
    va_end(arguments);
    if (err) snprintf(message, sizeof message, "%s:%d:(%s) %s: %s", file, line, function, text, snd_strerror(err));
    else snprintf(message, sizeof message, "%s:%d:(%s) %s", file, line, function, text);
    hearalertkit_alsa_library_message(message);
}

/* Drops libasound's messages (forward == 0) or forwards them; returns snd_lib_error_set_handler's status. */
static inline int calsa_route_library_messages(int forward) {
    return snd_lib_error_set_handler(forward ? calsa_forward_library_message : calsa_drop_library_message);
}
