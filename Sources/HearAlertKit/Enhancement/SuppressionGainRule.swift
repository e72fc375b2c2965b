import Foundation

/// Turns a noisy power spectrum and a noise estimate into one real gain per bin.
///
/// Spectral subtraction in its parametric-Wiener form (Lim & Oppenheim, "Enhancement and bandwidth compression
/// of noisy speech", Proc. IEEE 67(12), 1979), G = 1 − α·λ/E|Y|², with Berouti's over-subtraction factor α and
/// spectral floor (Berouti, Schwartz & Makhoul, "Enhancement of speech corrupted by acoustic noise", ICASSP
/// 1979): α falls linearly in dB from its maximum at −5 dB SNR to 1 at 20 dB, so loud speech is barely touched
/// and noise-dominated bins are pushed to the floor. The noisy power is not the raw periodogram, whose
/// frame-to-frame scatter is what sounds like "musical noise", but E|Y|² = (1 + ξ)·λ from the decision-directed
/// a-priori SNR ξ (Ephraim & Malah, "Speech enhancement using a minimum mean-square error short-time spectral
/// amplitude estimator", IEEE TASSP 32(6), 1984; Cappé, IEEE TSAP 2(2), 1994, on why it removes musical noise;
/// Scalart & Vieira Filho, ICASSP 1996, on driving other gain rules with it):
///
///     ξ = a·Â²(l−1)/λ + (1 − a)·max(γ − 1, 0),   ξ ≥ ξmin,   γ = |Y|²/λ
///     G = max(1 − α(ξ)/(1 + ξ), Gmin)                      (α = 1: the Wiener gain ξ/(1 + ξ))
///     Â²(l) = W²·|Y|² + W·λ,   W = ξ/(1 + ξ)
///
/// Â² is the MMSE estimate of the clean power under the Gaussian model, E{|X|² | Y}; it is kept free of α and
/// the floor so that over-subtraction does not feed back into ξ and compound (measured: with the applied gain
/// in the recursion, every step of α cost STOI). ξmin = −25 dB (Cappé's lower bound on ξ), and ξ is capped at
/// +100 dB (`NoisePowerTracker.largestRatio`) only so that a frame far above the noise floor cannot overflow
/// into ∞/∞; a and α's range depend on the mode (`Tuning`).
///
/// `strength` s scales the rule: α's maximum is 1 + (αfull − 1)·s and the floor Gmin is −30·s dB, so s = 0 is
/// an exact pass-through. Berouti's own maximum (4.75) is meant for subtracting from the raw periodogram; on
/// the smoothed ξ it removes speech: on the tuning set it cost 0.05 STOI at 0 dB input SNR, so it is not offered.
///
/// While an alert is active the noise estimate never rises above its level before the alert
/// (`AlertNoiseEstimate`, chosen by the enhancer), bins that carry the alert
/// (`AlertBinPresence`: smoothed power above the estimate by the dominance threshold) pass at unit gain, and no
/// other bin is attenuated by more than the alert suppression limit: parts of an alert too weak to be told
/// from the noise are then reduced by a few dB, not silenced. The path without an alert is unchanged.
final class SuppressionGainRule {
    let binCount: Int
    private let decisionDirectedFactor: Float   // a
    private let minimumPrioriSNR: Float         // ξmin
    private let maximumOverSubtraction: Float   // α at −5 dB SNR and below
    private let floorGain: Float                // Gmin
    private let alertGainLimit: Float           // lowest gain while an alert is active
    private let alertPresence: AlertBinPresence
    private let previousCleanPower: UnsafeMutableBufferPointer<Float>   // Â²(l−1)
    private let prioriSNRs: UnsafeMutableBufferPointer<Float>           // this frame's ξ, per bin
    private var hasStarted = false

    init(
        binCount: Int, hopSeconds: Double, strength: Float, alertDominanceDB: Float, alertSuppressionLimitDB: Float,
        tuning: Tuning
    ) {
        precondition(binCount >= 1 && hopSeconds > 0)
        self.binCount = binCount
        decisionDirectedFactor = RecursiveSmoothing.factor(
            tuning.decisionDirectedFactor, referenceHopSeconds: 0.010, hopSeconds: hopSeconds)
        minimumPrioriSNR = Self.power(decibels: -25)
        maximumOverSubtraction = 1 + (tuning.fullStrengthOverSubtraction - 1) * strength
        floorGain = Self.power(decibels: -30 * strength).squareRoot()
        alertGainLimit = Self.power(decibels: -alertSuppressionLimitDB).squareRoot()
        alertPresence = AlertBinPresence(binCount: binCount, hopSeconds: hopSeconds, dominanceDB: alertDominanceDB)
        previousCleanPower = .allocate(capacity: binCount)
        prioriSNRs = .allocate(capacity: binCount)
        prioriSNRs.initialize(repeating: 0)
        reset()
    }

