import Dispatch
import Foundation
import Synchronization
import Testing
@testable import HearAlertKit

/// Shutdown of the sink queue: complete when the sinks keep up, bounded when one is stuck.
@Suite struct AlertDispatcherTests {
    /// Records what it is given; optionally blocks in `deliver` until released, like a write to a stuck pipe.
    final class RecordingSink: AlertSink, @unchecked Sendable {
        // @unchecked: `labels` is only touched on the dispatcher's serial queue and read after it finished.
        let release: DispatchSemaphore?
        var labels: [String] = []
        var finished = false

        init(blocking: Bool) {
            release = blocking ? DispatchSemaphore(value: 0) : nil
        }

        func deliver(_ report: AlertReport) {
            release?.wait()
            labels.append(report.message.label)
        }

        func finish() { finished = true }
    }

    static let message = AlertMessage.started(label: "siren", score: 0.9, onset: 1, detectedAt: 1.2)

    @Test func finishDeliversEverythingWhenTheSinksKeepUp() {
        let sink = RecordingSink(blocking: false)
        let dispatcher = AlertDispatcher(sinks: [sink], source: "test")
        for _ in 0..<3 { dispatcher.post(Self.message) }
        #expect(dispatcher.finish(waitingAtMost: 30))
        #expect(sink.labels == ["siren", "siren", "siren"] && sink.finished)
    }

    @Test func finishGivesUpOnAStuckSink() {
        let sink = RecordingSink(blocking: true)
        let dispatcher = AlertDispatcher(sinks: [sink], source: "test")
        dispatcher.post(Self.message)
        // The sink never returns until released, so an unbounded wait would never end; this one must.
        #expect(dispatcher.finish(waitingAtMost: 0.2) == false)
        sink.release?.signal()
        #expect(dispatcher.finish(waitingAtMost: 30))  // once unstuck, the queue drains as usual
    }
}
