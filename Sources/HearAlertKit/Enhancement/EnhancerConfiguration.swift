import Foundation

/// How the speech enhancer trades delay for frequency resolution and how hard it suppresses noise.
///
/// Hearing-aid wearers tolerate at most 10 ms from microphone to ear (delay beyond that makes one's own voice
/// sound echoey): `listen` plays the lowest-latency mode for that, and the default strength removes most
/// steady noise without making speech sound underwater.
public struct EnhancerConfiguration: Sendable, Equatable {
    /// The analysis/synthesis framing; each mode's delay is stated in `Enhancement/README.md`.
    public enum Mode: String, Sendable, Equatable, CaseIterable {
        /// 16 ms asymmetric analysis window with a 8 ms synthesis window and a 4 ms hop (Mauler & Martin 2007):
        /// 4 ms algorithmic delay plus the 4 ms it takes to collect a hop, 8 ms in all at any sample rate.
        case lowLatency = "low-latency"
        /// The same 16 ms asymmetric analysis window with a 4 ms synthesis window and a 2 ms hop: 2 ms
        /// algorithmic delay plus 2 ms to collect a hop, 4 ms in all, at twice the low-latency mode's CPU per
        /// second. What `listen` plays with MCRA, so that microphone to ear stays within 10 ms.
        case lowestLatency = "lowest-latency"
        /// 32 ms square-root-Hann windows at 75 % overlap: finer frequency resolution, so less musical noise
        /// and better separation of speech harmonics, for offline use or listeners who tolerate 32 ms.
        case higherQuality = "higher-quality"
    }

    /// The analysis/synthesis framing.
    public var mode: Mode
    /// 0 passes the input through unchanged; 1 over-subtracts by up to 1.36 in the low-latency mode and 1.75 in
    /// the higher-quality one (at −5 dB SNR), down to a −30 dB spectral floor. Values in between scale both
    /// linearly (floor in dB); the default 0.7 gives 1.25 (low latency) or 1.525 and −21 dB (see
    /// `SuppressionGainRule` for why the over-subtraction stays far below Berouti's 4.75).
    public var strength: Float
    /// While an alert is active, bins whose noisy power, averaged over about 0.1 s and three neighbouring bins,
    /// exceeds the noise estimate (which may fall but not rise during the alert) by this many dB are taken to
    /// carry the alert and pass at unit gain.
    /// Low, because an average of noise alone stays close to its estimate while an alert stands above it.
    public var alertDominanceDB: Float
    /// While an alert is active, no bin is attenuated by more than this many dB: parts of the alert that cannot
    /// be told from the noise stay audible, at the price of a little more noise while the alert sounds.
    public var alertSuppressionLimitDB: Float
    /// Where the noise estimate comes from: MCRA (the library's default, needs no file) or a learned estimator's
    /// weight file (`Enhancement/README.md`, "Learned noise estimate").
    public var noiseEstimation: NoiseEstimation

    /// The defaults are what `enhance` runs, and what `listen` plays but for its mode (lowest latency, with
    /// MCRA): low latency, strength 0.7, and while an alert sounds, bins 1 dB
    /// above the noise passed and the rest reduced by 6 dB at most (chosen on the alert corpus; see
    /// `Enhancement/README.md`).
    public init(
        mode: Mode = .lowLatency, strength: Float = 0.7, alertDominanceDB: Float = 1, alertSuppressionLimitDB: Float = 6,
        noiseEstimation: NoiseEstimation = .mcra
    ) {
        self.mode = mode
        self.strength = strength
        self.alertDominanceDB = alertDominanceDB
        self.alertSuppressionLimitDB = alertSuppressionLimitDB
        self.noiseEstimation = noiseEstimation
    }

    /// Checks the values a user can get wrong, once, before any audio flows.
    public func validate() throws(EnhancerError) {
        guard strength.isFinite, (0...1).contains(strength) else {
            throw .invalidConfiguration("strength must be between 0 and 1, got \(strength)")
        }
        guard alertDominanceDB.isFinite, alertDominanceDB >= 0 else {
            throw .invalidConfiguration("alert dominance must be a non-negative number of dB, got \(alertDominanceDB)")
        }
        guard alertSuppressionLimitDB.isFinite, alertSuppressionLimitDB >= 0 else {
            throw .invalidConfiguration(
                "alert suppression limit must be a non-negative number of dB, got \(alertSuppressionLimitDB)")
        }
    }
}

/// Why the speech enhancer cannot be built or run.
public enum EnhancerError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// A configuration value out of its range.
    case invalidConfiguration(String)
    /// A sample rate the framing cannot serve.
    case unsupportedSampleRate(Int)
    /// The learned noise estimator's file cannot be used (unreadable, another task, another framing...).
    case invalidNoiseModel(path: String, reason: String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let reason):
            return "enhancer: \(reason)"
        case .unsupportedSampleRate(let rate):
            return "enhancer: sample rate \(rate) Hz is not supported (8000...96000 Hz)"
        case .invalidNoiseModel(let path, let reason):
            return "enhancer: noise model \(path): \(reason)"
        }
    }

    public var errorDescription: String? { description }
}
