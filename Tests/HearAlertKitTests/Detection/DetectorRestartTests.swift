import Foundation
import Testing
@testable import HearAlertKit

/// `AlertDetector.restartStream`, the detector's side of a capture device lost and reopened. After a restart at
/// stream time R the detector must behave exactly as a new detector on the audio that follows, on a clock that
/// keeps running: the same decisions with the same scores (so no window mixes audio from both sides of the gap,
/// and the start padding applies again) at times shifted by R, the same events shifted by R; and an alert
/// sounding at the restart ends there. The reference is a fresh detector, whose schedule and scores
/// DetectorParityTests and StartPaddingTests hold to the research mirror and to the format.
@Suite struct DetectorRestartTests {
    typealias Decision = DetectorParityTests.Decision

    static func clip(_ name: String) throws -> [Float] {
        try AudioFile.readAll(path: FileDetectorTests.folder.appendingPathComponent(name).path, sampleRate: 16_000)
    }

    /// Feeds `before`, restarts, feeds `after` (one hop at a time, as live audio comes), then finishes. Returns
    /// every decision, the messages emitted before the restart, at it, and after it.
    static func runWithRestart(
        _ model: AlertModel, before: [Float], after: [Float]
    ) throws -> (decisions: [Decision], before: [AlertMessage], atRestart: [AlertMessage], after: [AlertMessage]) {
        var decisions: [Decision] = []
        let detector = try AlertDetector(model: model, settings: try TrackerSettings(model: model)) {
            decisions.append(($0.decisionTime, $0.streamTime, Array($0.scores)))
        }
        func feed(_ samples: [Float], _ emit: (AlertMessage) -> Void) throws {
            let hop = model.featureSpec.hopLength
            try samples.withUnsafeBufferPointer { all in
                for start in stride(from: 0, to: all.count, by: hop) {
                    try detector.process(UnsafeBufferPointer(rebasing: all[start..<min(all.count, start + hop)]),
                                         emit: emit)
                }
            }
        }
        var first: [AlertMessage] = [], atRestart: [AlertMessage] = [], second: [AlertMessage] = []
        try feed(before) { first.append($0) }
        detector.restartStream { atRestart.append($0) }
        #expect(!detector.isAlertPossible, "nothing is rising or sounding right after a restart")
        try feed(after) { second.append($0) }
        detector.finish { second.append($0) }
        return (decisions, first, atRestart, second)
    }

    /// R = 16 050 samples is no whole number of hops, so samples of a half-filled frame are pending at the
    /// restart: they must be dropped too. The audio after it begins mid-siren.
    @Test(arguments: ["tone_model_padded.safetensors", "tone_model.safetensors"])
    func afterARestartTheDetectorDecidesAsANewOneOnTheSameClock(modelName: String) throws {
        let model = try StartPaddingTests.model(modelName)
        let before = Array(try Self.clip("alerts_clip.wav")[0..<16_050]), after = try Self.clip("alarm_at_start.wav")
        let restart = Double(before.count) / 16_000
        let found = try Self.runWithRestart(model, before: before, after: after)
        let fresh = try DetectorParityTests.run(model, try TrackerSettings(model: model), after)

        let resumed = found.decisions.filter { $0.streamTime > restart }
        #expect(resumed.count == fresh.decisions.count && !resumed.isEmpty)
        for (index, (got, want)) in zip(resumed, fresh.decisions).enumerated() {
            #expect(abs(got.streamTime - (want.streamTime + restart)) < 1e-9, "\(modelName) decision \(index)")
            #expect(abs(got.decisionTime - (want.decisionTime + restart)) < 1e-9, "\(modelName) decision \(index)")
            #expect(got.scores == want.scores, "\(modelName) decision \(index): the window holds audio from before")
        }
        // The format's schedule (T = 32, S = 4, hop 160, n_fft 512): the first window after the restart ends
        // (T − P − 1)·hop + n_fft samples into the new stream; padded P = 24, unpadded P = 0.
        let padding = model.startPadding
        #expect(abs((resumed.first?.streamTime ?? 0) - (restart + Double((31 - padding) * 160 + 512) / 16_000))
                < 1e-9)

        let ended = found.after.compactMap { if case .ended(let event) = $0 { event } else { nil } }
        #expect(ended.map(\.label) == fresh.events.map(\.label) && !ended.isEmpty)
        for (got, want) in zip(ended, fresh.events) {
            #expect(abs(got.onset - (want.onset + restart)) < 1e-9, "\(got.label) onset \(got.onset)")
            #expect(abs(got.offset - (want.offset + restart)) < 1e-9, "\(got.label) offset \(got.offset)")
            #expect(abs(got.detectedAt - (want.detectedAt + restart)) < 1e-9, "\(got.label) detected")
        }
    }

    /// The siren sounds 1–3 s in the first clip; the restart comes at 2.5 s. Its alert ends there (announced as
    /// ended, like at the end of a stream), and the siren still sounding in the new audio is a new alert, judged
    /// as soon as after a start and stamped no earlier than the restart, not held back by the old one's cooldown.
    @Test func anAlertSoundingAtARestartEndsThere() throws {
        let model = try StartPaddingTests.model("tone_model_padded.safetensors")
        let before = Array(try Self.clip("alerts_clip.wav")[0..<40_000]), after = try Self.clip("alarm_at_start.wav")
        let found = try Self.runWithRestart(model, before: before, after: after)

        #expect(found.before.map(\.typeName) == ["alert_start"] && found.before.first?.label == "siren")
        #expect(found.atRestart.count == 1)
        guard case .ended(let event)? = found.atRestart.first else { return }
        #expect(event.label == "siren" && event.offset == 2.5 && event.onset < 1.5)

        guard case .started(let label, _, let onset, let detectedAt)? = found.after.first else {
            Issue.record("no alert after the restart: \(found.after)")
            return
        }
        let fresh = try #require(try DetectorParityTests.run(model, try TrackerSettings(model: model), after)
            .events.first { $0.label == "siren" })
        #expect(label == "siren" && onset == 2.5)
        #expect(abs(detectedAt - (2.5 + fresh.detectedAt)) < 1e-9)
    }
}
