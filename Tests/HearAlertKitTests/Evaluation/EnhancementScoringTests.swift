import Foundation
import Testing
@testable import HearAlertKit

/// The enhancement side of `evaluate`: the stems are read, aligned and scored, and the alert pass-through
/// follows the detections.
@Suite struct EnhancementScoringTests {
    static let rate = 16000
    static let seconds = 4

    /// Speech-like harmonics under a 4 Hz envelope.
    static let clean: [Float] = (0..<seconds * rate).map { n in
        let t = Double(n) / Double(rate)
        let envelope = 0.5 + 0.5 * sin(2 * Double.pi * 4 * t)
        let voiced = (1...6).reduce(0.0) { $0 + sin(2 * Double.pi * 150 * Double($1) * t) / Double($1) }
        return Float(0.08 * envelope * voiced)
    }
    /// Seeded white noise.
    static let noise: [Float] = {
        var generator = SplitMix(seed: 11)
        return (0..<seconds * rate).map { _ in Float.random(in: -0.05...0.05, using: &generator) }
    }()
    /// A 3 kHz tone sounding from 1 s to 3 s.
    static let alert: [Float] = (0..<seconds * rate).map { n in
        (rate...3 * rate).contains(n) ? Float(0.1 * sin(2 * Double.pi * 3000 * Double(n) / Double(rate))) : 0
    }
    static let mixture = zip(zip(clean, noise), alert).map { $0.0 + $0.1 + $1 }

    static func corpus() throws -> (Corpus, String) {
        var layout = TemporaryCorpus()
        layout.description = #"{"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": ["siren"]}"#
        layout.files = "filename\tduration\nm.wav\t4.0\n"
        layout.annotations = "filename\tonset\toffset\tevent_label\nm.wav\t1.0\t3.0\tsiren\n"
        layout.audio = ["m.wav"]
        layout.clean = ["m.wav"]
        layout.alerts = ["m.wav"]
        layout.signal = { folder, _ in
            switch folder {
            case "clean": clean
            case "alerts": alert
            default: mixture
            }
        }
        let directory = try layout.write()
        return (try Corpus.load(directory: directory), directory)
    }

    @Test func scoresTheMixtureAndTheEnhancedOutput() throws {
        let (corpus, directory) = try Self.corpus()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scorer = try FileEnhancementScorer(sampleRate: Self.rate)
        let heard = FileDetection(events: [DetectedEvent(label: "siren", onset: 1.0, offset: 3.0, detectedAt: 1.2)])
        #expect(heard.alertActivity == [1.2..<3.0])
        let score = try scorer.score(corpus.files[0], in: corpus, alertActivity: heard.alertActivity)

        // The target is speech plus alert, so the input SNR is theirs over the noise, fixed by construction
        // (16-bit quantisation moves it by far less than 0.05 dB).
        let signal = zip(Self.clean, Self.alert).reduce(0.0) { $0 + Double($1.0 + $1.1) * Double($1.0 + $1.1) }
        let noise = Self.noise.reduce(0.0) { $0 + Double($1) * Double($1) }
        #expect(abs(score.snrInDB - 10 * log10(signal / noise)) < 0.05)
        #expect(score.segmentalSNRInDB != nil && score.segmentalSNROutDB != nil)
        #expect(score.snrOutDB.isFinite)
        let retained = try #require(score.alertRetainedDB)

        let unheard = try scorer.score(corpus.files[0], in: corpus, alertActivity: [])
        let retainedUnheard = try #require(unheard.alertRetainedDB)
        #expect(retained > retainedUnheard, "the pass-through should keep more of an alert the detector reported")
        #expect(unheard.snrInDB == score.snrInDB)
    }

