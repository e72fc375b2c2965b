import Foundation

/// Turns a noisy power spectrum and a noise estimate into one real gain per bin.
///
/// Power spectral subtraction with Berouti's over-subtraction and spectral floor (Berouti, Schwartz & Makhoul,
/// "Enhancement of speech corrupted by acoustic noise", ICASSP 1979): |X|² = |Y|² − α·λ, floored at β·|Y|²,
/// with α falling linearly in dB from 4.75 at −5 dB SNR to 1 at 20 dB, so loud speech is barely touched and
/// noise-dominated bins are pushed to the floor. The subtraction is evaluated not on the raw a-posteriori SNR
/// γ = |Y|²/λ, whose frame-to-frame scatter is what sounds like "musical noise", but on the decision-directed
/// a-priori SNR ξ (Ephraim & Malah, "Speech enhancement using a minimum mean-square error short-time spectral
/// amplitude estimator", IEEE TASSP 32(6), 1984; Cappé, IEEE TSAP 2(2), 1994, on why it removes musical noise;
/// Scalart & Vieira Filho, ICASSP 1996, on driving other gain rules with it), using E|Y|² = (1 + ξ)·λ:
///
///     ξ = a·Â²(l−1)/λ + (1 − a)·max(γ − 1, 0),   ξ ≥ ξmin
///     G² = max(1 − α(ξ)/(1 + ξ), β)
///
/// a = 0.98 at a 10 ms frame step (Loizou 2007) and ξmin = −25 dB (Cappé's lower bound on ξ).
/// `strength` s scales the rule: α's maximum is 1 + 3.75·s (Berouti's 4.75 at s = 1) and the floor is
/// −25·s dB in amplitude, so s = 0 is an exact pass-through.
///
/// While an alert is active, a bin whose γ exceeds the alert-dominance threshold passes at unit gain: with the
/// noise estimate frozen from before the alert, such a bin carries the alert (or speech over it).
final class SuppressionGainRule {
    let binCount: Int
    private let decisionDirectedFactor: Float   // a
    private let minimumPrioriSNR: Float         // ξmin
    private let maximumOverSubtraction: Float   // α at −5 dB SNR and below
    private let floorPower: Float               // β
    private let alertDominance: Float           // γ threshold while an alert is active
    private let previousCleanPower: UnsafeMutableBufferPointer<Float>   // Â²(l−1) = G²·|Y|² of the last frame
    private var hasStarted = false

    init(binCount: Int, hopSeconds: Double, strength: Float, alertDominanceDB: Float) {
        precondition(binCount >= 1 && hopSeconds > 0)
        self.binCount = binCount
        decisionDirectedFactor = RecursiveSmoothing.factor(0.98, referenceHopSeconds: 0.010, hopSeconds: hopSeconds)
        minimumPrioriSNR = Self.power(decibels: -25)
        maximumOverSubtraction = 1 + 3.75 * strength
        floorPower = Self.power(decibels: -25 * strength)
        alertDominance = Self.power(decibels: alertDominanceDB)
        previousCleanPower = .allocate(capacity: binCount)
        reset()
    }

    deinit { previousCleanPower.deallocate() }

    /// Forgets the previous frame, as at the start of a stream.
    func reset() {
        previousCleanPower.update(repeating: 0)
        hasStarted = false
    }

    /// Berouti's over-subtraction factor for an SNR ξ (linear): 4.75 (scaled by strength) at −5 dB and
    /// below, 1 at 20 dB and above, linear in dB between.
    func overSubtraction(prioriSNR: Float) -> Float {
        let snrDB = 10 * log10(prioriSNR)
        let fraction = min(max((20 - snrDB) / 25, 0), 1)
        return 1 + (maximumOverSubtraction - 1) * fraction
    }

    /// Writes one gain per bin for this frame's periodogram `power` given the noise estimate `noise`.
    /// Allocates nothing.
    func computeGains(
        power: UnsafeBufferPointer<Float>, noise: UnsafeBufferPointer<Float>, alertActive: Bool,
        into gains: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(power.count == binCount && noise.count == binCount && gains.count == binCount)
        // The first frame has no previous estimate: Ephraim & Malah start the recursion from γ − 1 alone.
        let memory: Float = hasStarted ? decisionDirectedFactor : 0
        hasStarted = true
        for bin in 0..<binCount {
            let noisePower = max(noise[bin], NoisePowerTracker.smallestPower)
            let posterioriSNR = power[bin] / noisePower
            let measured = max(posterioriSNR - 1, 0)
            let prioriSNR = max(
                memory * previousCleanPower[bin] / noisePower + (1 - memory) * measured, minimumPrioriSNR)
            let subtracted = 1 - overSubtraction(prioriSNR: prioriSNR) / (1 + prioriSNR)
            var gainPower = max(subtracted, floorPower)
            if alertActive && posterioriSNR >= alertDominance { gainPower = 1 }
            gains[bin] = gainPower.squareRoot()
            previousCleanPower[bin] = gainPower * power[bin]
        }
    }

    static func power(decibels: Float) -> Float { pow(10, decibels / 10) }
}
