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

    /// MCRA follows a rise in noise once the minimum window (1…2 s) has seen it: a 10 dB rise within 3 s; and a
    /// 20 dB jump (a vacuum cleaner switched on) must not lock the onset guard: followed within 4 s.
    @Test(arguments: [(seed: UInt64(2), level: Float(10), frames: 750),
                      (seed: UInt64(5), level: Float(100), frames: 1000)])
    func followsANoiseLevelRise(seed: UInt64, level: Float, frames: Int) {
        let tracker = NoisePowerTracker(binCount: Self.binCount, hopSeconds: Self.hopSeconds)
        var signals = EnhancementTestSignals(seed: seed)
        feed(tracker, frames: 500, signals: &signals) { _, _ in 1 }
        feed(tracker, frames: frames, signals: &signals) { _, _ in level }
        #expect(abs(meanEstimateDB(tracker, relativeTo: level)) < 1.5)
    }

    /// Speech-like bursts 20 dB above the noise, 200 ms on and 150 ms off, must not be taken for noise.
    @Test func ignoresSpeechBursts() {
        let tracker = NoisePowerTracker(binCount: Self.binCount, hopSeconds: Self.hopSeconds)
        var signals = EnhancementTestSignals(seed: 3)
        feed(tracker, frames: 500, signals: &signals) { _, _ in 1 }
        feed(tracker, frames: 1000, signals: &signals) { frame, _ in frame % 88 < 50 ? 100 : 1 }
        #expect(meanEstimateDB(tracker, relativeTo: 1) < 3)
    }

    /// The DC and Nyquist bins of a real signal's spectrum are real: their periodogram has one degree of
    /// freedom and scatters more than the others, which thresholds set for complex bins mistook for speech,
    /// biasing the estimate low (−1.8 and −1.5 dB before they followed their neighbours' decisions). Fed the
    /// enhancer's own low-latency STFT of white noise, every bin's estimate, averaged over the last 10 of 20 s,
    /// must sit within 0.8 dB of the analytic noise power σ²·Σw² (w the analysis window).
    @Test func realValuedEdgeBinsAreNotBiasedLow() throws {
        let framing = try EnhancerFraming(mode: .lowLatency, sampleRate: 16000)
        let stft = try StreamingSTFT(
            fftSize: framing.fftSize, hopLength: framing.hopLength,
            analysisWindow: framing.analysisWindow, synthesisWindow: framing.synthesisWindow)
        let binCount = framing.fftSize / 2 + 1
        let tracker = NoisePowerTracker(binCount: binCount, hopSeconds: Double(framing.hopLength) / 16000)
        let deviation = 0.05
        let expected = deviation * deviation * framing.analysisWindow.reduce(0.0) { $0 + Double($1) * Double($1) }
        var signals = EnhancementTestSignals(seed: 6)
        let noise = signals.gaussian(count: 20 * 16000, standardDeviation: deviation)
        var power = [Float](repeating: 0, count: binCount)
        var averaged = [Double](repeating: 0, count: binCount)
        let hops = noise.count / framing.hopLength
        noise.withUnsafeBufferPointer { samples in
            for hop in 0..<hops {
                let start = hop * framing.hopLength
                stft.analyze(UnsafeBufferPointer(rebasing: samples[start..<(start + framing.hopLength)]))
                guard hop >= 3 else { continue }  // the first frames still hold the zeros before the stream
                for bin in 0..<binCount {
                    power[bin] = stft.real[bin] * stft.real[bin] + stft.imag[bin] * stft.imag[bin]
                }
                power.withUnsafeBufferPointer { tracker.update(power: $0) }
                guard hop >= hops / 2 else { continue }
                for bin in 0..<binCount { averaged[bin] += Double(tracker.noisePower[bin]) }
            }
        }
        let biasDB = averaged.map { 10 * log10($0 / Double(hops - hops / 2) / expected) }
        for bin in [0, 1, binCount / 2, binCount - 2, binCount - 1] {
            #expect(abs(biasDB[bin]) < 0.8, "bin \(bin): \(biasDB[bin]) dB")
        }
    }

    /// Seeded from one periodogram, the minimum sat below the noise in many bins, the onset guard rejected
    /// every frame there and the estimate stayed low until the minimum window had turned over (2 s): after
    /// 0.2 s a fifth of the bins were still more than 3 dB low (numpy transcription of the old tracker, five
    /// seeds: 19–25 %). Averaged from the start instead, at most one bin in 64 may be, then or later.
    @Test func settlesWithinTheFirstFifthOfASecond() {
        let tracker = NoisePowerTracker(binCount: Self.binCount, hopSeconds: Self.hopSeconds)
        var signals = EnhancementTestSignals(seed: 7)
        func binsFarBelow() -> Int { tracker.noisePower.filter { 10 * log10($0 / 2) < -3 }.count }
        feed(tracker, frames: 50, signals: &signals) { _, _ in 2 }
        #expect(binsFarBelow() <= 1, "\(binsFarBelow()) of \(Self.binCount) bins more than 3 dB low after 0.2 s")
        feed(tracker, frames: 200, signals: &signals) { _, _ in 2 }
        #expect(binsFarBelow() <= 1, "\(binsFarBelow()) of \(Self.binCount) bins more than 3 dB low after 1 s")
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
