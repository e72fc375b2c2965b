import Foundation
import Testing
@testable import HearAlertKit

/// `start_padding` (FORMAT.md, context): a padded model decides after T − P frames, at the times the format
/// states, and nothing is stamped before 0 s; an unpadded model keeps the whole-window schedule. Expected times
/// are written out from the format's formulas here, not taken from the detector.
@Suite struct StartPaddingTests {
    static func model(_ name: String) throws -> AlertModel {
        try AlertModel(path: FileDetectorTests.folder.appendingPathComponent(name).path)
    }

    static var alarmAtStart: String { FileDetectorTests.folder.appendingPathComponent("alarm_at_start.wav").path }

    /// The first three decisions on the alarm-at-start clip, fed one hop at a time.
    static func firstDecisions(_ model: AlertModel) throws -> [(decisionTime: Double, streamTime: Double)] {
        let samples = try AudioFile.readAll(path: alarmAtStart, sampleRate: model.featureSpec.sampleRate)
        let found = try DetectorParityTests.run(model, try TrackerSettings(model: model), samples)
        return found.decisions.prefix(3).map { ($0.decisionTime, $0.streamTime) }
    }

    @Test func theModelFileSaysHowManyFramesArePadding() throws {
        #expect(try Self.model("tone_model_padded.safetensors").startPadding == 24)
        #expect(try Self.model("tone_model.safetensors").startPadding == 0)
        let report = try AlertModelReport(path: FileDetectorTests.folder
            .appendingPathComponent("tone_model_padded.safetensors").path).text
        #expect(report.contains("start pad   24 copies of the first frame: first decision after 8 frames (0.10 s"))
        let plain = try AlertModelReport(path: FileDetectorTests.modelPath).text
        #expect(!plain.contains("start pad"))
    }

    /// T = 32, S = 4, hop 160, n_fft 512 at 16 kHz. Padded (P = 24): the window of padded first index s ends at
    /// real frame s − 24 + 31, i.e. ((s + 7)·160 + 512) / 16000 s, and begins at (s − 24)·160 / 16000 s.
    @Test func paddedModelDecidesAfterTMinusPFramesAtTheStatedTimes() throws {
        let decisions = try Self.firstDecisions(try Self.model("tone_model_padded.safetensors"))
        for (index, decision) in decisions.enumerated() {
            let s = Double(4 * index)
            let begin = (s - 24) * 160 / 16000
            let end = ((s + 7) * 160 + 512) / 16000
            #expect(abs(decision.streamTime - end) < 1e-12, "decision \(index) at \(decision.streamTime)")
            #expect(abs(decision.decisionTime - (begin + end) / 2) < 1e-12)
        }
        #expect(decisions.count == 3 && abs(decisions[0].streamTime - 0.102) < 1e-12)
        #expect(decisions[0].decisionTime < 0)  // the first window reaches before the stream: the tracker clamps
    }

    @Test func unpaddedModelStillWaitsForAWholeWindow() throws {
        let decisions = try Self.firstDecisions(try Self.model("tone_model.safetensors"))
        for (index, decision) in decisions.enumerated() {
            let first = Double(4 * index)
            #expect(abs(decision.streamTime - ((first + 31) * 160 + 512) / 16000) < 1e-12)
            #expect(abs(decision.decisionTime - ((2 * first + 31) * 160 + 512) / 2 / 16000) < 1e-12)
        }
        #expect(decisions.count == 3 && abs(decisions[0].streamTime - 0.342) < 1e-12)
    }

    /// The reason for padding: listening that starts during an alarm reports it sooner, and stamps its onset at
    /// the start of the stream, never before. With and without an onset lag.
    @Test(arguments: [nil, 0.3])
    func alarmSoundingAtTheStartIsReportedSoonerAndNotStampedBeforeZero(onsetLag: Double?) throws {
        func siren(_ name: String) throws -> AlertEvent {
            let model = try Self.model(name)
            let settings = try TrackerSettings(model: model,
                overrides: TrackerOverrides(tuning: .init(onsetLag: onsetLag)))
            let events = try FileDetector(model: model, settings: settings).detect(path: Self.alarmAtStart)
            #expect(events.allSatisfy { $0.onset >= 0 && $0.offset >= $0.onset })
            return try #require(events.first { $0.label == "siren" })
        }
        let padded = try siren("tone_model_padded.safetensors")
        let plain = try siren("tone_model.safetensors")
        #expect(padded.onset == 0)
        #expect(padded.detectedAt < plain.detectedAt)
    }

    @Test func trackerStampsNothingBeforeZero() throws {
        let settings = try TrackerSettings(labels: ["siren"], thresholds: [0.5],
                                           trackerMetadata: #"{"smoothing_frames": 1, "min_duration": 0}"#)
        var tracker = EventTracker(settings: settings)
        var starts: [Double] = []
        let scores: [Float] = [0.9]
        scores.withUnsafeBufferPointer {
            tracker.update(scores: $0, decisionTime: -0.07, streamTime: 0.1) { message in
                if case .started(_, _, let onset, _) = message { starts.append(onset) }
            }
        }
        #expect(starts == [0])
    }
}
