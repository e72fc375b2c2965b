import ArgumentParser
import Foundation
import HearAlertKit

/// `hearalert enhance`: the headphone enhancer, offline, for listening tests and scoring.
struct EnhanceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enhance",
        abstract: "Suppress noise in speech recordings, keeping alerts audible, as the live enhancer does.",
        discussion: """
            Runs the same low-latency spectral subtraction that `listen` plays to headphones (noise tracked \
            continuously by MCRA or, with --noise-estimator learned, by a small network; Berouti \
            over-subtraction on the decision-directed SNR, a spectral floor) over a file, hop by hop. The output has the input's rate and length and is aligned with it (the \
            enhancer's delay is removed), as 32-bit float WAV unless --pcm16. With --alert-intervals, alerts \
            listed for this file are kept audible: the noise estimate may fall but not rise, the bins the \
            alert carries pass unchanged and no other bin loses more than 6 dB. With --model, the file is run \
            as `listen` runs the microphone (at the model's rate, in its 2 ms periods) and alerts are kept \
            audible exactly when `listen` would keep them: from the first decision above a threshold until the \
            alert ends. Modes (delay + hop, the same at any rate): lowest-latency (2 + 2 ms; what `listen` \
            plays with MCRA), low-latency (4 + 4 ms; the default here, and what `listen` plays with the learned \
            noise estimate), higher-quality (24 + 8 ms).

            Example:
              hearalert enhance noisy.wav clean.wav --strength 0.8
              hearalert detect noisy.wav --format tsv > alerts.tsv
              hearalert enhance noisy.wav clean.wav --alert-intervals alerts.tsv
              hearalert enhance noisy.wav clean.wav --model models/default.safetensors
              hearalert enhance noisy.wav clean.wav --noise-estimator learned
            """
    )

    @Argument(help: "Noisy audio file (WAV, FLAC, OGG/Vorbis, AIFF, ...; mixed to mono).")
    var input: String

    @Argument(help: "Where to write the enhanced WAV file.")
    var output: String

    @Option(help: ArgumentHelp("Framing: lowest-latency (2 ms delay + 2 ms hop), low-latency (4 ms delay + 4 ms hop) "
                               + "or higher-quality (24 ms delay + 8 ms hop)."))
    var mode: EnhancerConfiguration.Mode = .lowLatency

    @Option(help: "Noise suppression from 0 (unchanged) to 1 (strongest: over-subtraction up to 1.75, -30 dB floor).")
    var strength: Float = EnhancerConfiguration().strength

    @Option(help: """
        DCASE event table (filename, onset, offset, event_label; e.g. a corpus's annotations.tsv or \
        `hearalert detect --format tsv`); rows naming this input's file name mark alerts to keep audible, \
        clipped to the file (a table with no row for it, or rows past its end, are reported on stderr).
        """)
    var alertIntervals: String?

    @Option(help: """
        Alert model (alertnet safetensors): detect this file's alerts as it plays, as `listen` would, and keep \
        them audible too (adds to --alert-intervals). The output then has the model's rate, as `listen` plays it.
        """)
    var model: String?

    @OptionGroup var noise: NoiseEstimatorOptions

    @Flag(help: "Write 16-bit PCM instead of 32-bit float (clips at full scale).")
    var pcm16 = false

    /// What the command reads: the output must be none of these.
    private var inputs: [CommandInput] {
        [CommandInput(role: "input file", path: input)]
            + (alertIntervals.map { [CommandInput(role: "--alert-intervals file", path: $0)] } ?? [])
            + (model.map { [CommandInput(role: "--model file", path: $0)] } ?? []) + noise.inputs
    }

    mutating func validate() throws {
        try validateOutput(output, inputs: inputs)
    }

    mutating func run() throws {
        // Opened first: a path that cannot be written fails now, not after detection has run.
        let target = try AtomicOutputFile(path: output, protecting: inputs)
        let estimation = try noise.estimation()
        let configuration = EnhancerConfiguration(mode: mode, strength: strength, noiseEstimation: estimation)
        let filename = (input as NSString).lastPathComponent
        var intervals: [ClosedRange<Double>] = []
        if let alertIntervals {
            intervals = try AlertIntervals.load(dcaseTable: alertIntervals, filename: filename).intervals
            if intervals.isEmpty {
                Diagnostics.standardError.report("\(alertIntervals) has no row for \(filename): it keeps no alert audible")
            }
        }
        let detector = try model.map { path in
            let loaded = try AlertModel(path: path)
            return try AlertDetector(model: loaded, settings: TrackerSettings(model: loaded))
        }
        let summary = try FileEnhancement.run(
            inputPath: input, output: target, configuration: configuration, alerts: AlertIntervals(intervals),
            detector: detector, encoding: pcm16 ? .pcm16 : .float32)
        let rate = Double(summary.sampleRate)
        let duration = String(format: "%.1f", Double(summary.samples) / rate)
        let dropped = summary.intervalsPastEnd
        if let alertIntervals, dropped > 0 {
            Diagnostics.standardError.report(
                "\(alertIntervals): \(dropped) interval\(dropped == 1 ? "" : "s") for \(filename) "
                    + "start\(dropped == 1 ? "s" : "") after its end (\(duration) s)")
        }
        print(
            "\(output): \(String(format: "%.2f", Double(summary.samples) / rate)) s at \(summary.sampleRate) Hz, "
                + "\(mode.rawValue) mode (delay \(String(format: "%.1f", Double(summary.latencySamples) / rate * 1000)) ms), "
                + "strength \(strength), noise estimate \(estimation.name), \(summary.alertIntervals) alert interval(s) kept audible "
                + "(\(String(format: "%.1f", summary.alertSeconds)) s)")
    }
}

extension EnhancerConfiguration.Mode: ExpressibleByArgument {}
