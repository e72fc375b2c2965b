import Dispatch
import Foundation

/// The sink queue: hands alerts from the processing thread to the sinks on a thread of their own.
///
/// `post` only enqueues, so a slow terminal, file or hook can never hold up audio processing. Messages reach
/// every sink in the order they were posted.
public final class AlertDispatcher: @unchecked Sendable {
    // @unchecked: `sinks` is fixed at init and only ever touched on `queue`, a serial queue.
    private let queue = DispatchQueue(label: "hearalert.sinks")
    private let sinks: [any AlertSink]
    private let source: String

    /// `source` (the device name or file path) is stamped on every report, as the `source` JSON field.
    public init(sinks: [any AlertSink], source: String) {
        self.sinks = sinks
        self.source = source
    }

    /// Queues `message` for every sink and returns at once (stamped with the current wall-clock time).
    public func post(_ message: AlertMessage) {
        let report = AlertReport(message: message, source: source)
        queue.async { [self] in
            for sink in sinks { sink.deliver(report) }
        }
    }

    /// Waits until every posted message has been delivered, then lets each sink finish its work in flight.
    public func finish() {
        finish(waitingAtMost: .infinity)
    }

    /// As `finish()`, but gives up after `seconds` and returns false: a reader of standard output that is stuck
    /// (a paused pipeline) must not make shutdown hang. The sink thread is then left blocked until exit.
    @discardableResult
    public func finish(waitingAtMost seconds: Double) -> Bool {
        let finished = DispatchSemaphore(value: 0)
        queue.async { [self] in
            for sink in sinks { sink.finish() }
            finished.signal()
        }
        guard seconds.isFinite else {
            finished.wait()
            return true
        }
        return finished.wait(timeout: .now() + seconds) == .success
    }
}
