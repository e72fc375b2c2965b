import Foundation

/// What a weight file's network is for: the `task` key of its metadata (`CSources/alertnet/FORMAT.md`).
///
/// An alert detector and the speech enhancer's noise estimator share the file format and the loader, and both
/// end in per-output sigmoids, so a file swapped into the wrong place would load and run and give nonsense.
/// Each user therefore names the task it needs (`AlertModel.require`), and the wrong file is refused in one line.
public enum ModelTask: String, Sendable, CaseIterable {
    /// Per-label alert probabilities over a window of features (files without a `task` key are detectors).
    case alertDetection = "alert_detection"
    /// Per-band noise fractions for the speech enhancer (`LearnedNoiseEstimator`).
    case noiseEstimation = "noise_estimation"

    /// What the task's file is, for messages ("an alert detector").
    public var fileDescription: String {
        switch self {
        case .alertDetection: return "an alert detector"
        case .noiseEstimation: return "a noise estimator for the speech enhancer"
        }
    }
}
