import ArgumentParser
import Foundation
import HearAlertKit

/// `hearalert evaluate`: scores detection (and enhancement) on a labelled corpus, with sed_eval's conventions.
struct EvaluateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Score detection and enhancement on a labelled corpus, the way the literature reports them.",
        discussion: """
            The corpus is a folder with corpus.json, files.tsv, annotations.tsv and audio/ (optionally clean/ \
            and alerts/), as tools/make_corpus.py writes it; a malformed one is rejected with the file and line \
            at fault. Detection runs on every file, in parallel, exactly as `hearalert detect` runs it.

            Reported: event-based precision, recall, F1 and error rate per label and overall, micro and macro \
            (onset collar 200 ms, offset collar max(200 ms, 50 % of the event), optimal matching: identical to \
            sed_eval 0.2.1); onset-only F1; segment-based (1 s) F1 and error rate; onset latency of matched \
            events (announcement time minus reference onset: median, 90th percentile); announcement delay \
            (median, 90th percentile); false alarms per hour over alert-free files and over alert-free time; all \
            of it by SNR bucket when corpus.json records per-file SNRs; and, when clean/ exists, the enhancer's \
            SNR and segmental SNR in and out and the alert energy it keeps. A progress bar goes to stderr, a table \
            to stdout, everything to --json.

            Announcement delay is how long after an alert began the user was told, for every alert that a \
            detection of its label reported, however its onset was stamped (0 when that label was already being \
            reported); onset latency leaves out an alert whose onset was stamped outside the collar.

            Examples:
              hearalert evaluate --corpus corpora/test --json out/test-report.json
              hearalert evaluate --corpus corpora/test --threshold siren=0.6 --per-file
              hearalert evaluate --corpus corpora/test --compare old.safetensors new.safetensors
            """
    )

    @Option(help: "Corpus folder (corpus.json, files.tsv, annotations.tsv, audio/; optional clean/, alerts/).")
    var corpus: String

    @OptionGroup var detection: DetectionOptions

    // The numbers parse `.unconditional`ly, as in DetectionOptions: "-1" is a value to refuse, not an option.
    @Option(parsing: .unconditional,
            help: "Files processed at once, one loaded model each; the default is every core.")
    var jobs = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: ArgumentHelp("Write the full report as JSON here.", valueName: "OUT"))
    var json: String?

    @Flag(help: "List every file's counts in the table and its events in the JSON.")
    var perFile = false

    @Option(parsing: .upToNextOption,
            help: ArgumentHelp("Evaluate two weight files on the same corpus, side by side (instead of --model, "
                               + "which it excludes); both load before either is evaluated.", valueName: "A B"))
    var compare: [String] = []

    @Flag(help: "Skip the enhancement scores even when clean/ exists.")
    var noEnhancement = false

    @OptionGroup var noise: NoiseEstimatorOptions

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Onset collar in seconds (sed_eval's t_collar).", valueName: "S"))
    var collar = EventMatchingRules.onsetAndOffset.collar

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Offset collar as a fraction of the event's length, at least the onset collar "
                               + "(sed_eval's percentage_of_length).", valueName: "F"))
    var offsetFraction = EventMatchingRules.onsetAndOffset.offsetFractionOfLength

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard collar > 0 else { throw ValidationError("--collar must be positive") }
        guard (0...1).contains(offsetFraction) else { throw ValidationError("--offset-fraction must be in 0...1") }
        guard compare.isEmpty || compare.count == 2 else {
            throw ValidationError("--compare takes exactly two weight files, got \(compare.count)")
        }
        guard compare.isEmpty || detection.modelFile == nil else {
            throw ValidationError("--model and --compare exclude each other: --compare names both models")
        }
        if let json { try validateOutput(json, option: "--json", inputs: models) }
    }

    /// The weight files evaluated: the report must overwrite none of them.
    private var models: [CommandInput] {
        (compare.isEmpty ? [detection.modelInput].compactMap { $0 }
            : compare.map { CommandInput(role: "model file", path: $0) }) + noise.inputs
    }

    func run() throws {
        let labelled = try Corpus.load(directory: corpus)
        // Opened before the evaluation: a report that cannot be written fails now, not after it.
        let reportFile = try json.map { path in
            try labelled.checkNotOwnFile(path)
            return try AtomicOutputFile(path: path, protecting: models)
        }
        let settings = EvaluationSettings(jobs: jobs, keepPerFile: perFile, scoreEnhancement: !noEnhancement,
                                          rules: EventMatchingRules(collar: collar, offsetFractionOfLength: offsetFraction),
                                          enhancer: EnhancerConfiguration(noiseEstimation: try noise.estimation()))
        let evaluator = CorpusEvaluator(corpus: labelled, settings: settings)
        // Every model loads (and its settings are checked) before any is evaluated: a broken second model must
        // fail at once, not after the first has run over the whole corpus.
        let loaded = try (compare.isEmpty ? [detection.modelPath()] : compare).map { path in
            var options = detection
            options.modelFile = path
            let (model, tracker) = try options.load()
            return (path: path, labels: model.labels, tracker: tracker)
        }
        let reports = try loaded.map { model in
            for note in labelled.vocabularyNotes(modelLabels: model.labels) {
                Diagnostics.standardError.report("\(model.path): \(note)")
            }
            return try evaluator.run(
                model: model.path,
                makeDetector: { try ModelFileDetector(modelPath: model.path, settings: model.tracker) },
                progress: ProgressBar(title: URL(fileURLWithPath: model.path).lastPathComponent).show)
        }
        if reports.count == 2 {
            let comparison = ComparisonReport(a: reports[0], b: reports[1])
            print(comparison.table())
            try reportFile?.write(ReportJSON.encode(comparison))
        } else {
            print(reports[0].table())
            if perFile { print(reports[0].perFileTable()) }
            try reportFile?.write(ReportJSON.encode(reports[0]))
        }
        try reportFile?.commit()
    }
}

/// The progress bar on stderr: redrawn in place on a terminal, a line per tenth of the corpus otherwise.
private struct ProgressBar: Sendable {
    let title: String
    let isTerminal = isatty(STDERR_FILENO) == 1

    func show(_ progress: EvaluationProgress) {
        let finished = progress.filesDone == progress.fileCount
        if isTerminal {
            FileHandle.standardError.write(Data("\r\(title) \(progress.bar())\(finished ? "\n" : "")".utf8))
        } else if finished || progress.filesDone % max(1, progress.fileCount / 10) == 0 {
            FileHandle.standardError.write(Data("\(title) \(progress.bar())\n".utf8))
        }
    }
}
