import Foundation
import Testing
@testable import HearAlertKit

/// The tracker sees periodograms of Gaussian noise — exponentially distributed around the true noise power in
/// each bin — as the enhancer's STFT would deliver them, at the low-latency mode's 4 ms hop.
struct NoisePowerTrackerTests {
    static let hopSeconds = 0.004
    static let binCount = 64

    private func feed(
        _ tracker: NoisePowerTracker, frames: Int, signals: inout EnhancementTestSignals, mean: (Int, Int) -> Float
    ) {
        var power = [Float](repeating: 0, count: Self.binCount)
        for frame in 0..<frames {
            for bin in 0..<Self.binCount { power[bin] = signals.exponential(mean: mean(frame, bin)) }
            power.withUnsafeBufferPointer { tracker.update(power: $0) }
        }
    }

    private func meanEstimateDB(_ tracker: NoisePowerTracker, relativeTo level: Float) -> Double {
        let mean = tracker.noisePower.reduce(0.0) { $0 + Double($1) } / Double(Self.binCount)
        return 10 * log10(mean / Double(level))
    }

    @Test func convergesOnStationaryNoise() {
        let tracker = NoisePowerTracker(binCount: Self.binCount, hopSeconds: Self.hopSeconds)
        var signals = EnhancementTestSignals(seed: 1)
        feed(tracker, frames: 750, signals: &signals) { _, _ in 3 }
        #expect(abs(meanEstimateDB(tracker, relativeTo: 3)) < 1.5)
    }

    /// MCRA follows a rise in noise once the minimum window (1…2 s) has seen it: within 3 s here.
    @Test func followsANoiseLevelRise() {
        let tracker = NoisePowerTracker(binCount: Self.binCount, hopSeconds: Self.hopSeconds)
        var signals = EnhancementTestSignals(seed: 2)
        feed(tracker, frames: 500, signals: &signals) { _, _ in 1 }
        feed(tracker, frames: 750, signals: &signals) { _, _ in 10 }
        #expect(abs(meanEstimateDB(tracker, relativeTo: 10)) < 1.5)
    }

    /// A 20 dB jump (a vacuum cleaner switched on) must not lock the onset guard: followed within 4 s.
    @Test func followsALargeNoiseRise() {
        let tracker = NoisePowerTracker(binCount: Self.binCount, hopSeconds: Self.hopSeconds)
        var signals = EnhancementTestSignals(seed: 5)
        feed(tracker, frames: 500, signals: &signals) { _, _ in 1 }
        feed(tracker, frames: 1000, signals: &signals) { _, _ in 100 }
        #expect(abs(meanEstimateDB(tracker, relativeTo: 100)) < 1.5)
    }

    /// Speech-like bursts 20 dB above the noise, 200 ms on and 150 ms off, must not be taken for noise.
    @Test func ignoresSpeechBursts() {
        let tracker = NoisePowerTracker(binCount: Self.binCount, hopSeconds: Self.hopSeconds)
        var signals = EnhancementTestSignals(seed: 3)
        feed(tracker, frames: 500, signals: &signals) { _, _ in 1 }
        feed(tracker, frames: 1000, signals: &signals) { frame, _ in frame % 88 < 50 ? 100 : 1 }
        #expect(meanEstimateDB(tracker, relativeTo: 1) < 3)
    }

    @Test func resetForgetsTheEstimate() {
        let tracker = NoisePowerTracker(binCount: Self.binCount, hopSeconds: Self.hopSeconds)
        var signals = EnhancementTestSignals(seed: 4)
        feed(tracker, frames: 300, signals: &signals) { _, _ in 100 }
        tracker.reset()
        let quiet = [Float](repeating: 0.01, count: Self.binCount)
        quiet.withUnsafeBufferPointer { tracker.update(power: $0) }
        #expect(tracker.noisePower.allSatisfy { $0 == 0.01 })
    }
}