    deinit {
        previousCleanPower.deallocate()
        prioriSNRs.deallocate()
    }

    /// Forgets the previous frame, as at the start of a stream.
    func reset() {
        previousCleanPower.update(repeating: 0)
        hasStarted = false
        alertPresence.stop()
    }

    /// The over-subtraction factor for an SNR ξ (linear): its maximum at −5 dB and below, 1 at 20 dB and
    /// above, linear in dB between (the shape of Berouti's α = α0 − (3/20)·SNR).
    func overSubtraction(prioriSNR: Float) -> Float {
        // Most bins sit outside −5…20 dB (noise at ξmin, loud speech): skip the logarithm there.
        if prioriSNR >= Self.upperSNR { return 1 }
        if prioriSNR <= Self.lowerSNR { return maximumOverSubtraction }
        let snrDB = 10 * log10(prioriSNR)
        return 1 + (maximumOverSubtraction - 1) * (20 - snrDB) / 25
    }

    private static let upperSNR: Float = 100         // 20 dB
    private static let lowerSNR: Float = 0.316_227_77  // −5 dB

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
        if alertActive {
            alertPresence.follow(power: power, noise: noise)
        } else {
            alertPresence.stop()
        }
        // Three passes with the same arithmetic per bin as one: the first and last have no branches the
        // compiler cannot turn into selects, so they run on vectors; only the gain itself takes a logarithm.
        for bin in 0..<binCount {
            let noisePower = max(noise[bin], NoisePowerTracker.smallestPower)
            let posterioriSNR = power[bin] / noisePower
            let measured = max(posterioriSNR - 1, 0)
            prioriSNRs[bin] = min(max(
                memory * previousCleanPower[bin] / noisePower + (1 - memory) * measured, minimumPrioriSNR),
                NoisePowerTracker.largestRatio)
        }
        for bin in 0..<binCount {
            let prioriSNR = prioriSNRs[bin]
            var gain = max(1 - overSubtraction(prioriSNR: prioriSNR) / (1 + prioriSNR), floorGain)
            if alertActive { gain = alertPresence.carriesAlert(bin) ? 1 : max(gain, alertGainLimit) }
            gains[bin] = gain
        }
        for bin in 0..<binCount {
            let noisePower = max(noise[bin], NoisePowerTracker.smallestPower)
            let wiener = prioriSNRs[bin] / (1 + prioriSNRs[bin])
            previousCleanPower[bin] = wiener * wiener * power[bin] + wiener * noisePower
        }
    }

    static func power(decibels: Float) -> Float { pow(10, decibels / 10) }
}

extension SuppressionGainRule {
    /// The constants of the rule that differ between the modes, chosen on the tuning set (seed 7 of
    /// `tools/score_enhancement.py make-set`; figures in `Enhancement/README.md`).
    struct Tuning: Equatable {
        /// The decision-directed weight a, quoted at a 10 ms frame step and converted to the hop.
        let decisionDirectedFactor: Double
        /// α at −5 dB SNR and below at strength 1.
        let fullStrengthOverSubtraction: Float

        /// Higher quality keeps the literature's a = 0.98 (Loizou 2007) and Berouti's slope up to α = 1.75.
        /// The low-latency mode's 16 ms frames every 4 ms scatter more and overlap more: there a shorter
        /// decision-directed memory (0.95) and gentler over-subtraction (α up to 1.36, 1.25 at the default
        /// strength) kept more speech — STOI +0.016 in stationary noise and +0.008 in babble at 0 dB, PESQ up
        /// to +0.05 — with SNR improvements from −0.06 dB (babble, 0 dB) to +0.44 dB (stationary, 10 dB); the
        /// same change in the higher-quality mode lost 0.6 dB SNR and 0.06 PESQ at 0 dB.
        init(mode: EnhancerConfiguration.Mode) {
            switch mode {
            case .lowLatency, .lowestLatency: self.init(decisionDirectedFactor: 0.95, fullStrengthOverSubtraction: 1.36)
            case .higherQuality: self.init(decisionDirectedFactor: 0.98, fullStrengthOverSubtraction: 1.75)
            }
        }

        init(decisionDirectedFactor: Double, fullStrengthOverSubtraction: Float) {
            self.decisionDirectedFactor = decisionDirectedFactor
            self.fullStrengthOverSubtraction = fullStrengthOverSubtraction
        }
    }
}
