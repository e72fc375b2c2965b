import Foundation
import Testing
@testable import HearAlertKit

/// `onset_rise_ratio`: onsets stamped where the score's rise began. The unit cases are worked by hand on
/// `EventTrackerTests.run`'s clock (decision i describes i·0.1 s and is possible at i·0.1 + 0.5 s; threshold 0.5,
/// so the rise level at ratio 0.5 is 0.25); the fixture cases are the research mirror's events
/// (tools/fixtures/make_tracker_fixtures.py), which the host must reproduce exactly.
@Suite struct OnsetRiseTests {
    typealias Emitted = EventTrackerTests.Emitted

    static func settings(
        ratio: Float?, minDuration: Double = 0, mergeGap: Double = 1, cooldown: Double = 0
    ) throws -> TrackerSettings {
        try TrackerSettings(labels: ["smoke_alarm"], thresholds: [0.5], tuning: .init(smoothingFrames: 1,
            offRatio: 0.5, minDuration: minDuration, mergeGap: mergeGap, cooldown: cooldown, onsetRiseRatio: ratio))
    }

    /// The starts among `emitted`: decision index, onset and announcement time.
    static func starts(_ emitted: [Emitted]) -> [(index: Int, onset: Double, detectedAt: Double)] {
        emitted.compactMap { item in
            guard case .started(_, _, let onset, let detectedAt) = item.message else { return nil }
            return (item.index, onset, detectedAt)
        }
    }

    static func hold(_ value: Float, _ count: Int) -> [[Float]] { EventTrackerTests.hold(value, count) }

    @Test func slowlyRisingScoreGetsItsOnsetWhereTheRiseBegan() throws {
        // At the rise level (0.25) from decision 2, over the threshold from decision 5.
        let scores = Self.hold(0.1, 2) + [[0.25], [0.4], [0.45]] + Self.hold(0.7, 4) + Self.hold(0.1, 15)
        let rising = Self.starts(EventTrackerTests.run(try Self.settings(ratio: 0.5), scores))
        let crossing = Self.starts(EventTrackerTests.run(try Self.settings(ratio: nil), scores))
        #expect(rising.count == 1 && crossing.count == 1)
        #expect(rising.first?.index == 5 && abs((rising.first?.onset ?? -1) - 0.2) < 1e-9)
        #expect(abs((crossing.first?.onset ?? -1) - 0.5) < 1e-9)
        #expect(rising.first?.detectedAt == crossing.first?.detectedAt)  // the announcement is not delayed
    }

    @Test func onsetIsAtMostTheLookbackBeforeTheCrossing() throws {
        // A near-miss at 0.3 for 2 s, then over the threshold at 2.0 s.
        let scores = Self.hold(0.3, 20) + Self.hold(0.9, 4) + Self.hold(0.1, 15)
        let starts = Self.starts(EventTrackerTests.run(try Self.settings(ratio: 0.5), scores))
        #expect(starts.count == 1 && starts.first?.index == 20)
        #expect(abs((starts.first?.onset ?? -1) - (2.0 - TrackerSettings.Partial.fallback.onsetRiseLookback!)) < 1e-9)
    }

    @Test func aRunBrokenBelowTheRiseLevelStartsAgain() throws {
        // 0.3 at 0-0.2 s, 0.1 at 0.3-0.5 s, 0.3 again from 0.6 s, over the threshold at 0.8 s.
        let scores = Self.hold(0.3, 3) + Self.hold(0.1, 3) + Self.hold(0.3, 2) + Self.hold(0.9, 3) + Self.hold(0.1, 15)
        let starts = Self.starts(EventTrackerTests.run(try Self.settings(ratio: 0.5), scores))
        #expect(starts.count == 1 && abs((starts.first?.onset ?? -1) - 0.6) < 1e-9)
    }

    @Test func onsetIsNeverInsideTheCooldown() throws {
        // Event 0-0.1 s, offset 0.2, ended at 0.5 (merge gap 0.25): cooldown until 1.2. The next rise begins at
        // 0.6, inside the cooldown, and crosses at 1.4: stamped at the cooldown's end, not at 0.6.
        let scores = Self.hold(0.9, 2) + Self.hold(0.1, 4) + Self.hold(0.3, 8) + Self.hold(0.9, 4) + Self.hold(0.1, 15)
        let starts = Self.starts(EventTrackerTests.run(
            try Self.settings(ratio: 0.5, mergeGap: 0.25, cooldown: 1), scores))
        #expect(starts.count == 2 && starts.last?.index == 14)
        #expect(abs((starts.last?.onset ?? -1) - 1.2) < 1e-9)
    }

