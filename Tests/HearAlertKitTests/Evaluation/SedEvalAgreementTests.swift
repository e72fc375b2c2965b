import Foundation
import Testing
@testable import HearAlertKit

/// The metric core against sed_eval 0.2.1 on the cases of Fixtures/metrics (tools/fixtures/make_metric_fixtures.py).
@Suite struct SedEvalAgreementTests {
    static let fixture: MetricFixture = {
        let url = Bundle.module.url(forResource: "sed_eval_cases", withExtension: "json",
                                    subdirectory: "Fixtures/metrics")!
        return try! MetricFixture.decode(Data(contentsOf: url))
    }()

    static var caseNames: [String] { fixture.cases.map(\.name) }

    @Test(arguments: caseNames)
    func agreesWithSedEval(name: String) throws {
        let testCase = try #require(Self.fixture.cases.first { $0.name == name })
        var scorer = DetectionScorer(labels: testCase.labels)
        for file in testCase.files {
            scorer.add(reference: file.referenceEvents, detections: file.detections, duration: file.duration)
        }
        let report = scorer.results()
        let expected = testCase.expected
        check(report.eventBased, against: expected.eventBased, metric: "event-based")
        check(report.eventBasedOnsetOnly, against: expected.eventBasedOnsetOnly, metric: "onset-only")
        check(report.segmentBased, against: expected.segmentBased, metric: "segment-based")

        checkLatency(report.latency.overall, expected.latency.overall, "overall")
        for entry in report.latency.classWise {
            checkLatency(entry.latency, try #require(expected.latency.classWise[entry.label]), entry.label)
        }
        checkAnnouncementDelay(report.announcementDelay.overall, expected.announcementDelay.overall, "overall")
        for entry in report.announcementDelay.classWise {
            checkAnnouncementDelay(entry.latency, try #require(expected.announcementDelay.classWise[entry.label]),
                                   entry.label)
        }
        let alarms = report.falseAlarms
        #expect(alarms.alertFreeFiles.count == expected.falseAlarms.alertFreeFiles.count)
        #expect(alarms.alertFreeTime.count == expected.falseAlarms.alertFreeTime.count)
        #expect(agree(alarms.alertFreeFiles.seconds, expected.falseAlarms.alertFreeFiles.seconds))
        #expect(agree(alarms.alertFreeTime.seconds, expected.falseAlarms.alertFreeTime.seconds))
        #expect(agree(alarms.alertFreeFiles.perHour ?? .nan, expected.falseAlarms.alertFreeFiles.perHour))
        #expect(agree(alarms.alertFreeTime.perHour ?? .nan, expected.falseAlarms.alertFreeTime.perHour))
    }

    @Test func fixtureCoversTheRequiredSituations() {
        let names = Set(Self.caseNames)
        for required in ["no_events", "overlapping_events", "file_edges", "unknown_labels_in_estimate",
                         "several_files", "announcement_delay_rules"] {
            #expect(names.contains(required))
        }
        #expect(Self.fixture.sedEvalVersion == "0.2.1")
        #expect(Self.fixture.cases.contains { $0.expected.eventBased.overall.counts.substitutions > 0 })
    }

    private func check(_ table: ScoreTable, against expected: MetricFixture.Scores, metric: String) {
        let counts = table.overallCounts
        let wanted = expected.overall.counts
        #expect(counts.reference == wanted.reference, "\(metric) N_ref")
        #expect(counts.system == wanted.system, "\(metric) N_sys")
        #expect(counts.truePositives == wanted.truePositives, "\(metric) TP")
        #expect(counts.substitutions == wanted.substitutions, "\(metric) S")
        #expect(counts.deletions == wanted.deletions, "\(metric) D")
        #expect(counts.insertions == wanted.insertions, "\(metric) I")
        checkScores(table.overall, expected.overall.scores, "\(metric) overall")
        checkScores(table.macro, expected.macro, "\(metric) macro")
        for label in table.labels {
            guard let wantedClass = expected.classWise[label] else {
                Issue.record("\(metric): sed_eval has no class \(label)")
                continue
            }
            #expect(table.classCounts[label]?.reference == wantedClass.reference, "\(metric) \(label) N_ref")
            #expect(table.classCounts[label]?.system == wantedClass.system, "\(metric) \(label) N_sys")
            checkScores(table.classScores(label), wantedClass.scores, "\(metric) \(label)")
        }
    }

    private func checkScores(_ scores: DetectionScores, _ expected: MetricFixture.ScoreValues, _ what: String) {
        #expect(agree(scores.fMeasure, expected.fMeasure), "\(what) F1 \(scores.fMeasure) vs \(String(describing: expected.fMeasure))")
        #expect(agree(scores.precision, expected.precision), "\(what) precision")
        #expect(agree(scores.recall, expected.recall), "\(what) recall")
        #expect(agree(scores.errorRate, expected.errorRate), "\(what) ER \(scores.errorRate) vs \(String(describing: expected.errorRate))")
        #expect(agree(scores.deletionRate, expected.deletionRate), "\(what) deletion rate")
        #expect(agree(scores.insertionRate, expected.insertionRate), "\(what) insertion rate")
        if let substitutionRate = expected.substitutionRate {
            #expect(agree(scores.substitutionRate ?? .nan, substitutionRate), "\(what) substitution rate")
        }
    }

    private func checkLatency(_ summary: LatencySummary, _ expected: MetricFixture.Latency, _ what: String) {
        #expect(summary.count == expected.count, "latency \(what) count")
        #expect(agree(summary.median ?? .nan, expected.median), "latency \(what) median")
        #expect(agree(summary.p90 ?? .nan, expected.p90), "latency \(what) p90")
    }

    /// Plain arithmetic on both sides (no matching involved), so held to 1e-9.
    private func checkAnnouncementDelay(_ summary: LatencySummary, _ expected: MetricFixture.Latency, _ what: String) {
        #expect(summary.count == expected.count, "announcement delay \(what) count")
        #expect(within(summary.median, expected.median), "announcement delay \(what) median")
        #expect(within(summary.p90, expected.p90), "announcement delay \(what) p90")
    }

    private func within(_ value: Double?, _ expected: Double?) -> Bool {
        guard let value, let expected else { return value == nil && expected == nil }
        return abs(value - expected) <= 1e-9
    }
}

/// Within 1e-6, relative for the huge error rates sed_eval gives classes without references; `nil` is NaN.
func agree(_ value: Double, _ expected: Double?) -> Bool {
    guard let expected else { return value.isNaN }
    return abs(value - expected) <= 1e-6 * max(1, abs(expected))
}
