import ArgumentParser
import Foundation
import HearAlertKit

/// The model and event-tracking options `listen` and `detect` share: the model decides the defaults.
struct DetectionOptions: ParsableArguments {
    @Option(name: .customLong("model"), help: ArgumentHelp("""
        Alert model file (alertnet safetensors); default: $HEARALERT_MODEL, else the bundled \
        default.safetensors, looked for in ./models/, then beside the executable (<prefix>/share/hearalert/ \
        of an install, models/ of the checkout it was built in).
        """, valueName: "FILE"))
    var modelFile: String?

    // `.unconditional`, like the numbers below: "-0.5" is a value to refuse with a reason, not an option.
    @Option(name: .customLong("threshold"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("On-threshold for one label, e.g. siren=0.7, or for every label, e.g. 0.9 "
                               + "(repeatable; a label's own value wins). Higher: fewer false alarms, later and "
                               + "fewer detections. Default: the model's.", valueName: "[LABEL=]P"))
    var thresholds: [String] = []

    // The numbers below parse `.unconditional`ly so that "-1" is read as a value and refused with a reason
    // instead of being taken for an option ("missing value for --cooldown").
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Decisions averaged before thresholds apply (1 = none).", valueName: "N"))
    var smoothing: Int?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Off-threshold as a fraction of the on-threshold (hysteresis).", valueName: "R"))
    var offRatio: Float?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Seconds an alert must last before it is announced.", valueName: "S"))
    var minDuration: Double?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Pauses shorter than this stay inside one event (beeping alarms).", valueName: "S"))
    var mergeGap: Double?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Seconds after an event ends before its label may start another.", valueName: "S"))
    var cooldown: Double?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Stamp each decision at the model window's end minus S seconds (the typical time from "
                               + "an alert's onset to the end of the first window that fires); default: the model's "
                               + "onset_lag, else the window's centre.", valueName: "S"))
    var onsetLag: Double?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Stamp an onset where the score's rise began: the first of its run of decisions "
                               + "at or above threshold·R (0 < R ≤ 1; at most --onset-rise-lookback seconds "
                               + "before the crossing, never in a cooldown) instead of at the threshold crossing; "
                               + "announcing is not delayed. Default: the model's onset_rise_ratio, else at the "
                               + "crossing.", valueName: "R"))
    var onsetRiseRatio: Float?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("How far before the threshold crossing (seconds > 0) a rise may stamp the onset "
                               + "(with an onset rise ratio). Default: the model's onset_rise_lookback, else "
                               + "\(TrackerSettings.Partial.fallback.onsetRiseLookback!).", valueName: "S"))
    var onsetRiseLookback: Double?

    /// Checks the `--threshold` syntax while parsing, so a typo is reported with this command's usage.
    func validate() throws {
        _ = try parsedThresholds()
    }

    /// The model file to load: `--model`, else `$HEARALERT_MODEL`, else the bundled model (`BundledModel`).
    func modelPath() throws -> String {
        if let modelFile {
            guard !modelFile.isEmpty else { throw ModelChoiceError.emptyOption }
            return modelFile
        }
        if let variable = ProcessInfo.processInfo.environment["HEARALERT_MODEL"] {
            guard !variable.isEmpty else { throw ModelChoiceError.emptyVariable }
            return variable
        }
        let bundled = BundledModel.resolve(BundledModel.detector)
        guard let path = bundled.path else { throw ModelChoiceError.noBundledModel(tried: bundled.tried) }
        return path
    }

    /// The model file as an input no output may overwrite; nil when none can be found (loading says why later).
    var modelInput: CommandInput? {
        (try? modelPath()).map { CommandInput(role: "model file", path: $0) }
    }

    /// The loaded model and the tracker settings: the model's defaults with these flags applied.
    func load() throws -> (AlertModel, TrackerSettings) {
        let model = try modelPath()
        let loaded = try ModelFileError.naming(model) {
            let loaded = try AlertModel(path: model)
            try loaded.require(.alertDetection)
            return loaded
        }
        let (every, byLabel) = try parsedThresholds()
        let overrides = TrackerOverrides(everyThreshold: every, thresholds: byLabel, tuning: tuning)
        return (loaded, try TrackerSettings(model: loaded, overrides: overrides))
    }

    /// The knobs these flags set; the model (or the fallback) decides the others.
    private var tuning: TrackerSettings.Partial {
        var tuning = TrackerSettings.Partial()
        tuning.smoothingFrames = smoothing
        tuning.offRatio = offRatio
        tuning.minDuration = minDuration
        tuning.mergeGap = mergeGap
        tuning.cooldown = cooldown
        tuning.onsetLag = onsetLag
        tuning.onsetRiseRatio = onsetRiseRatio
        tuning.onsetRiseLookback = onsetRiseLookback
        return tuning
    }

    /// `--threshold` values: the last bare `P` (every label) and the `LABEL=P` ones.
    private func parsedThresholds() throws -> (every: Float?, byLabel: [String: Float]) {
        var every: Float?
        var byLabel: [String: Float] = [:]
        for item in thresholds {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            if parts.count == 1, let value = Float(item) {
                every = value
            } else if parts.count == 2, !parts[0].isEmpty, let value = Float(parts[1]) {
                byLabel[parts[0]] = value
            } else {
                throw ValidationError("--threshold wants LABEL=P (e.g. siren=0.7) or P for every label (e.g. 0.9); "
                                      + "got '\(item)'")
            }
        }
        return (every, byLabel)
    }
}

extension AlertFormat: ExpressibleByArgument {}
extension HookRunner.Trigger: ExpressibleByArgument {}
