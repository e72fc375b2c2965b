import Foundation

/// A tracker message as sinks receive it: with the stream it came from and the wall-clock time it was emitted.
public struct AlertReport: Sendable, Equatable {
    /// What happened (start or end, label, score, stream times).
    public var message: AlertMessage
    /// The capture device name (live) or the file path (offline).
    public var source: String
    /// When HearAlert emitted the message; for live listening, the moment the person was told.
    public var time: Date

    /// `time` defaults to now: a report is made when its message is emitted.
    public init(message: AlertMessage, source: String, time: Date = Date()) {
        self.message = message
        self.source = source
        self.time = time
    }

    /// ISO 8601 with milliseconds, UTC (`2026-11-21T09:00:00.123Z`).
    public var isoTime: String {
        time.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// Something that acts on alerts: prints them, runs a hook, pops up a notification.
///
/// Sinks run on the dispatcher's own thread, never on the audio path, so they may be slow; they must not throw
/// (a failing sink reports its trouble as a diagnostic and carries on).
public protocol AlertSink: AnyObject {
    /// Called on the dispatcher's sink thread for each message, in order; may be slow, never on the audio path.
    func deliver(_ report: AlertReport)
    /// Called once when the stream ends: write out anything buffered, wait briefly for work in flight.
    func finish()
}
