import ArgumentParser
import Foundation
import HearAlertKit

/// The model and event-tracking options `listen` and `detect` share: the model decides the defaults.
struct DetectionOptions: ParsableArguments {
    @Option(help: """
        Alert model file (alertnet safetensors); default: $HEARALERT_MODEL, else the bundled \
        models/default.safetensors (looked for here, then in the checkout or install hearalert runs from).
        """)
    var model = ProcessInfo.processInfo.environment["HEARALERT_MODEL"] ?? BundledModel.resolve()

    @Option(name: .customLong("threshold"),
            help: ArgumentHelp("On-threshold for one label, e.g. siren=0.7 (repeatable); default: the model's.",
                               valueName: "LABEL=P"))
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
                               + "at or above threshold·R (0 < R ≤ 1; at most \(EventTracker.riseLookback) s "
                               + "before the crossing, never in a cooldown) instead of at the threshold crossing; "
                               + "announcing is not delayed. Default: the model's onset_rise_ratio, else at the "
                               + "crossing.", valueName: "R"))
    var onsetRiseRatio: Float?

    /// Checks the `--threshold` syntax while parsing, so a typo is reported with this command's usage.
    func validate() throws {
        _ = try labelThresholds()
    }

    /// The loaded model and the tracker settings: the model's defaults with these flags applied.
    func load() throws -> (AlertModel, TrackerSettings) {
        // When no bundled model was found anywhere, say how to name one.
        let hint = model == BundledModel.relativePath ? "give one with --model FILE or $HEARALERT_MODEL" : nil
        let loaded = try ModelFileError.naming(model, hintWhenUnreadable: hint) { try AlertModel(path: model) }
        let overrides = TrackerOverrides(thresholds: try labelThresholds(), smoothingFrames: smoothing,
                                         offRatio: offRatio, minDuration: minDuration, mergeGap: mergeGap,
                                         cooldown: cooldown, onsetLag: onsetLag,
                                         onsetRiseRatio: onsetRiseRatio)
        return (loaded, try TrackerSettings(model: loaded, overrides: overrides))
    }

    private func labelThresholds() throws -> [String: Float] {
        var parsed: [String: Float] = [:]
        for item in thresholds {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let value = Float(parts[1]) else {
                throw ValidationError("--threshold wants LABEL=P, e.g. siren=0.7; got '\(item)'")
            }
            parsed[parts[0]] = value
        }
        return parsed
    }
}

extension AlertFormat: ExpressibleByArgument {}
extension HookRunner.Trigger: ExpressibleByArgument {}