    @Test func minimumDurationCountsFromTheCrossingNotTheStampedOnset() throws {
        // Rise level from 0, crossing at 0.5; two decisions over (0.1 s past the crossing) are a blip for a
        // 0.25 s minimum, although 0.6 s have passed since the stamped onset.
        let blip = Self.hold(0.3, 5) + Self.hold(0.9, 2) + Self.hold(0.1, 10)
        #expect(EventTrackerTests.run(try Self.settings(ratio: 0.5, minDuration: 0.25), blip).isEmpty)
        // Four over: announced at 0.8 (0.3 s past the crossing), exactly when it is without a rise ratio.
        let lasting = Self.hold(0.3, 5) + Self.hold(0.9, 4) + Self.hold(0.1, 15)
        let rising = Self.starts(EventTrackerTests.run(try Self.settings(ratio: 0.5, minDuration: 0.25), lasting))
        let crossing = Self.starts(EventTrackerTests.run(try Self.settings(ratio: nil, minDuration: 0.25), lasting))
        #expect(rising.first?.index == 8 && crossing.first?.index == 8)
        #expect(rising.first?.detectedAt == crossing.first?.detectedAt)
        #expect(abs((rising.first?.onset ?? -1) - 0) < 1e-9 && abs((crossing.first?.onset ?? -1) - 0.5) < 1e-9)
    }

    @Test func metadataKeyAndFlagAreReadAndBadValuesRefused() throws {
        func ratio(_ metadata: String, flag: Float? = nil) throws -> Float? {
            try TrackerSettings(labels: ["siren"], thresholds: [0.5], trackerMetadata: metadata,
                                overrides: TrackerOverrides(tuning: .init(onsetRiseRatio: flag))).onsetRiseRatio
        }
        #expect(try ratio(#"{"cooldown": 1}"#) == nil)
        #expect(try ratio(#"{"onset_rise_ratio": 0.5}"#) == 0.5)
        #expect(try ratio(#"{"onset_rise_ratio": 0.5}"#, flag: 0.3) == 0.3)
        #expect(try ratio(#"{"onset_rise_ratio": 1}"#) == 1)
        for bad in [#"{"onset_rise_ratio": 0}"#, #"{"onset_rise_ratio": 1.5}"#, #"{"onset_rise_ratio": -0.2}"#,
                    #"{"onset_rise_ratio": "half"}"#, #"{"onset_rise": 0.5}"#] {
            #expect(throws: TrackerSettingsError.self, "\(bad)") { try ratio(bad) }
        }
        #expect(throws: TrackerSettingsError.self) { try ratio("{}", flag: 0) }
    }

    @Test func lookbackKeyAndFlagAreReadAndBadValuesRefused() throws {
        func lookback(_ metadata: String, flag: Double? = nil) throws -> Double {
            try TrackerSettings(labels: ["siren"], thresholds: [0.5], trackerMetadata: metadata,
                                overrides: TrackerOverrides(tuning: .init(onsetRiseLookback: flag))).onsetRiseLookback
        }
        #expect(try lookback(#"{"onset_rise_ratio": 0.5}"#) == TrackerSettings.Partial.fallback.onsetRiseLookback!)
        #expect(try lookback(#"{"onset_rise_ratio": 0.5, "onset_rise_lookback": 2.5}"#) == 2.5)
        #expect(try lookback(#"{"onset_rise_lookback": 2.5}"#, flag: 4) == 4)
        for bad in [#"{"onset_rise_lookback": 0}"#, #"{"onset_rise_lookback": -1}"#,
                    #"{"onset_rise_lookback": "long"}"#] {
            #expect(throws: TrackerSettingsError.self, "\(bad)") { try lookback(bad) }
        }
        #expect(throws: TrackerSettingsError.self) { try lookback("{}", flag: .infinity) }
    }

