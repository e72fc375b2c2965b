import Foundation
import HearAlertKit

/// Scoring cost of `hearalert evaluate`: the metric core over a synthetic 10-hour corpus's events, which must be
/// negligible next to detection.
///
/// Optionally the whole evaluation (audio decoding, detection, scoring) on a real corpus: set
/// `HEARALERT_BENCH_CORPUS` to a corpus directory and `HEARALERT_BENCH_MODEL` to a weight file
/// (default `models/default.safetensors`); `HEARALERT_BENCH_JOBS` sets the workers (default: all cores).
/// `HEARALERT_BENCH_HOURS` repeats the corpus's files (symbolic links under new names, in a temporary
/// directory) up to that many hours, so a small generated corpus measures the 10-hour target.
enum EvaluationBenchmark {
    static func run() throws {
        scoringCore()
        if let directory = ProcessInfo.processInfo.environment["HEARALERT_BENCH_CORPUS"] {
            try wholeEvaluation(directory: directory)
        } else {
            print("evaluation: set HEARALERT_BENCH_CORPUS (and HEARALERT_BENCH_MODEL) to time a whole evaluation")
        }
    }

    /// 3600 ten-second files, two of three with one or two alerts, detections jittered, dropped or invented.
    private static func scoringCore() {
        let labels = ["siren", "car_horn", "smoke_alarm", "alarm_clock", "doorbell", "phone_ring"]
        var generator = SystemRandomNumberGenerator()
        let files: [(reference: [SoundEvent], detections: [DetectedEvent])] = (0..<3600).map { index in
            let reference: [SoundEvent] = index % 3 == 0 ? [] : (0..<(1 + index % 2)).map { _ in
                let onset = Double.random(in: 0..<7, using: &generator)
                return SoundEvent(label: labels.randomElement(using: &generator)!, onset: onset,
                                  offset: onset + Double.random(in: 0.3..<3, using: &generator))
            }
            var detections = reference.compactMap { event -> DetectedEvent? in
                guard Double.random(in: 0..<1, using: &generator) < 0.85 else { return nil }
                let onset = max(0, event.onset + Double.random(in: -0.3..<0.3, using: &generator))
                return DetectedEvent(label: event.label, onset: onset, offset: event.offset + 0.2,
                                     detectedAt: onset + 0.4)
            }
            if index % 7 == 0 { detections.append(DetectedEvent(label: "doorbell", onset: 5, offset: 6, detectedAt: 5.3)) }
            return (reference, detections)
        }
        let start = ContinuousClock.now
        var scorer = DetectionScorer(labels: labels)
        for file in files { scorer.add(reference: file.reference, detections: file.detections, duration: 10) }
        let report = scorer.results()
        let elapsed = ContinuousClock.now - start
        print(String(format: "evaluation scoring: 3600 files (10 h, %d reference events) scored in %.1f ms; event F1 %.3f",
                     report.eventBased.overallCounts.reference, milliseconds(elapsed),
                     report.eventBased.overall.fMeasure))
    }

    /// Times the evaluator twice over the corpus: with the reference events as detections (decoding, the
    /// duration check, enhancement when `clean/` exists, and scoring: the evaluator's own cost), then with the
    /// model when its file exists.
    private static func wholeEvaluation(directory: String) throws {
        let environment = ProcessInfo.processInfo.environment
        let model = environment["HEARALERT_BENCH_MODEL"] ?? "models/default.safetensors"
        let jobs = environment["HEARALERT_BENCH_JOBS"].flatMap(Int.init) ?? ProcessInfo.processInfo.activeProcessorCount
        let source = try Corpus.load(directory: directory)
        var corpus = source
        var temporary: String?
        if let hours = environment["HEARALERT_BENCH_HOURS"].flatMap(Double.init) {
            (corpus, temporary) = try repeated(source, hours: hours)
        }
        defer { if let temporary { try? FileManager.default.removeItem(atPath: temporary) } }

        let reference = Dictionary(uniqueKeysWithValues: corpus.files.map { file in
            (corpus.audioPath(of: file), file.events.map {
                DetectedEvent(label: $0.label, onset: $0.onset, offset: $0.offset, detectedAt: $0.onset + 0.3)
            })
        })
        // Reading stems and enhancing is only done when the corpus has clean/; time both ways then.
        let modes = corpus.hasCleanSpeech ? [false, true] : [false]
        func measure(_ what: String, makeDetector: @escaping @Sendable () throws -> any CorpusFileDetector) throws {
            for enhancement in modes {
                let settings = EvaluationSettings(jobs: jobs, scoreEnhancement: enhancement)
                let cpu = CPUTime()
                let report = try CorpusEvaluator(corpus: corpus, settings: settings)
                    .run(model: what, makeDetector: makeDetector)
                print(summary("evaluation with \(what)\(enhancement ? ", enhancement" : "")", corpus, report,
                              cpu: cpu.elapsed))
            }
        }
        try measure("reference events as detections (the evaluator's own cost)") { ReferenceEvents(events: reference) }
        guard FileManager.default.fileExists(atPath: model) else {
            print("evaluation: no model at \(model); set HEARALERT_BENCH_MODEL to time detection too")
            return
        }
        try measure(model) { try ModelFileDetector(modelPath: model) }
    }

