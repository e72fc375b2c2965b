import Foundation
import Testing
@testable import HearAlertKit

/// `CaptureRestarts` as a queue between the capture thread and the processing loop: every break comes out once,
/// in order, only when the audio read reaches it; past `capacity` waiting breaks the later ones are coalesced into
/// the latest (counted), and the order still holds, also with the two sides on two threads.
@Suite struct CaptureRestartQueueTests {
    static func takeAll(_ restarts: CaptureRestarts, before limit: Int = .max) -> [Int] {
        var taken: [Int] = []
        while let position = restarts.takeBreak(before: limit) { taken.append(position) }
        return taken
    }

    @Test func breaksComeOutInOrderWhenTheAudioReachesThem() {
        let restarts = CaptureRestarts()
        for position in [0, 100, 100, 250, 400] { restarts.streamBreaks(atSample: position) }
        #expect(Self.takeAll(restarts, before: 100).isEmpty, "no break lies before sample 100")
        #expect(Self.takeAll(restarts, before: 251) == [100, 250], "0 is the start, 100 came twice: one break")
        #expect(Self.takeAll(restarts) == [400])
        #expect(Self.takeAll(restarts).isEmpty && restarts.coalescedBreaks == 0)
    }

    @Test func aFullQueueCoalescesLaterBreaksIntoTheLatest() {
        let restarts = CaptureRestarts()
        let published = (1...(CaptureRestarts.capacity + 4)).map { $0 * 1_000 }
        for position in published { restarts.streamBreaks(atSample: position) }
        #expect(Self.takeAll(restarts) == Array(published.prefix(CaptureRestarts.capacity)) + [published.last!])
        #expect(restarts.coalescedBreaks == 3)
        // Room again: breaks queue one by one as before.
        restarts.streamBreaks(atSample: 100_000)
        restarts.streamBreaks(atSample: 101_000)
        #expect(Self.takeAll(restarts) == [100_000, 101_000] && restarts.coalescedBreaks == 3)
    }

    /// A slot freed while a coalesced break waits must not let a newer break overtake it.
    @Test func aBreakWaitingPastTheQueueIsNotOvertaken() {
        let restarts = CaptureRestarts()
        for position in 1...(CaptureRestarts.capacity + 1) { restarts.streamBreaks(atSample: position) }
        #expect(restarts.takeBreak(before: .max) == 1)
        restarts.streamBreaks(atSample: 1_000)
        #expect(Self.takeAll(restarts) == Array(2...CaptureRestarts.capacity) + [1_000])
        #expect(restarts.coalescedBreaks == 1)
    }

    /// The capture thread publishing while the loop takes: every break is taken or counted as coalesced, and the
    /// taken ones come out in ascending order.
    @Test func twoThreadsKeepOrderAndLoseNothingUncounted() {
        let restarts = CaptureRestarts()
        let count = 50_000
        let publisher = Thread {
            for position in 1...count { restarts.streamBreaks(atSample: position) }
        }
        publisher.start()
        var taken: [Int] = []
        while taken.last != count {
            if let position = restarts.takeBreak(before: .max) { taken.append(position) }
        }
        #expect(zip(taken, taken.dropFirst()).allSatisfy { $0 < $1 }, "out of order")
        #expect(taken.count + restarts.coalescedBreaks == count)
    }
}
