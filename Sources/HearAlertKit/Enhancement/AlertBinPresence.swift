import Foundation

/// While an alert is flagged, decides which frequency bins carry it, so that they pass at unit gain.
///
/// A bin carries the alert where its noisy power, smoothed across the bin and its two neighbours
/// (¼, ½, ¼) and over time (factor 0.9 at a 10 ms step, τ ≈ 95 ms), exceeds the noise estimate (which may fall
/// during the alert but not rise, `AlertNoiseEstimate`) by the dominance threshold. The single periodogram of
/// one frame, which this replaced with a 3 dB threshold, scatters exponentially in noise: it let 40 % of the noise's energy through at unit gain
/// in random bins (musical noise), yet missed parts of alerts 1–3 dB above the noise (test_00036 of the alert
/// corpus, a doorbell at −8.8 dB SNR, kept −2.7 dB of its energy). Averaged, noise stays within about 1 dB
/// of its estimate while a steady alert component stands above it; the spread over three bins also keeps the
/// skirts of a tone's spectral peak. Figures in `Enhancement/README.md`, "Alerts kept audible".
///
/// The average starts afresh from the first flagged frame (the ratio of that frame alone) and is not kept
/// while no alert is flagged, so the path without an alert does no extra work. Allocates nothing per frame.
final class AlertBinPresence {
    let binCount: Int
    private let smoothing: Float
    private let threshold: Float
    private let smoothedRatio: UnsafeMutableBufferPointer<Float>
    private var isFollowing = false

    /// `dominanceDB`: how far above the noise estimate the smoothed power must be.
    init(binCount: Int, hopSeconds: Double, dominanceDB: Float) {
        precondition(binCount >= 1 && hopSeconds > 0)
        self.binCount = binCount
        smoothing = RecursiveSmoothing.factor(0.9, referenceHopSeconds: 0.010, hopSeconds: hopSeconds)
        threshold = pow(10, dominanceDB / 10)
        smoothedRatio = .allocate(capacity: binCount)
        smoothedRatio.initialize(repeating: 0)
    }

    deinit { smoothedRatio.deallocate() }

    /// Forgets the average: the next `follow` starts it again from its own frame.
    func stop() { isFollowing = false }

    /// Folds this frame's periodogram `power`, relative to the alert's noise estimate `noise`, into the average.
    func follow(power: UnsafeBufferPointer<Float>, noise: UnsafeBufferPointer<Float>) {
        precondition(power.count == binCount && noise.count == binCount)
        let memory: Float = isFollowing ? smoothing : 0
        isFollowing = true
        func ratio(_ bin: Int) -> Float {
            min(power[bin] / max(noise[bin], NoisePowerTracker.smallestPower), NoisePowerTracker.largestRatio)
        }
        // Each ratio once; the edge bins count themselves as their missing neighbour.
        var below = ratio(0)
        var current = below
        for bin in 0..<binCount {
            let above = bin + 1 < binCount ? ratio(bin + 1) : current
            let spread = 0.5 * current + 0.25 * (below + above)
            smoothedRatio[bin] = memory * smoothedRatio[bin] + (1 - memory) * spread
            below = current
            current = above
        }
    }

    /// Whether `bin` carries the alert in the frame last given to `follow`.
    func carriesAlert(_ bin: Int) -> Bool { smoothedRatio[bin] >= threshold }
}
