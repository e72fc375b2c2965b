import Foundation
import Synchronization
import Testing
@testable import HearAlertKit

/// A stand-in detector that reports scripted events per audio path, so the runner is tested without a model.
private struct ScriptedDetector: CorpusFileDetector {
    let script: [String: [DetectedEvent]]
    var failing: String? = nil

    func detect(path: String) throws -> FileDetection {
        if path == failing { throw TextFileError(file: path, "scripted failure") }
        return FileDetection(events: script[path] ?? [])
    }
}

@Suite struct CorpusEvaluatorTests {
    /// Ten files: even ones with a siren at 1–3 s, every third with an SNR record.
    static func makeCorpus() throws -> (Corpus, String) {
        var layout = TemporaryCorpus()
        let names = (0..<10).map { "f\($0).wav" }
        layout.audio = names
        layout.signal = { _, _ in [Float](repeating: 0, count: 5 * 16000) }
        layout.files = "filename\tduration\n" + names.map { "\($0)\t5.0\n" }.joined()
        layout.annotations = "filename\tonset\toffset\tevent_label\n"
            + names.enumerated().filter { $0.offset % 2 == 0 }.map { "\($0.element)\t1.0\t3.0\tsiren\n" }.joined()
        let snrs = names.enumerated().filter { $0.offset % 3 == 0 }
            .map { "\"\($0.element)\": {\"alert_snr_db\": \(Double($0.offset) - 4.5), \"speech_snr_db\": 12}" }
        layout.description = """
            {"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": ["siren", "doorbell"],
             "files": {\(snrs.joined(separator: ", "))}}
            """
        let directory = try layout.write()
        return (try Corpus.load(directory: directory), directory)
    }

    /// Detects every even file's siren 0.25 s late, and a false doorbell in file 1.
    static func script(for corpus: Corpus) -> [String: [DetectedEvent]] {
        var script: [String: [DetectedEvent]] = [:]
        for (index, file) in corpus.files.enumerated() {
            script[corpus.audioPath(of: file)] = file.events.map {
                DetectedEvent(label: $0.label, onset: $0.onset + 0.05, offset: $0.offset, detectedAt: $0.onset + 0.25)
            } + (index == 1 ? [DetectedEvent(label: "doorbell", onset: 2, offset: 2.5, detectedAt: 2.3)] : [])
        }
        return script
    }

    @Test(arguments: [1, 3])
    func scoresEveryFileWithAnyNumberOfJobs(jobs: Int) throws {
        let (corpus, directory) = try Self.makeCorpus()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = Self.script(for: corpus)
        let calls = Mutex(0)
        let report = try CorpusEvaluator(corpus: corpus, settings: EvaluationSettings(jobs: jobs, keepPerFile: true))
            .run(model: "scripted", makeDetector: { ScriptedDetector(script: script) },
                 progress: { _ in calls.withLock { $0 += 1 } })
        let events = report.detection.eventBased.overallCounts
        #expect(events.reference == 5 && events.truePositives == 5 && events.insertions == 1)
        #expect(report.detection.latency.overall.count == 5)
        #expect(abs((report.detection.latency.overall.median ?? 0) - 0.25) < 1e-12)
        #expect(report.detection.falseAlarms.alertFreeFiles.count == 1)
        #expect(report.detection.falseAlarms.alertFreeFiles.seconds == 25)
        #expect(report.files?.map(\.filename) == corpus.files.map(\.name))
        #expect(report.byAlertSNR.map(\.name) == ["-5…0 dB", "0…5 dB"])  // SNRs −4.5, −1.5, 1.5, 4.5
        #expect(report.byAlertSNR.map(\.detection.files) == [2, 2])
        #expect(report.bySpeechSNR.map(\.detection.files) == [4])
        #expect(report.timing.jobs == jobs && report.timing.audioSeconds == 50)
        #expect(calls.withLock { $0 } == 10)
        let perFile = report.perFileTable()
        #expect(perFile.contains("f9.wav") && perFile.contains("0.25"))
    }

    /// Sirens stamped 0.5 s late (outside the collar) and announced 0.8 s after they began: onset latency has no
    /// event to measure, but the user waited 0.8 s for each, and every table must say so beside the latency.
    @Test func tablesShowTheWaitForAlertsStampedOutsideTheCollar() throws {
        let (corpus, directory) = try Self.makeCorpus()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = Dictionary(uniqueKeysWithValues: corpus.files.map { file in
            (corpus.audioPath(of: file), file.events.map {
                DetectedEvent(label: $0.label, onset: $0.onset + 0.5, offset: $0.offset, detectedAt: $0.onset + 0.8)
            })
        })
        let report = try CorpusEvaluator(corpus: corpus, settings: EvaluationSettings(jobs: 1, keepPerFile: true))
            .run(model: "scripted", makeDetector: { ScriptedDetector(script: script) })
        // cells are padded to line up: compare with runs of spaces collapsed
        func cells(_ text: String) -> [String] {
            text.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        }
        let lines = cells(report.table())
        let header = try #require(lines.first { $0.hasPrefix("Class") })
        #expect(header.hasSuffix("seg F1 latency delay"))
        let siren = try #require(lines.first { $0.hasPrefix("siren") })
        #expect(siren.hasSuffix("— 0.80 s"))
        let snrHeader = try #require(lines.firstIndex { $0.hasPrefix("SNR") })
        #expect(lines[snrHeader].hasSuffix("latency delay false alarms"))
        #expect(lines[snrHeader + 2].hasPrefix("-5…0 dB") && lines[snrHeader + 2].hasSuffix("— 0.80 s 0.00/h"))
        let perFile = cells(report.perFileTable())
        #expect(try #require(perFile.first { $0.hasPrefix("File") }).hasSuffix("false alarms latency delay"))
        #expect(try #require(perFile.first { $0.hasPrefix("f0.wav") }).hasSuffix("0 — 0.80"))
        #expect(lines.contains(
            "delay: the same over every event a detection of its label overlaps, however stamped: the user's wait"))
    }

    @Test func stopsAtTheFirstFailingFileAndThrowsIt() throws {
        let (corpus, directory) = try Self.makeCorpus()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let failing = corpus.audioPath(of: corpus.files[4])
        #expect(throws: TextFileError(file: failing, "scripted failure")) {
            try CorpusEvaluator(corpus: corpus, settings: EvaluationSettings(jobs: 2))
                .run(model: "scripted", makeDetector: { ScriptedDetector(script: [:], failing: failing) })
        }
    }

    @Test func reportsADetectorThatCannotBeBuilt() throws {
        let (corpus, directory) = try Self.makeCorpus()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: TextFileError(file: "model", "cannot load")) {
            try CorpusEvaluator(corpus: corpus, settings: EvaluationSettings(jobs: 2))
                .run(model: "broken", makeDetector: { throw TextFileError(file: "model", "cannot load") })
        }
    }
}