    /// At strength 0 the enhancer passes its input through, so with the delay removed the output is the mixture:
    /// any misalignment would show as a lower output SNR.
    @Test func outputIsAlignedWithTheTarget() throws {
        let (corpus, directory) = try Self.corpus()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scorer = try FileEnhancementScorer(configuration: EnhancerConfiguration(strength: 0), sampleRate: Self.rate)
        let score = try scorer.score(corpus.files[0], in: corpus, alertActivity: [])
        #expect(abs(score.snrOutDB - score.snrInDB) < 0.01, "in \(score.snrInDB) dB, out \(score.snrOutDB) dB")
        #expect(abs(try #require(score.alertRetainedDB)) < 0.01)
    }

    @Test func aSilentTargetCountsOnlyForItsAlert() {
        var summary = EnhancementSummary()
        summary.add(FileEnhancementScore(snrInDB: -.infinity, snrOutDB: -.infinity, segmentalSNRInDB: -10,
                                         segmentalSNROutDB: -10, alertRetainedDB: nil))
        summary.add(FileEnhancementScore(snrInDB: 1, snrOutDB: 4, segmentalSNRInDB: 0, segmentalSNROutDB: 2,
                                         alertRetainedDB: -1))
        let report = summary.results()
        #expect(report.files == 1 && report.snrImprovementDB == 3 && report.segmentalSNRInDB == 0)
        #expect(report.alertFiles == 1 && report.alertRetainedDB == -1)
    }

    @Test func rejectsAStemOfAnotherLength() throws {
        var layout = TemporaryCorpus()
        layout.description = #"{"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": ["siren"]}"#
        layout.files = "filename\tduration\nm.wav\t1.0\n"
        layout.annotations = "filename\tonset\toffset\tevent_label\n"
        layout.audio = ["m.wav"]
        layout.clean = ["m.wav"]
        layout.signal = { folder, _ in [Float](repeating: 0.01, count: folder == "clean" ? 15000 : 16000) }
        let directory = try layout.write()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let corpus = try Corpus.load(directory: directory)
        let scorer = try FileEnhancementScorer(sampleRate: Self.rate)
        #expect(throws: TextFileError.self) { try scorer.score(corpus.files[0], in: corpus, alertActivity: []) }
    }

    /// A one-file corpus whose audio (16 kHz) lasts `seconds` and whose files.tsv lists it (line 2) as 2.0 s.
    static func evaluationFailure(seconds: Int, sampleRate: Int = 16000) throws -> TextFileError? {
        var layout = TemporaryCorpus()
        layout.description = """
            {"format": "hearalert-corpus", "version": 1, "sample_rate": \(sampleRate), "labels": ["siren"]}
            """
        layout.files = "filename\tduration\nm.wav\t2.0\n"
        layout.annotations = "filename\tonset\toffset\tevent_label\n"
        layout.audio = ["m.wav"]
        layout.signal = { _, _ in [Float](repeating: 0, count: seconds * 16000) }
        let directory = try layout.write()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let corpus = try Corpus.load(directory: directory)
        do {
            _ = try CorpusEvaluator(corpus: corpus).run(model: "none", makeDetector: { NoDetections() })
            return nil
        } catch let error as TextFileError {
            return error
        }
    }

    @Test func aDurationThatDisagreesWithFilesTSVStopsTheRunNamingItsLine() throws {
        let error = try Self.evaluationFailure(seconds: 1)
        #expect(error?.description.contains("files.tsv:2: \"m.wav\" is listed as 2.0 s but") == true, "\(String(describing: error))")
    }

    @Test func audioAtAnotherRateThanCorpusJSONSaysStopsTheRunNamingItsLine() throws {
        let error = try Self.evaluationFailure(seconds: 2, sampleRate: 8000)
        #expect(error?.line == 2)
        #expect(error?.description.hasSuffix("/audio/m.wav is at 16000 Hz but corpus.json's sample_rate is 8000") == true,
                "\(String(describing: error))")
    }
}

private struct NoDetections: CorpusFileDetector {
    func detect(path: String) throws -> FileDetection { FileDetection(events: []) }
}

/// A small seeded generator (SplitMix64), so test signals are the same on every run.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
