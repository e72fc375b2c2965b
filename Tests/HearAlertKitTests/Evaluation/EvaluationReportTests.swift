import Foundation
import Testing
@testable import HearAlertKit

/// The report's two faces: the JSON document and the terminal table.
@Suite struct EvaluationReportTests {
    /// One file with a siren found, one alert-free file with a false doorbell; the doorbell class has no reference.
    static func report(model: String = "model-a", lateBy delay: Double = 0.3) -> EvaluationReport {
        let labels = ["siren", "doorbell"]
        var scorer = DetectionScorer(labels: labels)
        let siren = SoundEvent(label: "siren", onset: 1, offset: 4)
        scorer.add(reference: [siren],
                   detections: [DetectedEvent(label: "siren", onset: 1.1, offset: 4, detectedAt: 1 + delay)],
                   duration: 10)
        scorer.add(reference: [], detections: [DetectedEvent(label: "doorbell", onset: 2, offset: 3, detectedAt: 2.2)],
                   duration: 10)
        return EvaluationReport(
            corpus: .init(Corpus(directory: "corpus", sampleRate: 16000, labels: labels,
                                 files: [CorpusFile(name: "a.wav", duration: 10, events: [siren]),
                                         CorpusFile(name: "b.wav", duration: 10, events: [])],
                                 hasCleanSpeech: false, hasAlertStems: false)),
            model: model,
            conventions: .init(collarSeconds: 0.2, offsetFractionOfLength: 0.5, segmentSeconds: 1, snrBucketDB: 5),
            detection: scorer.results(), byAlertSNR: [], bySpeechSNR: [], enhancement: nil, files: nil,
            timing: .init(jobs: 2, wallSeconds: 0.5, audioSeconds: 20, speedFactor: 40))
    }

    @Test func jsonHasSnakeCaseKeysAndNullForUndefinedScores() throws {
        let data = try ReportJSON.encode(Self.report())
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let detection = try #require(json["detection"] as? [String: Any])
        let events = try #require(detection["event_based"] as? [String: Any])
        let classes = try #require(events["class_wise"] as? [[String: Any]])
        #expect(classes.map { $0["label"] as? String } == ["siren", "doorbell"])
        let doorbell = try #require(classes[1]["scores"] as? [String: Any])
        #expect(doorbell["recall"] is NSNull)
        #expect(doorbell["precision"] as? Double == 0)
        let overall = try #require(events["overall"] as? [String: Any])
        let counts = try #require(overall["counts"] as? [String: Any])
        #expect(counts["true_positives"] as? Int == 1 && counts["insertions"] as? Int == 1)
        let alarms = try #require(detection["false_alarms"] as? [String: Any])
        let free = try #require(alarms["alert_free_files"] as? [String: Any])
        #expect(free["per_hour"] as? Double == 360)
        #expect(json["enhancement"] is NSNull && json["files"] is NSNull)
    }

    @Test func enhancementKeysSayTheirUnit() throws {
        var summary = EnhancementSummary()
        summary.add(FileEnhancementScore(snrInDB: 2, snrOutDB: 5, segmentalSNRInDB: -1, segmentalSNROutDB: 1,
                                         alertRetainedDB: nil))
        var report = Self.report()
        report.enhancement = summary.results()
        let json = try #require(try JSONSerialization.jsonObject(with: ReportJSON.encode(report)) as? [String: Any])
        let enhancement = try #require(json["enhancement"] as? [String: Any])
        #expect(enhancement["snr_improvement_db"] as? Double == 3)
        #expect(enhancement["segmental_snr_improvement_db"] as? Double == 2)
        #expect(enhancement["alert_retained_db"] is NSNull)
        #expect(report.table().contains("+3.0 dB"))
    }

    @Test func tableShowsHeadlinesClassesAndSpeed() throws {
        let table = Self.report().table()
        #expect(table.contains("event F1 (micro)"))
        #expect(table.contains("66.7%"))  // 1 TP of 2 estimates and 1 reference
        #expect(table.contains("doorbell"))
        #expect(table.contains("360.00/h"))
        #expect(table.contains("40× real time"))
        let lines = table.split(separator: "\n")
        let latency = try #require(lines.firstIndex { $0.contains("onset latency, 90th pct") })
        #expect(lines[latency + 1].contains("announcement delay, median"))
        #expect(lines[latency + 2].contains("announcement delay, 90th pct"))
    }

    /// The macro-average row leaves its latency cells empty; padding them would leave spaces at the end of the line.
    @Test func tableLinesEndAtTheirLastCell() {
        let lines = Self.report().table().split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("  macro average") })
        #expect(lines.allSatisfy { !$0.hasSuffix(" ") })
    }

    @Test func comparisonGivesDifferencesAndTheBetterSide() throws {
        let comparison = ComparisonReport(a: Self.report(model: "a", lateBy: 0.5), b: Self.report(model: "b", lateBy: 0.3))
        let latency = try #require(comparison.differences.first { $0.metric == "onset latency, median" })
        #expect(abs((latency.bMinusA ?? 0) + 0.2) < 1e-12)
        #expect(latency.better == "B")
        // the siren's only detection overlaps it, so its wait moves with the announcement too
        let wait = try #require(comparison.differences.first { $0.metric == "announcement delay, 90th pct" })
        #expect(abs((wait.bMinusA ?? 0) + 0.2) < 1e-12 && wait.better == "B")
        let f1 = try #require(comparison.differences.first { $0.metric == "event F1 (micro)" })
        #expect(f1.bMinusA == 0 && f1.better == nil)
        #expect(comparison.table().contains("-0.20 s"))
        let json = try #require(try JSONSerialization.jsonObject(with: ReportJSON.encode(comparison)) as? [String: Any])
        #expect(json["a"] != nil && json["b"] != nil && json["differences"] != nil)
    }
}