    private static func summary(_ what: String, _ corpus: Corpus, _ report: EvaluationReport, cpu: Double) -> String {
        what + String(format: ": %.2f h (%d files) in %.1f s wall, %.1f s CPU, with %d jobs (%.0f× real time); event F1 %.3f",
                      corpus.duration / 3600, corpus.files.count, report.timing.wallSeconds, cpu, report.timing.jobs,
                      report.timing.speedFactor, report.detection.eventBased.overall.fMeasure)
    }

    /// Processor time of the whole process (all threads, user and system) since creation: on a shared machine,
    /// wall time says how busy the neighbours were, this says what the work cost.
    private struct CPUTime {
        private let start = Self.now()

        var elapsed: Double { Self.now() - start }

        private static func now() -> Double {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
                + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6
        }
    }

    /// Reports each file's reference events, so the evaluator's own cost can be timed without a model.
    private struct ReferenceEvents: CorpusFileDetector {
        let events: [String: [DetectedEvent]]
        func detect(path: String) throws -> FileDetection { FileDetection(events: events[path] ?? []) }
    }

    /// A corpus listing `source`'s files again and again (as links) until it lasts `hours`, and its directory.
    private static func repeated(_ source: Corpus, hours: Double) throws -> (Corpus, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-bench-\(UUID().uuidString)").path
        let folders = ["audio"] + (source.hasCleanSpeech ? ["clean"] : []) + (source.hasAlertStems ? ["alerts"] : [])
        for folder in folders {
            try FileManager.default.createDirectory(atPath: directory + "/" + folder, withIntermediateDirectories: true)
        }
        let labels = source.labels.map { "\"\($0)\"" }.joined(separator: ", ")
        try #"{"format": "hearalert-corpus", "version": 1, "sample_rate": \#(source.sampleRate), "labels": [\#(labels)]}"#
            .write(toFile: directory + "/corpus.json", atomically: true, encoding: .utf8)
        var files = "filename\tduration\n", annotations = "filename\tonset\toffset\tevent_label\n"
        var seconds = 0.0, index = 0
        while seconds < hours * 3600 {
            let file = source.files[index % source.files.count]
            let name = String(format: "copy_%06d.wav", index)
            for folder in folders {
                let original = URL(fileURLWithPath: source.directory).appendingPathComponent(folder)
                    .appendingPathComponent(file.name).standardizedFileURL.path
                try FileManager.default.createSymbolicLink(atPath: directory + "/\(folder)/" + name,
                                                           withDestinationPath: original)
            }
            files += "\(name)\t\(file.duration)\n"
            for event in file.events { annotations += "\(name)\t\(event.onset)\t\(event.offset)\t\(event.label)\n" }
            seconds += file.duration
            index += 1
        }
        try files.write(toFile: directory + "/files.tsv", atomically: true, encoding: .utf8)
        try annotations.write(toFile: directory + "/annotations.tsv", atomically: true, encoding: .utf8)
        return (try Corpus.load(directory: directory), directory)
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) * 1e-15
    }
}
