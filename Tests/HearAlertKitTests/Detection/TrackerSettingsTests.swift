import Testing
@testable import HearAlertKit

@Suite struct TrackerSettingsTests {
    @Test func modelMetadataSetsDefaultsAndFlagsOverrideThem() throws {
        let metadata = #"{"smoothing_frames": 5, "off_ratio": 0.4, "min_duration": 0.2, "merge_gap": 0.8, "cooldown": 2}"#
        let fromModel = try TrackerSettings(labels: ["siren", "car_horn"], thresholds: [0.5, 0.6],
                                            trackerMetadata: metadata)
        #expect(fromModel.smoothingFrames == 5 && fromModel.offRatio == 0.4 && fromModel.minDuration == 0.2)
        #expect(fromModel.mergeGap == 0.8 && fromModel.cooldown == 2 && fromModel.thresholds == [0.5, 0.6])

        let overridden = try TrackerSettings(
            labels: ["siren", "car_horn"], thresholds: [0.5, 0.6], trackerMetadata: metadata,
            overrides: TrackerOverrides(thresholds: ["car_horn": 0.9], tuning: .init(mergeGap: 0.3)))
        #expect(overridden.thresholds == [0.5, 0.9] && overridden.mergeGap == 0.3 && overridden.smoothingFrames == 5)
    }

    @Test func oneThresholdForEveryLabelYieldsToALabelsOwn() throws {
        let every = try TrackerSettings(labels: ["siren", "car_horn", "doorbell"], thresholds: [0.5, 0.6, 0.7],
                                        trackerMetadata: nil, overrides: TrackerOverrides(everyThreshold: 0.9))
        #expect(every.thresholds == [0.9, 0.9, 0.9])
        let mixed = try TrackerSettings(
            labels: ["siren", "car_horn", "doorbell"], thresholds: [0.5, 0.6, 0.7], trackerMetadata: nil,
            overrides: TrackerOverrides(everyThreshold: 0.9, thresholds: ["car_horn": 0.4]))
        #expect(mixed.thresholds == [0.9, 0.4, 0.9])
        #expect(throws: TrackerSettingsError.self) {
            try TrackerSettings(labels: ["siren"], thresholds: [0.5], trackerMetadata: nil,
                                overrides: TrackerOverrides(everyThreshold: 1.2))
        }
    }

    /// Flags over metadata over the fallback: a knob set in an upper layer wins, an unset one falls through.
    @Test func layersMergeKnobByKnob() throws {
        let flags = TrackerSettings.Partial(mergeGap: 0.3, onsetLag: 0.2)
        let metadata = try TrackerSettings.Partial(trackerMetadata: #"{"merge_gap": 2, "cooldown": 4}"#)
        #expect(flags.merged(over: metadata) == TrackerSettings.Partial(mergeGap: 0.3, cooldown: 4, onsetLag: 0.2))
        let settings = try TrackerSettings(labels: ["siren"], thresholds: [0.5], trackerMetadata: #"{"cooldown": 4}"#,
                                           overrides: TrackerOverrides(tuning: flags))
        #expect(settings.mergeGap == 0.3 && settings.cooldown == 4 && settings.onsetLag == 0.2)
        #expect(settings.smoothingFrames == 3 && settings.offRatio == 0.5 && settings.minDuration == 0.1)
    }

    @Test func missingMetadataUsesTheDocumentedFallback() throws {
        let settings = try TrackerSettings(labels: ["siren"], thresholds: [0.5], trackerMetadata: nil)
        #expect(settings.mergeGap == 1.0 && settings.smoothingFrames == 3)
    }

    /// A count must be a JSON integer, as the research mirror (tools/hearalert_train/tracker.py) requires;
    /// `JSONDecoder` alone would read 3.0 as 3. Seconds and ratios may be written either way.
    @Test(arguments: ["3.0", "3e0", "true"])
    func smoothingFramesMustBeAJSONInteger(value: String) {
        let refused = TrackerSettingsError.invalid(
            "the model's tracker metadata 'smoothing_frames' must be a JSON integer (like 3, not 3.0)")
        #expect(throws: refused) {
            try TrackerSettings(labels: ["siren"], thresholds: [0.5],
                                trackerMetadata: #"{"smoothing_frames": \#(value)}"#)
        }
    }

    @Test func integersAreAcceptedWhereverNumbersAre() throws {
        let settings = try TrackerSettings(labels: ["siren"], thresholds: [0.5],
                                           trackerMetadata: #"{"smoothing_frames": 3, "merge_gap": 1, "cooldown": 2e0}"#)
        #expect(settings.smoothingFrames == 3 && settings.mergeGap == 1 && settings.cooldown == 2)
    }

    @Test func badValuesAreRejectedWithAReason() {
        #expect(throws: TrackerSettingsError.unknownLabel("sirene", known: ["siren"])) {
            try TrackerSettings(labels: ["siren"], thresholds: [0.5], trackerMetadata: nil,
                                overrides: TrackerOverrides(thresholds: ["sirene": 0.5]))
        }
        #expect(throws: TrackerSettingsError.self) {
            try TrackerSettings(labels: ["siren"], thresholds: [0.5], trackerMetadata: #"{"merge_gapp": 1}"#)
        }
        #expect(throws: TrackerSettingsError.self) {
            try TrackerSettings(labels: ["siren"], thresholds: [1.5])
        }
        #expect(throws: TrackerSettingsError.self) {
            try TrackerSettings(labels: ["siren"], thresholds: [0.5], tuning: .init(smoothingFrames: 0))
        }
    }
}
