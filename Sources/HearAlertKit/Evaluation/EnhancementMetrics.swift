import Foundation

/// Objective scores of an enhanced signal against its clean reference, as pure functions of sample buffers.
///
/// Both buffers must be sample-aligned (compensate the enhancer's `latencySamples` first) and of equal length.
/// Sums run in double precision. `tools/score_enhancement.py` computes the same definitions in numpy, so
/// figures from Swift and from the scoring report agree.
public enum EnhancementMetrics {
    /// Global SNR in dB: 10·log10(Σ s² / Σ (s − ŝ)²), where s is the clean reference and ŝ the estimate
    /// (the "SNR" of Loizou, "Speech Enhancement: Theory and Practice", 2007, §11.1). +∞ when ŝ = s exactly.
    public static func signalToNoiseRatio(reference: [Float], estimate: [Float]) -> Double {
        precondition(reference.count == estimate.count, "reference and estimate differ in length")
        var signal = 0.0
        var error = 0.0
        for (clean, estimated) in zip(reference, estimate) {
            signal += Double(clean) * Double(clean)
            error += (Double(clean) - Double(estimated)) * (Double(clean) - Double(estimated))
        }
        return 10 * log10(signal / error)
    }

    /// The clamp of each frame's SNR in segmental SNR: frames of silence or of perfect reconstruction would
    /// otherwise dominate the mean (Hansen & Pellom, "An effective quality evaluation protocol for speech
    /// enhancement algorithms", ICSLP 1998).
    public static let segmentalSNRRange: ClosedRange<Double> = -10...35

    /// Segmental SNR in dB (Quackenbush, Barnwell & Clements, "Objective Measures of Speech Quality", 1988):
    /// the mean over frames of 10·log10(Σ s² / Σ (s − ŝ)²), each frame's value clamped to
    /// `segmentalSNRRange`. Frames are rectangular, `frameLength` samples every `hopLength` (Loizou's
    /// `comp_snr`: 30 ms frames at 75 % overlap, i.e. 480 and 120 at 16 kHz); only whole frames count, from
    /// sample 0. A frame whose reference is silent counts at the lower clamp, whatever the estimate (as in
    /// Loizou's implementation, where signal energy 0 gives 10·log10(ε)). Returns nil when the signal is
    /// shorter than one frame.
    public static func segmentalSNR(
        reference: [Float], estimate: [Float], frameLength: Int, hopLength: Int
    ) -> Double? {
        precondition(reference.count == estimate.count, "reference and estimate differ in length")
        precondition(frameLength >= 1 && hopLength >= 1)
        guard reference.count >= frameLength else { return nil }
        let frameCount = (reference.count - frameLength) / hopLength + 1
        var total = 0.0
        for frame in 0..<frameCount {
            let start = frame * hopLength
            var signal = 0.0
            var error = 0.0
            for index in start..<(start + frameLength) {
                let clean = Double(reference[index])
                let difference = clean - Double(estimate[index])
                signal += clean * clean
                error += difference * difference
            }
            let frameSNR = signal == 0 ? segmentalSNRRange.lowerBound : 10 * log10(signal / error)
            total += min(max(frameSNR, segmentalSNRRange.lowerBound), segmentalSNRRange.upperBound)
        }
        return total / Double(frameCount)
    }

    /// Alert energy retained, in dB: how loud the alert component still is in the output, relative to the
    /// alert alone. The output's alert component is its orthogonal projection on the alert signal a (the
    /// "target" component of BSS Eval: Vincent, Gribonval & Févotte, IEEE TASLP 14(4), 2006), ⟨ŷ, a⟩/⟨a, a⟩·a,
    /// so the retained energy is 20·log10(⟨ŷ, a⟩ / ⟨a, a⟩): 0 dB is untouched, −6 dB half the amplitude.
    /// Noise and speech, uncorrelated with the alert, do not count. Pass only the samples during alerts.
    /// Returns nil when the alert is silent or the projection is not positive (the alert was removed or
    /// inverted).
    public static func alertEnergyRetained(alert: [Float], output: [Float]) -> Double? {
        precondition(alert.count == output.count, "alert and output differ in length")
        var correlation = 0.0
        var energy = 0.0
        for (alertSample, outputSample) in zip(alert, output) {
            correlation += Double(alertSample) * Double(outputSample)
            energy += Double(alertSample) * Double(alertSample)
        }
        guard energy > 0, correlation > 0 else { return nil }
        return 20 * log10(correlation / energy)
    }
}
