import Foundation

/// The noise estimate the gain rule uses while an alert is flagged: it may fall with the noise tracker but never
/// rise, so an alert is never learnt as noise, yet noise that drops as the alert begins does not leave the
/// estimate far above it.
///
/// Frozen at the alert's start, as it was before, the estimate stayed where the noise had been: in test_00134
/// of the alert corpus, traffic 10 dB louder in the second before a truck horn than during it, the horn's bins
/// stood below that estimate and were attenuated down to the alert suppression limit (−3.0 dB of the horn
/// kept). Now the tracker keeps running through the alert, and each bin's estimate is the lowest value the
/// tracker has given it since the alert began (starting from the value just before): where the noise falls,
/// the estimate follows it down at the tracker's own speed; where the tracker starts to learn the alert (a
/// steady siren after the 1…2 s minimum window) or the noise rises again, the estimate stays put. When the
/// alert ends, the tracker is lowered to this estimate (`NoisePowerTracker.lower(to:)`).
///
/// The price is noise reduction during alerts: noise that rises again after a dip passes like the alert.
/// Letting the estimate rise back to its level before the alert kept more of it but not the horn of
/// test_00134 (figures in `Enhancement/README.md`, "Alerts kept audible"). Allocates nothing per frame.
final class AlertNoiseEstimate {
    let binCount: Int
    private let lowest: UnsafeMutableBufferPointer<Float>
    /// Whether an alert is being followed (`hold` called, `release` not yet).
    private(set) var isHolding = false

    init(binCount: Int) {
        precondition(binCount >= 1)
        self.binCount = binCount
        lowest = .allocate(capacity: binCount)
        lowest.initialize(repeating: 0)
    }

    deinit { lowest.deallocate() }

    /// Per bin, the lowest noise power since `hold`.
    var noisePower: UnsafeBufferPointer<Float> { UnsafeBufferPointer(lowest) }

    /// Starts following an alert from the tracker's estimate just before it.
    func hold(from noise: UnsafeBufferPointer<Float>) {
        precondition(noise.count == binCount)
        _ = lowest.update(fromContentsOf: noise)
        isHolding = true
    }

    /// Takes the tracker's estimate for this frame: bins where it is lower than so far follow it down.
    func follow(_ noise: UnsafeBufferPointer<Float>) {
        precondition(noise.count == binCount)
        for bin in 0..<binCount { lowest[bin] = min(lowest[bin], noise[bin]) }
    }

    /// Stops following: the alert has ended or the stream restarts.
    func release() { isHolding = false }
}
