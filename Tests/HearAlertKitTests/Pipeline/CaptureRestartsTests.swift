import Foundation
import Testing
@testable import HearAlertKit

/// The plumbing from a lost capture device to `AlertDetector.restartStream`: the processing loop's follower must
/// restart the detector at exactly the ring sample the capture side published, whatever the block size, once per
/// loss and in order when several wait, never without one, and at once when the audio stops at the break (the
/// device has not come back yet). CaptureRestartQueueTests holds the queue itself (order, overflow, two threads).
@Suite struct CaptureRestartsTests {
    typealias Run = (decisions: [DetectorParityTests.Decision], messages: [AlertMessage])

    static func model() throws -> AlertModel { try StartPaddingTests.model("tone_model_padded.safetensors") }
    /// Siren sounding at the reopening (2.5 s), then a clip that begins mid-siren.
    static let audio = Array(try! DetectorRestartTests.clip("alerts_clip.wav")[0..<40_000])
        + (try! DetectorRestartTests.clip("alarm_at_start.wav"))

    /// Feeds `audio` in blocks of `block` samples through a follower; `publish` is called with the restarts
    /// object and the ring position of the next block, before the block is read (as the capture thread would
    /// publish while the loop runs, a few blocks ahead of it).
    static func follow(block: Int, publish: (CaptureRestarts, Int) -> Void) throws -> Run {
        var decisions: [DetectorParityTests.Decision] = []
        let model = try Self.model()
        let detector = try AlertDetector(model: model, settings: try TrackerSettings(model: model)) {
            decisions.append(($0.decisionTime, $0.streamTime, Array($0.scores)))
        }
        let restarts = CaptureRestarts()
        var follower = CaptureStreamFollower(restarts: restarts)
        var messages: [AlertMessage] = []
        try audio.withUnsafeBufferPointer { all in
            for start in stride(from: 0, to: all.count, by: block) {
                publish(restarts, start)
                try follower.deliver(UnsafeBufferPointer(rebasing: all[start..<min(all.count, start + block)]),
                                     to: detector) { messages.append($0) }
            }
        }
        detector.finish { messages.append($0) }
        return (decisions, messages)
    }

    /// What the detector does when told directly: the audio up to `sample`, a restart, the rest.
    static func restartedAt(_ sample: Int) throws -> Run {
        let run = try DetectorRestartTests.runWithRestart(try Self.model(), before: Array(audio[..<sample]),
                                                          after: Array(audio[sample...]))
        return (run.decisions, run.before + run.atRestart + run.after)
    }

    /// The same with a restart at each of `samples` (ascending), the audio fed one hop at a time between them.
    static func restartedAt(_ samples: [Int]) throws -> Run {
        let model = try Self.model()
        var decisions: [DetectorParityTests.Decision] = []
        let detector = try AlertDetector(model: model, settings: try TrackerSettings(model: model)) {
            decisions.append(($0.decisionTime, $0.streamTime, Array($0.scores)))
        }
        var messages: [AlertMessage] = []
        let hop = model.featureSpec.hopLength
        let bounds = [0] + samples + [audio.count]
        try audio.withUnsafeBufferPointer { all in
            for (index, (from, to)) in zip(bounds, bounds.dropFirst()).enumerated() {
                if index > 0 { detector.restartStream { messages.append($0) } }
                for start in stride(from: from, to: to, by: hop) {
                    try detector.process(UnsafeBufferPointer(rebasing: all[start..<min(to, start + hop)])) {
                        messages.append($0)
                    }
                }
            }
        }
        detector.finish { messages.append($0) }
        return (decisions, messages)
    }

    static func expectSame(_ found: Run, _ want: Run, _ name: String) {
        #expect(found.messages == want.messages, "\(name): messages")
        #expect(found.decisions.count == want.decisions.count, "\(name): decision count")
        // The first differing decision says where the runs part; the rest would only repeat it.
        let differing = zip(found.decisions, want.decisions).first { got, expected in
            got.streamTime != expected.streamTime || got.decisionTime != expected.decisionTime
                || got.scores != expected.scores
        }
        #expect(differing == nil, "\(name): decision at \(differing?.0.streamTime ?? 0)")
    }

    /// Periods of 37 samples (no divisor of anything) and of 32 (the default 2 ms at 16 kHz); the audio breaks at
    /// ring sample 40 000 (mid-block for 37), published while the loop is still a few blocks behind.
    @Test(arguments: [37, 32])
    func theDetectorRestartsAtThePublishedSample(block: Int) throws {
        let found = try Self.follow(block: block) { restarts, next in
            if next <= 40_000 && next + 4 * block > 40_000 { restarts.streamBreaks(atSample: 40_000) }
        }
        let want = try Self.restartedAt(40_000)
        Self.expectSame(found, want, "block \(block)")
        #expect(found.messages.filter { $0.typeName == "alert_end" && $0.label == "siren" }.first?.streamTime == 2.5)
    }