    @Test func longerLookbackDatesAnOnsetFromFurtherBack() throws {
        // A near-miss at 0.3 for 2 s, then over the threshold at 2.0 s: 1 s back by default, 2.0 s back (the
        // run's start) with a 2.5 s lookback.
        let scores = Self.hold(0.3, 20) + Self.hold(0.9, 4) + Self.hold(0.1, 15)
        var settings = try Self.settings(ratio: 0.5)
        settings.onsetRiseLookback = 2.5
        let starts = Self.starts(EventTrackerTests.run(settings, scores))
        #expect(starts.count == 1 && starts.first?.index == 20)
        #expect(abs((starts.first?.onset ?? -1) - 0) < 1e-9)
    }

    @Test func detectFlagReachesTheTrackerAndABadRatioIsOneLine() throws {
        let model = try AlertModel(path: ListenEndToEndTests.model)
        let clip = DetectCommandTests.clip
        let crossing = try FileDetector(model: model, settings: try TrackerSettings(model: model)).detect(path: clip)
        let rising = try FileDetector(model: model, settings: try TrackerSettings(
            model: model, overrides: TrackerOverrides(tuning: .init(onsetRiseRatio: 0.3)))).detect(path: clip)
        #expect(rising.count == crossing.count && zip(rising, crossing).contains { $0.onset < $1.onset })
        let result = try DetectCommandTests.detect([clip, "--format", "tsv", "--onset-rise-ratio", "0.3"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == ([AlertLineFormatter.tsvHeader] + rising.map {
            AlertLineFormatter.tsvLine(filename: "alerts_clip.wav", event: $0)
        }).map { $0 + "\n" }.joined())
        let bad = try DetectCommandTests.detect([clip, "--onset-rise-ratio", "0"])
        #expect(bad.status == 1)
        #expect(bad.stderr == "Error: invalid event-tracking setting: onset rise ratio 0.0 is not in (0, 1]\n")
    }

    // MARK: - The research mirror's events (Fixtures/tracker/onset_rise_cases.json)

    static let fixtureData = try! Data(contentsOf: OnsetLagTests.folder.appendingPathComponent("onset_rise_cases.json"))
    static let fixture = try! JSONDecoder().decode(OnsetLagTests.Fixture.self, from: fixtureData)

    /// Every event of one fixture case, in the mirror's order (by label, then time): the events as ended, and the
    /// starts, which must carry the same onset and announcement time.
    static func trackedEvents(caseIndex: Int) throws -> [AlertEvent] {
        let fixture = Self.fixture
        let settings = try TrackerSettings(labels: fixture.labels, thresholds: fixture.thresholds,
                                           trackerMetadata: try OnsetLagTests.trackerJSON(caseIndex, of: fixtureData))
        var tracker = EventTracker(settings: settings)
        var events: [AlertEvent] = []
        var starts: [String: (onset: Double, detectedAt: Double)] = [:]
        let collect: (AlertMessage) -> Void = { message in
            switch message {
            case .started(let label, _, let onset, let detectedAt):
                starts[label] = (onset, detectedAt)
            case .ended(let event):
                let start = starts[event.label]
                #expect(start?.onset == event.onset && start?.detectedAt == event.detectedAt)
                events.append(event)
            }
        }
        for (index, row) in fixture.scores.enumerated() {
            row.withUnsafeBufferPointer {
                tracker.update(scores: $0, decisionTime: fixture.decision_times[index],
                               streamTime: fixture.stream_times[index], emit: collect)
            }
        }
        tracker.finish(streamTime: fixture.end_time, emit: collect)
        let order = Dictionary(uniqueKeysWithValues: fixture.labels.enumerated().map { ($1, $0) })
        return events.sorted { (order[$0.label]!, $0.onset) < (order[$1.label]!, $1.onset) }
    }

    @Test(arguments: OnsetRiseTests.fixture.cases.indices)
    func trackerReproducesTheResearchMirrorsEvents(caseIndex: Int) throws {
        let expected = Self.fixture.cases[caseIndex]
        let events = try Self.trackedEvents(caseIndex: caseIndex)
        #expect(events.count == expected.expected.count, "\(expected.name)")
        for (event, want) in zip(events, expected.expected) {
            // Exact: the fixture's times are multiples of 1/16 s, so host and mirror compute the same doubles.
            #expect(event.label == want.label, "\(expected.name)")
            #expect(event.onset == want.onset, "\(expected.name): \(event.label) onset \(event.onset)")
            #expect(event.offset == want.offset, "\(expected.name): \(event.label) offset \(event.offset)")
            #expect(event.detectedAt == want.detected_at, "\(expected.name): \(event.label) at \(event.detectedAt)")
        }
    }
}
