import Testing
@testable import HearAlertKit

/// Expected events are worked out by hand from the score sequences and the rules in EventTracker's documentation.
@Suite struct EventTrackerTests {
    /// Decisions every 0.1 s; a decision at index i describes time i·0.1 and becomes possible at i·0.1 + 0.5.
    static let step = 0.1
    static let delay = 0.5

    struct Emitted: Equatable {
        var index: Int
        var message: AlertMessage
    }

    static func run(_ settings: TrackerSettings, _ scores: [[Float]], finishAt: Double? = nil) -> [Emitted] {
        var tracker = EventTracker(settings: settings)
        var emitted: [Emitted] = []
        for (index, row) in scores.enumerated() {
            row.withUnsafeBufferPointer { buffer in
                tracker.update(scores: buffer, decisionTime: Double(index) * step,
                               streamTime: Double(index) * step + delay) { emitted.append(Emitted(index: index, message: $0)) }
            }
        }
        if let finishAt {
            tracker.finish(streamTime: finishAt) { emitted.append(Emitted(index: scores.count, message: $0)) }
        }
        return emitted
    }

    /// `count` decisions of `value` for a one-label model.
    static func hold(_ value: Float, _ count: Int) -> [[Float]] { Array(repeating: [value], count: count) }

    static func settings(
        smoothing: Int = 1, offRatio: Float = 0.5, minDuration: Double = 0, mergeGap: Double = 1, cooldown: Double = 0
    ) throws -> TrackerSettings {
        try TrackerSettings(labels: ["smoke_alarm"], thresholds: [0.5], tuning: .init(smoothingFrames: smoothing,
            offRatio: offRatio, minDuration: minDuration, mergeGap: mergeGap, cooldown: cooldown))
    }

