import Foundation

/// Where warnings for the person go (a lost device, a failed hook): standard error by default, never stdout,
/// which carries only alerts. Tests capture them instead.
public struct Diagnostics: Sendable {
    private let sink: @Sendable (String) -> Void

    /// A destination of your own (tests collect the lines); it may be called from any thread.
    public init(_ sink: @escaping @Sendable (String) -> Void) {
        self.sink = sink
    }

    /// Prefixes each message with `hearalert:` and writes it to standard error as one line.
    public static let standardError = Diagnostics { message in
        try? FileHandle.standardError.write(contentsOf: Data("hearalert: \(message)\n".utf8))
    }

    /// Hands one line (no trailing newline) to the destination.
    public func report(_ message: String) {
        sink(message)
    }
}
