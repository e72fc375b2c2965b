import Foundation

/// Cleans speech for the headphones, one hop at a time, and keeps alerts audible while the detector reports one.
///
/// Each hop: a short-time spectrum (`StreamingSTFT`, with the mode's low-delay windows), a continuously tracked
/// noise estimate (`NoisePowerTracker`, MCRA, or `LearnedNoiseEstimator`, a small network, as the configuration's
/// `noiseEstimation` says), one real gain per bin (`SuppressionGainRule`: Berouti's
/// over-subtraction on the decision-directed SNR, with a floor), and the inverse transform. Phase is kept.
///
/// While `setAlertActive(true)`, the noise estimate may follow the tracker down but never rises
/// (`AlertNoiseEstimate`) — so a long siren never becomes "noise", yet noise that drops as the alert begins is
/// followed — bins that carry the alert pass at unit gain, and the rest are attenuated by a few dB at most, so no
/// part of the alert is silenced. The detector calls it from the same processing thread.
///
/// Not `Sendable`: it lives on the processing thread. Nothing is allocated after init.
public final class SpeechEnhancer {
    /// The configuration this enhancer was built with.
    public let configuration: EnhancerConfiguration
    /// Samples per second of the stream.
    public let sampleRate: Int

    private let stft: StreamingSTFT
    private let noiseTracker: any NoiseEstimator
    private let gainRule: SuppressionGainRule
    private let alertNoise: AlertNoiseEstimate
    private let power: UnsafeMutableBufferPointer<Float>
    private let gains: UnsafeMutableBufferPointer<Float>
    private var alertActive = false
    /// Hops after a start whose analysis frame still holds the silence before the stream (zeros): a noise
    /// estimate seeded from them would start far below the noise.
    private let partialFrames: Int
    private var partialFramesLeft: Int
    /// Hops between noise-estimate updates (`EnhancerFraming.noiseUpdateHops`), and hops since the last one.
    private let noiseUpdateHops: Int
    private var hopsSinceNoiseUpdate = 0

    /// The largest input magnitude the enhancer computes with (full scale is 1). Its arithmetic is 32-bit float,
    /// and a frame's power spectrum grows with the square of the FFT size times the peak sample: at 10¹⁵ and
    /// FFTs of up to 4096 points it stays below 2·10³⁷, inside `Float`'s 3.4·10³⁸, while far louder samples
    /// would overflow to infinity and then NaN. Files are read with this limit (`AudioFileReader`); a live
    /// device delivers at most full scale.
    public static let largestInputMagnitude: Float = 1e15

    /// Samples taken and returned by each `process` call (4 ms in the low-latency mode, 8 ms otherwise).
    public var hopLength: Int { stft.hopLength }

    /// Output sample k is the enhanced input sample k − `latencySamples`. A live pipeline adds one hop of
    /// buffering on top (it must collect a hop before processing it).
    public var latencySamples: Int { stft.latencySamples }

    /// Builds the framing, transforms and state for `sampleRate`; throws on a configuration out of range, and when
    /// a learned noise estimator's file cannot be loaded or was trained for another framing.
    public init(configuration: EnhancerConfiguration, sampleRate: Int) throws {
        try configuration.validate()
        let framing = try EnhancerFraming(mode: configuration.mode, sampleRate: sampleRate)
        self.configuration = configuration
        self.sampleRate = sampleRate
        stft = try StreamingSTFT(
            fftSize: framing.fftSize, hopLength: framing.hopLength,
            analysisWindow: framing.analysisWindow, synthesisWindow: framing.synthesisWindow)
        let binCount = framing.fftSize / 2 + 1
        let hopSeconds = Double(framing.hopLength) / Double(sampleRate)
        noiseUpdateHops = framing.noiseUpdateHops
        switch configuration.noiseEstimation {
        case .mcra:
            noiseTracker = NoisePowerTracker(binCount: binCount, hopSeconds: hopSeconds * Double(noiseUpdateHops))
        case .learned(let modelPath):
            noiseTracker = try LearnedNoiseEstimator(
                modelPath: modelPath, sampleRate: sampleRate, fftSize: framing.fftSize, hopLength: framing.hopLength)
        }
        gainRule = SuppressionGainRule(
            binCount: binCount, hopSeconds: hopSeconds, strength: configuration.strength,
            alertDominanceDB: configuration.alertDominanceDB,
            alertSuppressionLimitDB: configuration.alertSuppressionLimitDB, tuning: .init(mode: configuration.mode))
        alertNoise = AlertNoiseEstimate(binCount: binCount)
        power = .allocate(capacity: binCount)
        power.initialize(repeating: 0)
        gains = .allocate(capacity: binCount)
        gains.initialize(repeating: 1)
        partialFrames = (framing.analysisWindow.count + framing.hopLength - 1) / framing.hopLength - 1
        partialFramesLeft = partialFrames
    }

    deinit {
        power.deallocate()
        gains.deallocate()
    }

    /// Tells the enhancer that an alert is (or is no longer) sounding; takes effect from the next hop.
    public func setAlertActive(_ active: Bool) {
        alertActive = active
    }

    /// Enhances exactly `hopLength` samples of `input` into `output` (which may not alias it). Allocates nothing.
    public func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        precondition(input.count == hopLength && output.count == hopLength,
                     "process takes and returns exactly hopLength (\(hopLength)) samples")
        stft.analyze(input)
        let binCount = power.count
        for bin in 0..<binCount {
            power[bin] = stft.real[bin] * stft.real[bin] + stft.imag[bin] * stft.imag[bin]
        }
        let measured = UnsafeBufferPointer(power)
        if partialFramesLeft > 0 {
            // Until the tracker has seen a whole frame its estimate is zero, and these hops pass unchanged.
            partialFramesLeft -= 1
        } else {
            let noiseDue = hopsSinceNoiseUpdate == 0
            hopsSinceNoiseUpdate = (hopsSinceNoiseUpdate + 1) % noiseUpdateHops
            if !alertActive {
                if alertNoise.isHolding {
                    noiseTracker.lower(to: alertNoise.noisePower)
                    alertNoise.release()
                }
                if noiseDue { noiseTracker.update(power: measured) }
            } else if noiseTracker.hasStarted {
                // An alert before the tracker's first frame leaves it unstarted (zero: every bin passes).
                if !alertNoise.isHolding { alertNoise.hold(from: noiseTracker.noisePower) }
                if noiseDue {
                    noiseTracker.update(power: measured)
                    alertNoise.follow(noiseTracker.noisePower)
                }
            }
        }
        gainRule.computeGains(
            power: measured, noise: alertNoise.isHolding ? alertNoise.noisePower : noiseTracker.noisePower,
            alertActive: alertActive, into: gains)
        for bin in 0..<binCount {
            stft.real[bin] *= gains[bin]
            stft.imag[bin] *= gains[bin]
        }
        stft.synthesize(into: output)
    }

    /// Forgets the signal and the noise estimate, as at the start of a new stream; the alert flag is cleared.
    public func reset() {
        stft.reset()
        noiseTracker.reset()
        gainRule.reset()
        alertNoise.release()
        alertActive = false
        partialFramesLeft = partialFrames
        hopsSinceNoiseUpdate = 0
    }
}
