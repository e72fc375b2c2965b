import Foundation

/// Follows the noise power in every frequency bin continuously — through speech, without a noise-only lead-in —
/// so that the enhancer keeps up when a fan starts or a bus passes.
///
/// Minima-controlled recursive averaging (MCRA): Cohen & Berdugo, "Noise estimation by minima controlled
/// recursive averaging for robust speech enhancement", IEEE Signal Processing Letters 9(1):12–15, 2002.
/// Per bin k and frame l:
/// 1. the periodogram is smoothed across frequency (b = [¼, ½, ¼]) and over time, S = αs·S + (1−αs)·Sf;
/// 2. Smin is the minimum of S over the last L…2L frames (two running minima, swapped every L frames);
/// 3. speech is taken as present where S > δ·Smin, and its probability p = αp·p + (1−αp)·I is smoothed;
///    as a guard against speech onsets, which S and p follow only after a few frames, a bin whose periodogram
///    exceeds γ0·Bmin·Smin is left out of the noise average in that frame — the rough speech decision of IMCRA
///    (Cohen, "Noise spectrum estimation in adverse environments: improved minima controlled recursive
///    averaging", IEEE TSAP 11(5), 2003), with its γ0 = 4.6 (noise alone exceeds it in 1 % of frames) and
///    Bmin = 1.66, the bias of a minimum of smoothed periodograms (1.4 to 1.6 for our smoothing, simulated);
/// 4. the noise estimate λ is averaged with a factor that approaches 1 where speech is probable,
///    α̃ = αd + (1−αd)·p, λ = α̃·λ + (1−α̃)·|Y|².
/// Parameters are the paper's (αs = 0.8, αp = 0.2, αd = 0.95, δ = 5, L ≈ 1 s) as used in Loizou's reference
/// implementation at a 10 ms frame step ("Speech Enhancement: Theory and Practice", 2007), converted to time
/// constants so that any hop length behaves alike.
///
/// The enhancer stops calling `update` while an alert sounds: a siren lasting longer than the minimum window
/// would otherwise become "noise" and be suppressed — the failure of hearing-aid noise reduction this project
/// exists to avoid.
final class NoisePowerTracker {
    let binCount: Int
    private let timeSmoothing: Float       // αs
    private let presenceSmoothing: Float   // αp
    private let noiseSmoothing: Float      // αd
    private let presenceRatio: Float       // δ
    private let onsetRatio: Float          // γ0·Bmin
    private let minimumWindowFrames: Int   // L

    private let smoothedPower: UnsafeMutableBufferPointer<Float>    // S
    private let minimum: UnsafeMutableBufferPointer<Float>          // Smin
    private let runningMinimum: UnsafeMutableBufferPointer<Float>   // Stmp
    private let speechPresence: UnsafeMutableBufferPointer<Float>   // p
    private let noise: UnsafeMutableBufferPointer<Float>            // λ
    private var framesInWindow = 0
    private var hasStarted = false

    /// A floor for the estimate so that digital silence never leads to a division by zero downstream.
    static let smallestPower: Float = 1e-12

    /// The current noise power per bin, in the units of the power spectra passed to `update`.
    var noisePower: UnsafeBufferPointer<Float> { UnsafeBufferPointer(noise) }

    init(binCount: Int, hopSeconds: Double) {
        precondition(binCount >= 1 && hopSeconds > 0)
        self.binCount = binCount
        let referenceHop = 0.010
        timeSmoothing = RecursiveSmoothing.factor(0.8, referenceHopSeconds: referenceHop, hopSeconds: hopSeconds)
        presenceSmoothing = RecursiveSmoothing.factor(0.2, referenceHopSeconds: referenceHop, hopSeconds: hopSeconds)
        noiseSmoothing = RecursiveSmoothing.factor(0.95, referenceHopSeconds: referenceHop, hopSeconds: hopSeconds)
        presenceRatio = 5
        onsetRatio = 4.6 * 1.66
        minimumWindowFrames = max(1, Int((1.0 / hopSeconds).rounded()))
        smoothedPower = .allocate(capacity: binCount)
        minimum = .allocate(capacity: binCount)
        runningMinimum = .allocate(capacity: binCount)
        speechPresence = .allocate(capacity: binCount)
        noise = .allocate(capacity: binCount)
        reset()
    }

    deinit {
        for buffer in [smoothedPower, minimum, runningMinimum, speechPresence, noise] { buffer.deallocate() }
    }

    /// Forgets everything, as at the start of a stream; the first frame then seeds the estimate.
    func reset() {
        for buffer in [smoothedPower, minimum, runningMinimum, speechPresence, noise] {
            buffer.update(repeating: 0)
        }
        framesInWindow = 0
        hasStarted = false
    }

    /// Takes one frame's periodogram |Y(k)|² (`binCount` values). Allocates nothing.
    func update(power: UnsafeBufferPointer<Float>) {
        precondition(power.count == binCount, "power spectrum has \(power.count) bins, expected \(binCount)")
        if !hasStarted {
            for bin in 0..<binCount {
                let seed = max(power[bin], Self.smallestPower)
                smoothedPower[bin] = seed
                minimum[bin] = seed
                runningMinimum[bin] = seed
                noise[bin] = seed
            }
            hasStarted = true
            return
        }
        framesInWindow += 1
        let restartWindow = framesInWindow >= minimumWindowFrames
        if restartWindow { framesInWindow = 0 }
        let last = binCount - 1
        for bin in 0..<binCount {
            // Frequency smoothing with b = [¼, ½, ¼], mirrored at the band edges.
            let below = power[bin == 0 ? min(1, last) : bin - 1]
            let above = power[bin == last ? max(last - 1, 0) : bin + 1]
            let frequencySmoothed = 0.25 * below + 0.5 * power[bin] + 0.25 * above
            let smoothed = timeSmoothing * smoothedPower[bin] + (1 - timeSmoothing) * frequencySmoothed
            smoothedPower[bin] = smoothed
            if restartWindow {
                minimum[bin] = min(runningMinimum[bin], smoothed)
                runningMinimum[bin] = smoothed
            } else {
                minimum[bin] = min(minimum[bin], smoothed)
                runningMinimum[bin] = min(runningMinimum[bin], smoothed)
            }
            let speechIndicator: Float = smoothed > presenceRatio * minimum[bin] ? 1 : 0
            let presence = presenceSmoothing * speechPresence[bin] + (1 - presenceSmoothing) * speechIndicator
            speechPresence[bin] = presence
            if power[bin] > onsetRatio * minimum[bin] { continue }
            let noiseFactor = noiseSmoothing + (1 - noiseSmoothing) * presence
            noise[bin] = max(noiseFactor * noise[bin] + (1 - noiseFactor) * power[bin], Self.smallestPower)
        }
    }
}
