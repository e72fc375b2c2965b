import Foundation
import Synchronization

/// Writes each alert as one line to a file handle (normally standard output) in JSON Lines or text.
///
/// Each line goes out in a single `write`, so a program reading the pipe sees whole messages as they happen.
/// Only started and ended messages are written; TSV is not a streaming format (see `detect`).
public final class StreamSink: AlertSink {
    private let handle: FileHandle
    private let format: AlertFormat
    private let colour: Bool
    private let diagnostics: Diagnostics
    private let lostLines = Atomic<Int>(0)

    /// `colour` applies to `.text` only; pass `StreamSink.isColourTerminal(_:)` for the usual rule. A line that
    /// cannot be written (a full disk, a closed pipe) is reported to `diagnostics`, never dropped in silence.
    public init(handle: FileHandle = .standardOutput, format: AlertFormat, colour: Bool = false,
                diagnostics: Diagnostics = .standardError) {
        precondition(format != .tsv, "TSV lists finished events; write it with AlertLineFormatter.tsvLine")
        self.handle = handle
        self.format = format
        self.colour = colour
        self.diagnostics = diagnostics
    }

    public func deliver(_ report: AlertReport) {
        let line = format == .jsonl
            ? AlertLineFormatter.jsonLine(report) : AlertLineFormatter.textLine(report, colour: colour)
        do {
            try handle.write(contentsOf: Data((line + "\n").utf8))
        } catch {
            let lost = lostLines.add(1, ordering: .relaxed).newValue
            // Once, not per line: a broken output stays broken, and stderr may be the same full disk.
            if lost == 1 { diagnostics.report("cannot write alerts to the output (\(error.localizedDescription))") }
        }
    }

    /// Says how many alert lines were lost, if any, so a person reading stderr knows the list is incomplete.
    public func finish() {
        let lost = lostLineCount
        if lost > 1 { diagnostics.report("\(lost) alert lines could not be written to the output") }
    }

    /// Alert lines that could not be written: a listener that lost any must end with a failure.
    public var lostLineCount: Int { lostLines.load(ordering: .relaxed) }

    /// Colour only on a terminal, and never when `NO_COLOR` is set or `TERM` is `dumb` (no-color.org).
    public static func isColourTerminal(_ handle: FileHandle) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        return isatty(handle.fileDescriptor) == 1 && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
    }
}
