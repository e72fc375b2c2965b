import ArgumentParser
import Foundation
import HearAlertKit

/// `hearalert detect`: the alerts in audio files, as fast as the CPU allows.
struct DetectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect",
        abstract: "Find the alerts in audio files and print them as JSON Lines, DCASE TSV or text.",
        discussion: """
            Runs exactly the detection `listen` runs (same features, model and event tracking) over each file, \
            resampled to the model's rate and mixed to mono. jsonl prints the alert_start/alert_end messages a \
            live listener would; tsv prints `filename onset offset event_label` rows that sed_eval and \
            `hearalert evaluate` read; text prints one line per event. Progress goes to stderr for long files.

            Examples:
              hearalert detect models/demo.wav --format text
              hearalert detect corpus/audio/*.wav --format tsv --output out/
            """
    )

    @Argument(help: "Audio files (WAV, FLAC, OGG/Vorbis, AIFF, ...).")
    var files: [String]

    @OptionGroup var detection: DetectionOptions

    @Option(help: "jsonl, tsv or text.")
    var format: AlertFormat = .jsonl

    @Option(help: ArgumentHelp("Write one result file per input here (NAME.jsonl/.tsv/.txt) instead of stdout.",
                               valueName: "DIR"))
    var output: String?

    mutating func run() throws {
        let (model, settings) = try detection.load()
        let targets = try output.map(resultFiles)
        let inputs = files.map { CommandInput(role: "input file", path: $0) } + [detection.modelInput].compactMap { $0 }
        if let output, let targets {
            do {
                try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            } catch {
                throw DetectOutputError.cannotCreateFolder(path: output, reason: DetectOutputError.reason(error))
            }
            // Every result file is checked before the work: none overwrites an input, and the folder takes files.
            for target in targets { try OutputFileError.checkNotInput(target.path, inputs: inputs) }
            if let first = targets.first { try AtomicOutputFile(path: first.path).discard() }
        } else if format == .tsv {
            print(AlertLineFormatter.tsvHeader)
        }
        let detector = FileDetector(model: model, settings: settings)
        var failures = 0
        for (index, path) in files.enumerated() {
            do {
                let lines = try detect(path, with: detector)
                if let target = targets?[index] {
                    let header = format == .tsv ? [AlertLineFormatter.tsvHeader] : []
                    try AtomicOutputFile.write(Data((header + lines).map { $0 + "\n" }.joined().utf8),
                                               to: target.path, protecting: inputs)
                } else {
                    for line in lines { print(line) }
                }
            } catch {
                let message = "\(error)"
                HearAlert.reportError(message.contains(path) ? message : "\(path): \(message)")
                failures += 1
            }
        }
        if failures > 0 { throw ExitCode.failure }
    }

    /// The result file of each input in `folder`, refusing two inputs that would overwrite one result.
    private func resultFiles(in folder: String) throws -> [URL] {
        var firstInput: [URL: String] = [:]
        return try files.map { path in
            let stem = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let target = URL(fileURLWithPath: folder).appendingPathComponent("\(stem).\(format.fileExtension)")
            if let first = firstInput[target] {
                throw DetectOutputError.sameResultFile(first: first, second: path, target: target.path)
            }
            firstInput[target] = path
            return target
        }
    }

    /// The output lines for one file.
    private func detect(_ path: String, with detector: FileDetector) throws -> [String] {
        let filename = URL(fileURLWithPath: path).lastPathComponent
        let progress = ProgressReporter(name: filename)
        defer { progress.done() }
        switch format {
        case .jsonl:
            var lines: [String] = []
            try detector.run(path: path, progress: progress.update) { message in
                lines.append(AlertLineFormatter.jsonLine(AlertReport(message: message, source: path)))
            }
            return lines
        case .tsv:
            return try detector.detect(path: path, progress: progress.update).map {
                AlertLineFormatter.tsvLine(filename: filename, event: $0)
            }
        case .text:
            let colour = output == nil && StreamSink.isColourTerminal(.standardOutput)
            let events = try detector.detect(path: path, progress: progress.update)
            if events.isEmpty { return ["\(PrintableText.escaped(filename)): no alerts"] }
            return events.map { AlertLineFormatter.eventLine(filename: filename, event: $0, colour: colour) }
        }
    }
}

/// Progress on stderr once a file has kept a person waiting for two seconds (files of an hour or more):
/// a self-updating percentage on a terminal, a line every 10 % in a log.
private final class ProgressReporter {
    private let name: String
    private let started = Date()
    private let terminal = isatty(STDERR_FILENO) == 1
    private var shown: Int?

    init(name: String) {
        self.name = name
    }

    func update(_ fraction: Double) {
        guard Date().timeIntervalSince(started) >= 2 else { return }
        let percent = Int(fraction * 100)
        let step = terminal ? 1 : 10
        if let shown, percent / step == shown / step { return }
        shown = percent
        let text = terminal ? "\r\(name): \(percent)%" : "\(name): \(percent)%\n"
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }

    func done() {
        if shown != nil && terminal { try? FileHandle.standardError.write(contentsOf: Data("\n".utf8)) }
    }
}

extension AlertFormat {
    var fileExtension: String {
        switch self {
        case .jsonl: "jsonl"
        case .tsv: "tsv"
        case .text: "txt"
        }
    }
}
