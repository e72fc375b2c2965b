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
/// Two details the papers leave open decide how much noise is left (measured on the tuning set, stationary
/// noise at 0 dB: together they took the SNR improvement from 6.1 to 8.2 dB; see `Enhancement/README.md`):
/// - **Start.** Seeded from one periodogram, S and its minimum sit far below the noise in many bins (the
///   periodogram scatters exponentially), the onset guard then rejects every frame there, and λ stays at the
///   low seed until the minimum window has turned over twice — 2 s of barely reduced noise. Instead the first
///   frames are averaged with the factor min(α, n/(n+1)) after n frames, which is the plain mean until the
///   recursion takes over (an exponential average without start-up bias), and the minimum search begins once S
///   has settled (n/(n+1) ≥ αs); until then λ takes every frame.
/// - **The DC and Nyquist bins.** The spectrum of a real signal is real there, so their periodogram has one
///   degree of freedom, not two: it scatters far more, its minimum lies further below the mean, and the
///   thresholds δ and γ0·Bmin, set for the complex bins, reject the larger noise values and bias λ low
///   (−1.8 dB in white noise, −3.5 dB at DC in brown noise, where most of that noise's power is). Those two
///   bins therefore take the speech presence and the onset decision of their neighbour and average only
///   their own power.
///
/// `update` takes the one-sided spectrum of a real signal (first and last bins real), as `StreamingSTFT` gives.
///
final class NoisePowerTracker {
    let binCount: Int
    private let timeSmoothing: Float       // αs
    private let presenceSmoothing: Float   // αp
    private let noiseSmoothing: Float      // αd
    private let presenceRatio: Float       // δ
    private let onsetRatio: Float          // γ0·Bmin
    private let minimumWindowFrames: Int   // L
    private let startUpFrames: Int         // n from which n/(n+1) ≥ αd (the slowest recursion): start-up over

    private let smoothedPower: UnsafeMutableBufferPointer<Float>    // S
    private let minimum: UnsafeMutableBufferPointer<Float>          // Smin
    private let runningMinimum: UnsafeMutableBufferPointer<Float>   // Stmp
    private let speechPresence: UnsafeMutableBufferPointer<Float>   // p
    private let noise: UnsafeMutableBufferPointer<Float>            // λ
    private var framesInWindow = 0
    private var framesSinceStart = 0       // n, counted up to startUpFrames
    /// Whether a frame has seeded the estimate since the start (or `reset`); before that it is zero.
    private(set) var hasStarted = false

    /// A floor for the estimate so that digital silence never leads to a division by zero downstream.
    static let smallestPower: Float = 1e-12

    /// A ceiling for every power-to-noise ratio downstream (+100 dB): far above any at which a gain still
    /// changes in 32-bit floats (one above about 10⁸ already gives exactly 1), yet it keeps a loud frame over
    /// the floor (a ratio that overflows to infinity) out of the arithmetic, where ∞/∞ would make every later
    /// frame NaN.
    static let largestRatio: Float = 1e10

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
        startUpFrames = Int((noiseSmoothing / (1 - noiseSmoothing)).rounded(.up))
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
        framesSinceStart = 0
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
        // n/(n+1) while it is below the recursions' own factors, then no limit (1).
        framesSinceStart = min(framesSinceStart + 1, startUpFrames)
        let startFactor = framesSinceStart < startUpFrames
            ? Float(framesSinceStart) / Float(framesSinceStart + 1) : 1
        let powerSmoothing = min(timeSmoothing, startFactor)
        let settling = startFactor < timeSmoothing
        framesInWindow = settling ? 0 : framesInWindow + 1
        let restartWindow = framesInWindow >= minimumWindowFrames
        if restartWindow { framesInWindow = 0 }
        updatePresence(power: power, powerSmoothing: powerSmoothing, settling: settling, restartWindow: restartWindow)
        for bin in 0..<binCount {
            let decider = decidingBin(bin)
            if !settling && power[decider] > onsetRatio * minimum[decider] { continue }
            let noiseFactor = min(noiseSmoothing + (1 - noiseSmoothing) * speechPresence[decider], startFactor)
            noise[bin] = max(noiseFactor * noise[bin] + (1 - noiseFactor) * power[bin], Self.smallestPower)
        }
    }

    /// Lowers the estimate to `limit` wherever it is above it: after an alert, during which the tracker ran on
    /// but its estimate was not used above the level before the alert (`AlertNoiseEstimate`), the alert must not
    /// stay in the estimate either.
    func lower(to limit: UnsafeBufferPointer<Float>) {
        precondition(limit.count == binCount)
        for bin in 0..<binCount { noise[bin] = min(noise[bin], limit[bin]) }
    }

    /// Steps 1–3: the smoothed power, its minimum and the speech-presence probability of every bin.
    private func updatePresence(
        power: UnsafeBufferPointer<Float>, powerSmoothing: Float, settling: Bool, restartWindow: Bool
    ) {
        let last = binCount - 1
        for bin in 0..<binCount {
            // Frequency smoothing with b = [¼, ½, ¼], mirrored at the band edges.
            let below = power[bin == 0 ? min(1, last) : bin - 1]
            let above = power[bin == last ? max(last - 1, 0) : bin + 1]
            let frequencySmoothed = 0.25 * below + 0.5 * power[bin] + 0.25 * above
            let smoothed = powerSmoothing * smoothedPower[bin] + (1 - powerSmoothing) * frequencySmoothed
            smoothedPower[bin] = smoothed
            if settling {
                minimum[bin] = smoothed
                runningMinimum[bin] = smoothed
            } else if restartWindow {
                minimum[bin] = min(runningMinimum[bin], smoothed)
                runningMinimum[bin] = smoothed
            } else {
                minimum[bin] = min(minimum[bin], smoothed)
                runningMinimum[bin] = min(runningMinimum[bin], smoothed)
            }
            let speechIndicator: Float = smoothed > presenceRatio * minimum[bin] ? 1 : 0
            speechPresence[bin] = presenceSmoothing * speechPresence[bin] + (1 - presenceSmoothing) * speechIndicator
        }
    }

    /// The bin whose speech decisions a bin follows: its own, except for the real-valued DC and Nyquist bins,
    /// which follow their neighbour (their own statistics have one degree of freedom; see the type's notes).
    private func decidingBin(_ bin: Int) -> Int {
        guard binCount >= 3 else { return bin }
        if bin == 0 { return 1 }
        if bin == binCount - 1 { return binCount - 2 }
        return bin
    }
}
