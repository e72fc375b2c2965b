import Testing
@testable import HearAlertKit

/// The rate limiter driven by a hand-made clock: the expected lines follow from the rule (first at once, then at
/// most one per interval, counting what happened in between), worked out by hand.
@Suite struct ReportRateLimiterTests {
    @Test func firstOccurrenceAtOnceThenOneSummaryPerInterval() {
        var limiter = ReportRateLimiter(interval: 10)
        #expect(limiter.due(total: 0, now: 0) == nil)  // nothing happened yet
        let first = limiter.due(total: 1, now: 0.1)
        #expect(first?.count == 1 && first?.seconds == nil)
        // 36 more within the next 10 s: held back …
        #expect(limiter.due(total: 20, now: 5) == nil)
        #expect(limiter.due(total: 37, now: 10.0) == nil)
        // … and told together once 10 s have passed since the first line.
        let second = limiter.due(total: 37, now: 10.1)
        #expect(second?.count == 36 && second?.seconds == 10.0)
        // Quiet for a while: no line, and the next occurrence is told at once with the real span.
        #expect(limiter.due(total: 37, now: 30) == nil)
        let third = limiter.due(total: 40, now: 35.1)
        #expect(third?.count == 3 && third?.seconds == 25.0)
    }

    @Test func forceTellsWhatIsLeftAtShutdown() {
        var limiter = ReportRateLimiter(interval: 10)
        _ = limiter.due(total: 1, now: 0)
        #expect(limiter.due(total: 5, now: 2) == nil)
        let last = limiter.due(total: 5, now: 2, force: true)
        #expect(last?.count == 4 && last?.seconds == 2)
        #expect(limiter.due(total: 5, now: 3, force: true) == nil)  // nothing new: nothing to say
    }

    @Test func deviceFactsReadAsSentences() {
        let events = DeviceEvents(role: "capture", device: "hw:1")
        let facts = events.facts
        events.overflows.add(37, ordering: .relaxed)
        events.droppedSamples.add(5920, ordering: .relaxed)
        #expect(facts[3].describe(37, 10) == "processing fell behind 37 times in the last 10 s: 5920 captured samples dropped")
        events.droppedSamples.add(160, ordering: .relaxed)
        #expect(facts[3].describe(1, nil) == "processing fell behind: 160 captured samples dropped")
        events.recordLoss(.deviceLost(device: "hw:1", reason: "No such device"), retryIn: 0.5)
        #expect(facts[0].describe(1, nil) == "audio device 'hw:1' stopped working: No such device; reopening in 0.5 s")
        #expect(facts[2].describe(12, 10.2) == "capture overruns on 'hw:1' repaired: 12 in the last 10 s")
    }

    @Test func coalescedCaptureBreaksAreCountedAndPutIntoWords() {
        // More breaks than the queue holds, none taken: the ones past its capacity are coalesced, and the
        // capture side's last fact counts them for the reporter.
        let events = DeviceEvents(role: "capture", device: "hw:1")
        let coalesced = events.facts[4]
        for loss in 1...(CaptureRestarts.capacity + 3) { events.restarts.streamBreaks(atSample: loss * 8000) }
        #expect(coalesced.total() == 2)
        #expect(coalesced.describe(1, nil) == "the capture device was lost again while processing was far behind: "
                + "the detector restarts once, at the latest loss")
        #expect(coalesced.describe(2, 9.6) == "the capture device was lost again while processing was far behind, "
                + "2 times in the last 10 s: the detector restarted once for them, at the latest loss")
        #expect(DeviceEvents(role: "playback", device: "hw:0").facts.count == 4)
    }

    @Test func headphoneAudioSkippedForDelayIsToldToo() {
        // The playback side drops what piled up beyond the delay it allows: a gap the person hears, so it is said.
        let events = DeviceEvents(role: "playback", device: "hw:0")
        let skipped = events.facts[3]
        events.overflows.add(2, ordering: .relaxed)
        events.droppedSamples.add(96, ordering: .relaxed)
        #expect(skipped.total() == 2)
        #expect(skipped.describe(2, 9.8) == "headphone audio skipped to keep the delay short, 2 times in the last "
                + "10 s: 96 samples")
        events.droppedSamples.add(32, ordering: .relaxed)
        #expect(skipped.describe(1, nil) == "headphone audio skipped to keep the delay short: 32 samples")
    }
}
