import Foundation

/// Where the speech enhancer's noise power per bin comes from, hop by hop: the classical MCRA tracker
/// (`NoisePowerTracker`) or a small network (`LearnedNoiseEstimator`). The gain rule and the alert handling
/// around it are the same for both, so one can replace the other without touching the signal path.
///
/// Every method runs on the processing thread and allocates nothing.
protocol NoiseEstimator: AnyObject {
    /// Whether a frame has seeded the estimate since the start (or `reset`); before that it is zero.
    var hasStarted: Bool { get }
    /// The current noise power per bin, in the units of the power spectra passed to `update`.
    var noisePower: UnsafeBufferPointer<Float> { get }
    /// Takes one frame's periodogram |Y(k)|² (one-sided, first and last bins real).
    func update(power: UnsafeBufferPointer<Float>)
    /// After an alert, during which the estimate was used only where it did not rise (`AlertNoiseEstimate`):
    /// lowers whatever memory the estimator keeps to `limit`, so the alert does not linger as noise.
    func lower(to limit: UnsafeBufferPointer<Float>)
    /// Forgets everything, as at the start of a stream.
    func reset()
}

extension NoisePowerTracker: NoiseEstimator {}

/// Which noise estimator a `SpeechEnhancer` runs (`EnhancerConfiguration.noiseEstimation`).
public enum NoiseEstimation: Sendable, Equatable {
    /// Minima-controlled recursive averaging (`NoisePowerTracker`): no model file, follows slow changes.
    case mcra
    /// The network in the alertnet weight file at `modelPath` (task `noise_estimation`) gives per band the share
    /// of the smoothed power that is noise (`LearnedNoiseEstimator`); the file is loaded when the enhancer is made.
    case learned(modelPath: String)

    /// How `hearalert` names it (`--noise-estimator`).
    public var name: String {
        switch self {
        case .mcra: return "mcra"
        case .learned: return "learned"
        }
    }
}
