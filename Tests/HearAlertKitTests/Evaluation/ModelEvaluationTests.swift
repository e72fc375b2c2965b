import Foundation
import Testing
@testable import HearAlertKit

/// `evaluate` with a real weight file: the detector fixture's tone model over its alert clip, as a one-file
/// corpus. The evaluator must score exactly what `FileDetector` (hence `hearalert detect`) finds.
@Suite struct ModelEvaluationTests {
    static let fixtures = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/detector").path

    @Test func scoresWhatTheFileDetectorFinds() throws {
        let clip = try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/alerts_clip.wav"))
        var layout = TemporaryCorpus()
        layout.description = #"{"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": ["siren", "smoke_alarm"]}"#
        layout.files = "filename\tduration\nclip.wav\t8.0\nquiet.wav\t2.0\n"
        layout.annotations = try String(contentsOfFile: Self.fixtures + "/alerts_clip.tsv", encoding: .utf8)
            .replacingOccurrences(of: "alerts_clip.wav", with: "clip.wav")
        layout.audio = ["quiet.wav"]
        layout.signal = { _, _ in [Float](repeating: 0, count: 32000) }
        let directory = try layout.write()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try clip.write(to: URL(fileURLWithPath: directory + "/audio/clip.wav"))
        let corpus = try Corpus.load(directory: directory)
        let modelPath = Self.fixtures + "/tone_model.safetensors"

        let report = try CorpusEvaluator(corpus: corpus, settings: EvaluationSettings(jobs: 2, keepPerFile: true))
            .run(model: modelPath, makeDetector: { try ModelFileDetector(modelPath: modelPath) })

        let model = try AlertModel(path: modelPath)
        let direct = try FileDetector(model: model, settings: TrackerSettings(model: model))
            .detect(path: corpus.audioPath(of: corpus.files[0]))
        #expect(!direct.isEmpty)
        let scored = try #require(report.files?.first?.detections)
        #expect(scored == direct.map {
            DetectedEvent(label: $0.label, onset: $0.onset, offset: $0.offset, detectedAt: $0.detectedAt)
        })
        var expected = DetectionScorer(labels: corpus.labels)
        expected.add(reference: corpus.files[0].events, detections: scored, duration: 8)
        expected.add(reference: [], detections: report.files?[1].detections ?? [], duration: 2)
        #expect(report.detection.eventBased.overallCounts == expected.results().eventBased.overallCounts)
        #expect(report.detection.latency.overall == expected.results().latency.overall)
        #expect(corpus.vocabularyNotes(modelLabels: model.labels).isEmpty)

        // The enhancer keeps alert bands from the first decision above threshold: before each announcement,
        // through each event.
        let activity = try ModelFileDetector(modelPath: modelPath).detect(path: corpus.audioPath(of: corpus.files[0]))
            .alertActivity
        for event in scored {
            #expect(activity.contains { $0.lowerBound <= event.detectedAt && $0.upperBound >= event.offset },
                    "\(event) not covered by \(activity)")
        }
    }

    @Test func aMissingWeightFileStopsTheRun() throws {
        let directory = try TemporaryCorpus().write()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let corpus = try Corpus.load(directory: directory)
        #expect(throws: (any Error).self) {
            try CorpusEvaluator(corpus: corpus).run(model: "missing", makeDetector: {
                try ModelFileDetector(modelPath: directory + "/missing.safetensors")
            })
        }
    }
}
