import Foundation

/// Why live listening ended badly after it had started.
public enum LiveListenerError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// The last alerts were still not written after this many seconds at shutdown.
    case outputNotFlushed(seconds: Double)

    public var description: String {
        switch self {
        case .outputNotFlushed(let seconds):
            "output could not be flushed within \(seconds) s (is the program reading standard output stuck?); "
                + "the last alerts may be lost"
        }
    }

    public var errorDescription: String? { description }
}
