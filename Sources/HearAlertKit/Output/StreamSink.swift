import Foundation

/// Writes each alert as one line to a file handle (normally standard output) in JSON Lines or text.
///
/// Each line goes out in a single `write`, so a program reading the pipe sees whole messages as they happen.
/// Only started and ended messages are written; TSV is not a streaming format (see `detect`).
public final class StreamSink: AlertSink {
    private let handle: FileHandle
    private let format: AlertFormat
    private let colour: Bool

    /// `colour` applies to `.text` only; pass `StreamSink.isColourTerminal(_:)` for the usual rule.
    public init(handle: FileHandle = .standardOutput, format: AlertFormat, colour: Bool = false) {
        precondition(format != .tsv, "TSV lists finished events; write it with AlertLineFormatter.tsvLine")
        self.handle = handle
        self.format = format
        self.colour = colour
    }

    public func deliver(_ report: AlertReport) {
        let line = format == .jsonl
            ? AlertLineFormatter.jsonLine(report) : AlertLineFormatter.textLine(report, colour: colour)
        try? handle.write(contentsOf: Data((line + "\n").utf8))
    }

    public func finish() {}

    /// Colour only on a terminal, and never when `NO_COLOR` is set or `TERM` is `dumb` (no-color.org).
    public static func isColourTerminal(_ handle: FileHandle) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        return isatty(handle.fileDescriptor) == 1 && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
    }
}
