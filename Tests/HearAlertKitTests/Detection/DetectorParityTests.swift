import Foundation
import Testing
@testable import HearAlertKit

/// The host's detector against the research mirror on the same audio (Fixtures/detector/parity.json, made by
/// tools/fixtures/make_detector_fixtures.py from librosa features, `pad_start`, `Geometry.decisions`, the numpy
/// forward pass and `tracker.track`): the same decisions at the same times with the same scores, and the same events,
/// for a model with and without start padding, on a clip that starts in silence and one that starts mid-siren;
/// and the same events again with the fixture's `onset_rise_ratio` given as an override.
@Suite struct DetectorParityTests {
    struct Fixture: Decodable {
        /// The tracker fixture's event: the same fields, the same names.
        typealias Event = OnsetLagTests.Fixture.Event

        struct Case: Decodable {
            var clip: String
            var model: String
            var decision_times: [Double]
            var stream_times: [Double]
            var scores: [[Float]]
            var events: [Event]
            /// The events with `onset_rise_ratio` = `rise_ratio`.
            var events_rise: [Event]
        }

        var score_tolerance: Float
        var rise_ratio: Float
        var cases: [Case]
    }

    static let folder = FileDetectorTests.folder
    static let fixture = try! JSONDecoder().decode(
        Fixture.self, from: Data(contentsOf: folder.appendingPathComponent("parity.json")))

    typealias Decision = (decisionTime: Double, streamTime: Double, scores: [Float])

    /// Every decision a detector for `model` makes on `samples`, seen through its decision observer, and the
    /// events it ends. The audio goes in one hop at a time, as live audio arrives.
    static func run(
        _ model: AlertModel, _ settings: TrackerSettings, _ samples: [Float]
    ) throws -> (decisions: [Decision], events: [AlertEvent]) {
        var decisions: [Decision] = []
        let detector = try AlertDetector(model: model, settings: settings) { decision in
            decisions.append((decision.decisionTime, decision.streamTime, Array(decision.scores)))
        }
        var events: [AlertEvent] = []
        let collect: (AlertMessage) -> Void = { if case .ended(let event) = $0 { events.append(event) } }
        let hop = model.featureSpec.hopLength
        try samples.withUnsafeBufferPointer { all in
            for start in stride(from: 0, to: all.count, by: hop) {
                try detector.process(UnsafeBufferPointer(rebasing: all[start..<min(all.count, start + hop)]),
                                     emit: collect)
            }
        }
        detector.finish(emit: collect)
        return (decisions, events)
    }

    @Test(arguments: 0..<4)
    func detectorMatchesTheResearchMirror(caseIndex: Int) throws {
        let want = Self.fixture.cases[caseIndex]
        let name = "\(want.clip) / \(want.model)"
        let model = try AlertModel(path: Self.folder.appendingPathComponent(want.model).path)
        let samples = try AudioFile.readAll(path: Self.folder.appendingPathComponent(want.clip).path,
                                            sampleRate: model.featureSpec.sampleRate)
        let found = try Self.run(model, try TrackerSettings(model: model), samples)

        #expect(found.decisions.count == want.scores.count, "\(name): decision count")
        var worst: Float = 0
        for (index, decision) in zip(found.decisions.indices, found.decisions) where index < want.scores.count {
            #expect(abs(decision.decisionTime - want.decision_times[index]) < 1e-9, "\(name) decision \(index)")
            #expect(abs(decision.streamTime - want.stream_times[index]) < 1e-9, "\(name) decision \(index)")
            for (score, expected) in zip(decision.scores, want.scores[index]) {
                worst = max(worst, abs(score - expected))
            }
        }
        #expect(worst <= Self.fixture.score_tolerance, "\(name): scores differ from the mirror's by up to \(worst)")

        Self.expect(found.events, want.events, name)

        let rising = try TrackerSettings(model: model,
                                         overrides: TrackerOverrides(
                                             tuning: .init(onsetRiseRatio: Self.fixture.rise_ratio)))
        Self.expect(try Self.run(model, rising, samples).events, want.events_rise,
                    "\(name) with onset_rise_ratio \(Self.fixture.rise_ratio)")
    }

    static func expect(_ found: [AlertEvent], _ want: [Fixture.Event], _ name: String) {
        #expect(found.map(\.label) == want.map(\.label), "\(name): events")
        for (event, expected) in zip(found, want) {
            #expect(abs(event.onset - expected.onset) < 1e-9, "\(name) \(event.label) onset \(event.onset)")
            #expect(abs(event.offset - expected.offset) < 1e-9, "\(name) \(event.label) offset \(event.offset)")
            #expect(abs(event.detectedAt - expected.detected_at) < 1e-9, "\(name) \(event.label) detected")
        }
    }
}
