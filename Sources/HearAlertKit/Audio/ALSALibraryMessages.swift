import CALSA

/// Where libasound's own messages go. Unhandled, it prints lines such as `ALSA lib pcm.c:2666:
/// (snd_pcm_open_noupdate) Unknown PCM default` on standard error — nine of them before HearAlert's one-line
/// error when a machine has no sound card. HearAlert's errors already say what failed, so by default these are
/// dropped; shown, each becomes one `hearalert: ALSA: …` line (`listen --verbose`).
///
/// Process-wide, like the libasound setting it makes (`snd_lib_error_set_handler`, through the C shim in CALSA).
/// A message libasound raises on an audio thread is written from that thread while shown: for diagnosis only.
public enum ALSALibraryMessages {
    /// Drops libasound's messages, or with `shown` writes each to `Diagnostics.standardError`.
    public static func route(shown: Bool) {
        _ = calsa_route_library_messages(shown ? 1 : 0)
    }
}

/// The C shim's forwarding handler calls this with each formatted message.
@_cdecl("hearalertkit_alsa_library_message")
func alsaLibraryMessage(_ message: UnsafePointer<CChar>) {
    Diagnostics.standardError.report("ALSA: " + String(cString: message))
}