    @Test func beepingAlarmIsOneEventAndStartIsNotDelayedByMerging() throws {
        // Three beeps: 0.5 s on, 0.5 s off (decisions 0-4 on, 5-9 off, ...), then silence.
        let beep = Self.hold(0.9, 5) + Self.hold(0.1, 5)
        let emitted = Self.run(try Self.settings(), beep + beep + beep + Self.hold(0.1, 20))
        #expect(emitted.count == 2)
        #expect(emitted.first == Emitted(index: 0, message: .started(label: "smoke_alarm", score: 0.9, onset: 0,
                                                                     detectedAt: 0.5)))
        // Last beep ends at decision 25 (t = 2.5); the end waits until t - 2.5 >= 1 s, i.e. decision 35.
        guard case .ended(let event)? = emitted.last?.message else { Issue.record("no end"); return }
        #expect(emitted.last?.index == 35)
        #expect(abs(event.onset - 0) < 1e-9 && abs(event.offset - 2.5) < 1e-9)
        #expect(event.detectedAt == 0.5 && event.peakScore == 0.9)
    }

    @Test func pauseLongerThanMergeGapSplitsEvents() throws {
        let scores = Self.hold(0.9, 5) + Self.hold(0.1, 12) + Self.hold(0.9, 5) + Self.hold(0.1, 15)
        let starts = Self.run(try Self.settings(), scores).filter { $0.message.isStart }
        #expect(starts.map(\.index) == [0, 17])
    }

    @Test func blipShorterThanMinimumDurationIsDropped() throws {
        let blip = Self.run(try Self.settings(minDuration: 0.3), Self.hold(0.9, 3) + Self.hold(0.1, 20))
        #expect(blip.isEmpty)
        // Four decisions span 0.3 s: announced at the fourth, with the onset of the first.
        let long = Self.run(try Self.settings(minDuration: 0.3), Self.hold(0.9, 4) + Self.hold(0.1, 20))
        #expect(long.first?.index == 3)
        #expect(long.first?.message == .started(label: "smoke_alarm", score: 0.9, onset: 0, detectedAt: 0.8))
    }

    @Test func hysteresisKeepsAHoveringScoreOn() throws {
        // Threshold 0.5, off at 0.25: 0.6/0.3 alternation never falls below the off-threshold.
        let hovering = (0..<30).map { [$0.isMultiple(of: 2) ? Float(0.6) : 0.3] }
        let emitted = Self.run(try Self.settings(mergeGap: 0), hovering + Self.hold(0.0, 3))
        #expect(emitted.map(\.message.typeName) == ["alert_start", "alert_end"])
        guard case .ended(let event)? = emitted.last?.message else { return }
        #expect(abs(event.offset - 3.0) < 1e-9)
    }

    @Test func smoothingAveragesDecisionsAndTheirTimes() throws {
        // A single spike averaged over three decisions (1/3) stays below 0.5.
        #expect(Self.run(try Self.settings(smoothing: 3), Self.hold(0, 5) + Self.hold(1, 1) + Self.hold(0, 5)).isEmpty)
        // Two high decisions average to 2/3 once both are in the window; the stamp is the mean of the three times.
        let emitted = Self.run(try Self.settings(smoothing: 3), Self.hold(0, 5) + Self.hold(1, 2) + Self.hold(0, 10))
        #expect(emitted.first?.index == 6)
        guard case .started(_, let score, let onset, _)? = emitted.first?.message else { return }
        #expect(abs(score - 2.0 / 3.0) < 1e-6)
        #expect(abs(onset - 0.5) < 1e-9)  // mean of 0.4, 0.5, 0.6
    }

    @Test func cooldownDelaysTheNextStartButDoesNotLoseALastingSound() throws {
        // First sound 0-0.4 (off at 0.5), end at 1.5; cooldown 3 s from the offset blocks starts before t = 3.5.
        let scores = Self.hold(0.9, 5) + Self.hold(0.1, 15) + Self.hold(0.9, 20) + Self.hold(0.1, 15)
        let starts = Self.run(try Self.settings(cooldown: 3), scores).filter { $0.message.isStart }
        #expect(starts.map(\.index) == [0, 35])
        // A sound that stops inside the cooldown never starts an event.
        let short = Self.hold(0.9, 5) + Self.hold(0.1, 15) + Self.hold(0.9, 5) + Self.hold(0.1, 20)
        #expect(Self.run(try Self.settings(cooldown: 3), short).filter { $0.message.isStart }.count == 1)
    }

    @Test func labelsAreTrackedIndependently() throws {
        let settings = try TrackerSettings(labels: ["siren", "doorbell"], thresholds: [0.5, 0.8],
            tuning: .init(smoothingFrames: 1, offRatio: 0.5, minDuration: 0, mergeGap: 0.2, cooldown: 0))
        let scores: [[Float]] = Array(repeating: [0.9, 0.7], count: 5) + Array(repeating: [0.1, 0.9], count: 5)
            + Array(repeating: [0.1, 0.1], count: 5)
        let emitted = Self.run(settings, scores)
        #expect(emitted.map { "\($0.index) \($0.message.typeName) \($0.message.label)" } == [
            "0 alert_start siren", "5 alert_start doorbell", "7 alert_end siren", "12 alert_end doorbell",
        ])
    }

    @Test func finishClosesOpenEventsAndDropsUnconfirmedOnes() throws {
        let settings = try TrackerSettings(labels: ["siren", "doorbell"], thresholds: [0.5, 0.5],
            tuning: .init(smoothingFrames: 1, offRatio: 0.5, minDuration: 0.5, mergeGap: 1, cooldown: 0))
        // siren sounds throughout; doorbell rises only in the last two decisions (not yet 0.5 s).
        let scores: [[Float]] = Array(repeating: [0.9, 0.1], count: 10) + Array(repeating: [0.9, 0.9], count: 2)
        let emitted = Self.run(settings, scores, finishAt: 1.7)
        #expect(emitted.map(\.message.typeName) == ["alert_start", "alert_end"])
        #expect(emitted.last?.message == .ended(AlertEvent(label: "siren", onset: 0, offset: 1.7, detectedAt: 1.0,
                                                           peakScore: 0.9)))
    }

    @Test func announcedCountFollowsStartsAndEnds() throws {
        var tracker = EventTracker(settings: try Self.settings(minDuration: 0.05, mergeGap: 0))
        let high: [Float] = [0.9], low: [Float] = [0.1]
        high.withUnsafeBufferPointer { tracker.update(scores: $0, decisionTime: 0, streamTime: 0) { _ in } }
        #expect(tracker.announcedAlertCount == 0 && tracker.isAnyAlertPossible)  // rising, not yet confirmed
        high.withUnsafeBufferPointer { tracker.update(scores: $0, decisionTime: 0.1, streamTime: 0.1) { _ in } }
        #expect(tracker.announcedAlertCount == 1)
        low.withUnsafeBufferPointer { tracker.update(scores: $0, decisionTime: 0.2, streamTime: 0.2) { _ in } }
        low.withUnsafeBufferPointer { tracker.update(scores: $0, decisionTime: 0.3, streamTime: 0.3) { _ in } }
        #expect(tracker.announcedAlertCount == 0 && !tracker.isAnyAlertPossible)
    }
}
