import Foundation

/// Results printed with `print` go through C's buffered standard output: a write that fails there (a full disk,
/// a closed terminal's EIO) fails silently, and the results would be lost with an exit status of 0. Checked once
/// before exit, the loss becomes a message and a failure.
enum StandardOutput {
    struct WriteError: Error, CustomStringConvertible {
        let reason: String
        var description: String { "cannot write to standard output: \(reason)" }
    }

    /// Flushes what is buffered and throws if it cannot be written. glibc keeps the bytes of a failed write in
    /// the buffer, so a failure earlier in the run fails again here. (`fflush(nil)`: every output stream, since
    /// Swift 6 cannot name C's `stdout` variable safely; the command's other streams are closed by now.)
    static func finish() throws {
        if fflush(nil) != 0 {
            throw WriteError(reason: String(cString: strerror(errno)))
        }
    }
}