    /// The device lost twice while the loop lags behind both losses: both breaks wait when the loop reaches the
    /// first, and the detector restarts at each, in order (1.875 s, mid-siren, then 2.5 s), not once at the later.
    @Test(arguments: [37, 32])
    func twoBreaksQueuedBeforeTheLoopReadsRestartAtEach(block: Int) throws {
        let found = try Self.follow(block: block) { restarts, next in
            if next == 0 {
                restarts.streamBreaks(atSample: 30_000)
                restarts.streamBreaks(atSample: 40_000)
            }
        }
        Self.expectSame(found, try Self.restartedAt([30_000, 40_000]), "block \(block)")
        let sirenEnds = found.messages.filter { $0.typeName == "alert_end" && $0.label == "siren" }
        #expect(sirenEnds.first?.streamTime == 1.875, "the first break ends the siren sounding there")
        // The two restarts differ from one at the later break: the comparison above can tell them apart.
        #expect(try Self.restartedAt([30_000, 40_000]).messages != Self.restartedAt([40_000]).messages)
    }

    /// Published exactly at a block's end: the restart comes before the next block, not within this one.
    @Test func aStartAtABlockBoundaryRestartsBeforeTheNextBlock() throws {
        let found = try Self.follow(block: 400) { restarts, next in
            if next == 39_600 { restarts.streamBreaks(atSample: 40_000) }
        }
        Self.expectSame(found, try Self.restartedAt(40_000), "boundary")
    }

    /// Without a loss, or with one before any audio (ring position 0, where listening starts anyway), the audio is
    /// one stream; a break published again and again is acted on once.
    @Test func noLossNoRestartAndEachLossOnce() throws {
        var plain: [AlertMessage] = []
        let model = try Self.model()
        let detector = try AlertDetector(model: model, settings: try TrackerSettings(model: model))
        try Self.audio.withUnsafeBufferPointer { try detector.process($0) { plain.append($0) } }
        detector.finish { plain.append($0) }

        #expect(try Self.follow(block: 32) { _, _ in }.messages == plain)
        #expect(try Self.follow(block: 32) { restarts, _ in restarts.streamBreaks(atSample: 0) }.messages == plain)
        let repeated = try Self.follow(block: 32) { restarts, next in
            if next >= 20_000 { restarts.streamBreaks(atSample: 20_000) }
        }
        Self.expectSame(repeated, try Self.restartedAt(20_000), "published again and again")
    }

    /// The device is lost right after the audio up to 2.5 s (the siren sounding) and stays away: while the loop
    /// waits for audio, the siren's alert ends at 2.5 s, before the device returns; when it does, its audio is a
    /// new stream, exactly as if the detector had been told directly.
    @Test func aLostDeviceEndsTheSoundingAlertWithoutWaitingForItsReturn() throws {
        let model = try Self.model()
        var decisions: [DetectorParityTests.Decision] = []
        let detector = try AlertDetector(model: model, settings: try TrackerSettings(model: model)) {
            decisions.append(($0.decisionTime, $0.streamTime, Array($0.scores)))
        }
        let restarts = CaptureRestarts()
        var follower = CaptureStreamFollower(restarts: restarts)
        var messages: [AlertMessage] = []
        try Self.audio.withUnsafeBufferPointer { all in
            let deliver = { (range: Range<Int>) in
                for start in stride(from: range.lowerBound, to: range.upperBound, by: 32) {
                    try follower.deliver(UnsafeBufferPointer(rebasing: all[start..<min(range.upperBound, start + 32)]),
                                         to: detector) { messages.append($0) }
                }
            }
            try deliver(0..<40_000)
            follower.catchUp(detector: detector) { messages.append($0) }  // idle, nothing published: nothing
            #expect(messages.map(\.typeName) == ["alert_start"])
            restarts.streamBreaks(atSample: 40_000)
            follower.catchUp(detector: detector) { messages.append($0) }
            #expect(messages.count == 2 && messages.last?.typeName == "alert_end" && messages.last?.streamTime == 2.5)
            follower.catchUp(detector: detector) { messages.append($0) }  // once only
            try deliver(40_000..<all.count)
        }
        detector.finish { messages.append($0) }
        Self.expectSame((decisions, messages), try Self.restartedAt(40_000), "lost at 2.5 s")
    }
}
