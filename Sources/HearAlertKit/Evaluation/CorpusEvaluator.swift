import Foundation
import Synchronization

/// Runs a detector over every file of a corpus, spread over worker threads, and scores the results.
///
/// Each worker owns one detector (models are not thread-safe) and takes the next file when it finishes one;
/// only each file's events come back, and they are scored at once, so memory does not grow with the corpus.
/// The first failure (an unreadable file, a duration that disagrees with `files.tsv`) stops the run and is
/// thrown; a partial score is never reported as a whole one.
public struct CorpusEvaluator: Sendable {
    public let corpus: Corpus
    public let settings: EvaluationSettings

    public init(corpus: Corpus, settings: EvaluationSettings = EvaluationSettings()) {
        self.corpus = corpus
        self.settings = settings
    }

    /// Evaluates the detectors `makeDetector` builds (one per worker), reporting progress after every file.
    ///
    /// - Parameters:
    ///   - model: the name the report gives the detector (usually its weight file).
    ///   - makeDetector: called once on each worker thread.
    ///   - progress: called after each file, from a worker thread, one call at a time.
    public func run(
        model: String,
        makeDetector: @escaping @Sendable () throws -> any CorpusFileDetector,
        progress: @escaping @Sendable (EvaluationProgress) -> Void = { _ in }
    ) throws -> EvaluationReport {
        let start = ContinuousClock.now
        let state = Mutex(RunState(corpus: corpus, settings: settings))
        let workers = max(1, min(settings.jobs, corpus.files.count))
        let group = DispatchGroup()
        for _ in 0..<workers {
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                work(state: state, makeDetector: makeDetector, start: start, progress: progress)
            }
            thread.stackSize = 8 << 20  // room for the matching's recursive augmenting-path search on dense files
            thread.start()
        }
        group.wait()
        let elapsed = (ContinuousClock.now - start).seconds
        return try state.withLock { state in
            if let failure = state.failure { throw failure }
            return state.report(model: model, corpus: corpus, settings: settings, workers: workers,
                                wallSeconds: elapsed)
        }
    }

    private func work(state: borrowing Mutex<RunState>, makeDetector: () throws -> any CorpusFileDetector,
                      start: ContinuousClock.Instant, progress: (EvaluationProgress) -> Void) {
        let detector: any CorpusFileDetector
        let enhancement: FileEnhancementScorer?
        do {
            detector = try makeDetector()
            enhancement = settings.scoreEnhancement && corpus.hasCleanSpeech
                ? try FileEnhancementScorer(configuration: settings.enhancer, sampleRate: corpus.sampleRate) : nil
        } catch {
            state.withLock { $0.fail(error) }
            return
        }
        while let index = state.withLock({ $0.takeNextFile() }) {
            let file = corpus.files[index]
            do {
                try checkAudio(of: file)
                let detection = try detector.detect(path: corpus.audioPath(of: file))
                let enhancementScore = try enhancement?.score(file, in: corpus, alertActivity: detection.alertActivity)
                state.withLock { state in
                    state.add(index: index, file: file, detections: detection.events,
                              enhancementScore: enhancementScore)
                    progress(EvaluationProgress(
                        filesDone: state.filesDone, fileCount: corpus.files.count, secondsDone: state.secondsDone,
                        totalSeconds: corpus.duration, elapsed: (ContinuousClock.now - start).seconds))
                }
            } catch {
                state.withLock { $0.fail(error) }
                return
            }
        }
    }
}

