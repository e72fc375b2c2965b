import Foundation
import Testing
@testable import HearAlertKit

/// `onset_lag`: decisions stamped at the window's end minus the lag instead of its centre. The tracker cases are
/// worked by hand (Fixtures/tracker/README.md) and shared with the research mirror's test, so host and mirror
/// are held to the same numbers.
@Suite struct OnsetLagTests {
    struct Fixture: Decodable {
        struct Event: Decodable {
            var label: String
            var onset: Double
            var offset: Double
            var detected_at: Double
        }

        struct Case: Decodable {
            var name: String
            var expected: [Event]
        }

        var labels: [String]
        var thresholds: [Float]
        var end_time: Double
        var scores: [[Float]]
        var decision_times: [Double]
        var stream_times: [Double]
        var cases: [Case]
    }

    static let folder = Bundle.module.url(forResource: "Fixtures/tracker", withExtension: nil)!
    static let fixtureData = try! Data(contentsOf: folder.appendingPathComponent("onset_lag_cases.json"))
    static let fixture = try! JSONDecoder().decode(Fixture.self, from: fixtureData)

    /// Each case's `tracker` object, as the JSON text a model file would carry (of this or another tracker fixture).
    static func trackerJSON(_ index: Int, of data: Data = fixtureData) throws -> String {
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let cases = try #require(root["cases"] as? [[String: Any]])
        let data = try JSONSerialization.data(withJSONObject: try #require(cases[index]["tracker"]))
        return String(decoding: data, as: UTF8.self)
    }

    @Test(arguments: 0..<4)
    func trackerStampsOnsetsAsWorkedByHand(caseIndex: Int) throws {
        let fixture = Self.fixture
        let settings = try TrackerSettings(labels: fixture.labels, thresholds: fixture.thresholds,
                                           trackerMetadata: try Self.trackerJSON(caseIndex))
        var tracker = EventTracker(settings: settings)
        var events: [AlertEvent] = []
        let collect: (AlertMessage) -> Void = { if case .ended(let event) = $0 { events.append(event) } }
        for (index, row) in fixture.scores.enumerated() {
            row.withUnsafeBufferPointer {
                tracker.update(scores: $0, decisionTime: fixture.decision_times[index],
                               streamTime: fixture.stream_times[index], emit: collect)
            }
        }
        tracker.finish(streamTime: fixture.end_time, emit: collect)
        let expected = fixture.cases[caseIndex].expected
        #expect(events.count == expected.count, "\(fixture.cases[caseIndex].name)")
        for (event, want) in zip(events, expected) {
            #expect(event.label == want.label)
            #expect(abs(event.onset - want.onset) < 1e-9, "\(fixture.cases[caseIndex].name): onset \(event.onset)")
            #expect(abs(event.offset - want.offset) < 1e-9, "\(fixture.cases[caseIndex].name): offset \(event.offset)")
            #expect(abs(event.detectedAt - want.detected_at) < 1e-9)
        }
    }

    @Test func metadataKeyAndFlagAreReadAndBadValuesRefused() throws {
        let fromModel = try TrackerSettings(labels: ["siren"], thresholds: [0.5],
                                            trackerMetadata: #"{"onset_lag": 0.25}"#)
        #expect(fromModel.onsetLag == 0.25)
        let overridden = try TrackerSettings(labels: ["siren"], thresholds: [0.5],
                                             trackerMetadata: #"{"onset_lag": 0.25}"#,
                                             overrides: TrackerOverrides(tuning: .init(onsetLag: 0.1)))
        #expect(overridden.onsetLag == 0.1)
        #expect(try TrackerSettings(labels: ["siren"], thresholds: [0.5], trackerMetadata: "{}").onsetLag == nil)
        #expect(throws: TrackerSettingsError.self) {
            try TrackerSettings(labels: ["siren"], thresholds: [0.5], trackerMetadata: #"{"onset_lag": -0.1}"#)
        }
        #expect(throws: TrackerSettingsError.self) {
            try TrackerSettings(labels: ["siren"], thresholds: [0.5], trackerMetadata: #"{"onset_lag": "soon"}"#)
        }
    }

    static let modelPath = Bundle.module.url(forResource: "Fixtures/detector", withExtension: nil)!
        .appendingPathComponent("tone_model.safetensors").path

    /// The model's window in seconds: `(T − 1)·hop + n_fft` samples.
    static func windowSeconds(_ model: AlertModel) -> Double {
        let spec = model.featureSpec
        return Double((model.contextFrames - 1) * spec.hopLength + spec.nFFT) / Double(spec.sampleRate)
    }

    /// Starts on the fixture clip with no smoothing and no minimum duration, so each is announced by the window
    /// that first fires: its onset then sits `lag` (or half a window, without a lag) before that window's end.
    static func starts(onsetLag: Double?) throws -> [(onset: Double, detectedAt: Double)] {
        let model = try AlertModel(path: modelPath)
        let settings = try TrackerSettings(model: model, overrides: TrackerOverrides(
            tuning: .init(smoothingFrames: 1, minDuration: 0, onsetLag: onsetLag)))
        let detector = try AlertDetector(model: model, settings: settings)
        let clip = try AudioFile.readAll(path: FileDetectorTests.clipPath, sampleRate: detector.expectedSampleRate)
        var starts: [(onset: Double, detectedAt: Double)] = []
        try clip.withUnsafeBufferPointer {
            try detector.process($0) { message in
                if case .started(_, _, let onset, let detectedAt) = message { starts.append((onset, detectedAt)) }
            }
        }
        return starts
    }

    @Test func detectorStampsOnsetsAtWindowEndMinusTheLag() throws {
        let window = Self.windowSeconds(try AlertModel(path: Self.modelPath))
        let centred = try Self.starts(onsetLag: nil)
        let lagged = try Self.starts(onsetLag: 0.1)
        #expect(!centred.isEmpty && centred.count == lagged.count)
        for (plain, late) in zip(centred, lagged) {
            #expect(abs(plain.detectedAt - plain.onset - window / 2) < 1e-9)
            #expect(abs(late.detectedAt - late.onset - 0.1) < 1e-9)
            #expect(late.detectedAt == plain.detectedAt)  // announcing is not delayed, only the stamp moves
        }
    }

    @Test func lagLongerThanTheWindowIsRefused() throws {
        let model = try AlertModel(path: Self.modelPath)
        let settings = try TrackerSettings(model: model, overrides: TrackerOverrides(
            tuning: .init(onsetLag: Self.windowSeconds(model) + 0.01)))
        #expect(throws: TrackerSettingsError.self) { try AlertDetector(model: model, settings: settings) }
        let longest = try TrackerSettings(model: model,
            overrides: TrackerOverrides(tuning: .init(onsetLag: Self.windowSeconds(model))))
        #expect(throws: Never.self) { try AlertDetector(model: model, settings: longest) }
    }
}