extension CorpusEvaluator {
    /// The audio must be at `corpus.json`'s sample rate, and last as long as `files.tsv` says, or the annotations
    /// and the alert-free time are wrong; a mismatch names the file's line in `files.tsv`.
    func checkAudio(of file: CorpusFile) throws {
        let path = corpus.audioPath(of: file)
        let reader = try AudioFileReader(path: path, sampleRate: corpus.sampleRate)
        guard reader.sourceSampleRate == corpus.sampleRate else {
            throw TextFileError(file: corpus.path("files.tsv"), line: file.line,
                                "\(path) is at \(reader.sourceSampleRate) Hz but corpus.json's sample_rate is "
                                + "\(corpus.sampleRate)")
        }
        guard abs(reader.duration - file.duration) <= settings.durationTolerance else {
            throw TextFileError(file: corpus.path("files.tsv"), line: file.line,
                                "\"\(file.name)\" is listed as \(file.duration) s but \(path) lasts \(reader.duration) s")
        }
    }
}

/// The scores and bookkeeping the workers share, always accessed under the run's lock.
private struct RunState: Sendable {
    var nextFile = 0
    var filesDone = 0
    var secondsDone = 0.0
    var failure: (any Error)?
    var scorer: DetectionScorer
    var byAlertSNR: SNRBreakdown
    var bySpeechSNR: SNRBreakdown
    var enhancement = EnhancementSummary()
    var scoredEnhancement = false
    var perFile: [FileReport?]
    let fileCount: Int

    init(corpus: Corpus, settings: EvaluationSettings) {
        let labels = corpus.labels, rules = settings.rules, segment = settings.segmentLength
        let makeScorer: @Sendable () -> DetectionScorer = {
            DetectionScorer(labels: labels, rules: rules, segmentLength: segment)
        }
        scorer = makeScorer()
        byAlertSNR = SNRBreakdown(measure: .alert, width: settings.snrBucketWidth, makeScorer: makeScorer)
        bySpeechSNR = SNRBreakdown(measure: .speech, width: settings.snrBucketWidth, makeScorer: makeScorer)
        perFile = settings.keepPerFile ? Array(repeating: nil, count: corpus.files.count) : []
        fileCount = corpus.files.count
    }

    mutating func takeNextFile() -> Int? {
        guard failure == nil, nextFile < fileCount else { return nil }
        defer { nextFile += 1 }
        return nextFile
    }

    mutating func fail(_ error: any Error) {
        if failure == nil { failure = error }
    }

    mutating func add(index: Int, file: CorpusFile, detections: [DetectedEvent],
                      enhancementScore: FileEnhancementScore? = nil) {
        let score = scorer.add(reference: file.events, detections: detections, duration: file.duration)
        byAlertSNR.add(file: file, detections: detections)
        bySpeechSNR.add(file: file, detections: detections)
        if let enhancementScore {
            enhancement.add(enhancementScore)
            scoredEnhancement = true
        }
        if !perFile.isEmpty {
            perFile[index] = FileReport(
                filename: file.name, duration: file.duration, alertSNRDB: file.snr.alertDB,
                speechSNRDB: file.snr.speechDB, reference: file.events, detections: detections, score: score,
                enhancement: enhancementScore)
        }
        filesDone += 1
        secondsDone += file.duration
    }

    func report(model: String, corpus: Corpus, settings: EvaluationSettings, workers: Int,
                wallSeconds: Double) -> EvaluationReport {
        EvaluationReport(
            corpus: .init(corpus), model: model,
            conventions: .init(collarSeconds: settings.rules.collar,
                               offsetFractionOfLength: settings.rules.offsetFractionOfLength,
                               segmentSeconds: settings.segmentLength, snrBucketDB: settings.snrBucketWidth),
            detection: scorer.results(), byAlertSNR: byAlertSNR.results(), bySpeechSNR: bySpeechSNR.results(),
            enhancement: scoredEnhancement ? enhancement.results() : nil,
            files: settings.keepPerFile ? perFile.compactMap { $0 } : nil,
            timing: .init(jobs: workers, wallSeconds: wallSeconds, audioSeconds: secondsDone,
                          speedFactor: wallSeconds > 0 ? secondsDone / wallSeconds : 0)
        )
    }
}

fileprivate extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) * 1e-18
    }
}
