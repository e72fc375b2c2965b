import Foundation
import Testing
@testable import HearAlertKit

struct SpeechEnhancerTests {
    static let sampleRate = 16000

    /// An impulse after a stretch of silence has infinite SNR, so it passes at unit gain; where it lands in the
    /// output is the enhancer's delay. The silence outlasts the noise tracker's start-up (≈ 50 ms after the
    /// first whole frame), during which every frame is averaged into the noise estimate.
    @Test(arguments: EnhancerConfiguration.Mode.allCases)
    func impulseComesOutAfterTheStatedLatency(mode: EnhancerConfiguration.Mode) throws {
        let enhancer = try SpeechEnhancer(configuration: .init(mode: mode), sampleRate: Self.sampleRate)
        var input = [Float](repeating: 0, count: 8000)
        input[4000] = 1
        let output = EnhancementTestSignals.enhance(input, with: enhancer)
        let peak = try #require(output.indices.max { abs(output[$0]) < abs(output[$1]) })
        #expect(peak - 4000 == enhancer.latencySamples)
        #expect(abs(output[peak] - 1) < 0.05)
    }

    /// Sizes are set in milliseconds: the low-latency mode delays by 4 ms and the lowest-latency one by 2 ms, at
    /// any rate.
    @Test(arguments: [8000, 22050, 44100, 48000], [(EnhancerConfiguration.Mode.lowLatency, 0.004), (.lowestLatency, 0.002)])
    func lowDelayModesKeepTheirDelayAtAnyRate(sampleRate: Int, mode: (EnhancerConfiguration.Mode, Double)) throws {
        let enhancer = try SpeechEnhancer(configuration: .init(mode: mode.0), sampleRate: sampleRate)
        #expect(enhancer.latencySamples == Int((Double(sampleRate) * mode.1).rounded()))
        var input = [Float](repeating: 0, count: sampleRate / 4)
        input[sampleRate / 8] = 1
        let output = EnhancementTestSignals.enhance(input, with: enhancer)
        let peak = try #require(output.indices.max { abs(output[$0]) < abs(output[$1]) })
        #expect(peak - sampleRate / 8 == enhancer.latencySamples)
    }

    /// The framings at 16 kHz, as `Enhancement/README.md` states them: delay and hop in samples. What the whole
    /// live path adds is measured by `ListenDelayTests`.
    @Test func framingsAtSixteenKilohertz() throws {
        let expected: [EnhancerConfiguration.Mode: (delay: Int, hop: Int)] = [
            .lowestLatency: (32, 32), .lowLatency: (64, 64), .higherQuality: (384, 128),
        ]
        for mode in EnhancerConfiguration.Mode.allCases {
            let enhancer = try SpeechEnhancer(configuration: .init(mode: mode), sampleRate: Self.sampleRate)
            #expect(enhancer.latencySamples == expected[mode]?.delay && enhancer.hopLength == expected[mode]?.hop,
                    "\(mode)")
        }
    }

    @Test(arguments: EnhancerConfiguration.Mode.allCases)
    func zeroStrengthReconstructsTheInput(mode: EnhancerConfiguration.Mode) throws {
        let enhancer = try SpeechEnhancer(
            configuration: .init(mode: mode, strength: 0), sampleRate: Self.sampleRate)
        var signals = EnhancementTestSignals(seed: 11)
        let input = signals.gaussian(count: 8000, standardDeviation: 0.1)
        let output = EnhancementTestSignals.enhance(input, with: enhancer)
        let delay = enhancer.latencySamples
        let worst = (0..<(input.count - delay)).map { abs(output[$0 + delay] - input[$0]) }.max() ?? .infinity
        #expect(worst < 1e-5)
    }

    /// Syllable-like harmonics in white noise at 0 dB SNR: the enhanced signal must be at least 6 dB closer to
    /// the clean one (measured: 7.8 dB low-latency, 9.4 dB higher-quality; speech is scored by
    /// tools/score_enhancement.py).
    @Test(arguments: EnhancerConfiguration.Mode.allCases)
    func improvesSNRInStationaryNoise(mode: EnhancerConfiguration.Mode) throws {
        let enhancer = try SpeechEnhancer(configuration: .init(mode: mode), sampleRate: Self.sampleRate)
        let count = 6 * Self.sampleRate
        let clean = EnhancementTestSignals.syllables(count: count, sampleRate: Self.sampleRate, amplitude: 0.1)
        var signals = EnhancementTestSignals(seed: 12)
        let noiseLevel = EnhancementTestSignals.power(clean[...]).squareRoot()
        let noise = signals.gaussian(count: count, standardDeviation: noiseLevel)
        let noisy = zip(clean, noise).map { $0 + $1 }
        let output = EnhancementTestSignals.enhance(noisy, with: enhancer)
        let delay = enhancer.latencySamples
        // Score the last 4 s, after the noise tracker has settled.
        let scored = (2 * Self.sampleRate)..<(count - delay)
        let reference = Array(clean[scored])
        let before = EnhancementMetrics.signalToNoiseRatio(reference: reference, estimate: Array(noisy[scored]))
        let after = EnhancementMetrics.signalToNoiseRatio(
            reference: reference, estimate: scored.map { output[$0 + delay] })
        #expect(abs(before) < 0.5)
        #expect(after - before >= 6, "SNR \(before) → \(after) dB")
    }

    /// The noise estimate must be usable from the stream's first frames on: white noise from the start is
    /// reduced by at least 12 dB over 0.1…1 s (measured before the tracker was seeded from whole frames and
    /// averaged from the start: −4 dB, for 2 s).
    @Test(arguments: EnhancerConfiguration.Mode.allCases)
    func suppressesNoiseFromTheStart(mode: EnhancerConfiguration.Mode) throws {
        let enhancer = try SpeechEnhancer(configuration: .init(mode: mode), sampleRate: Self.sampleRate)
        var signals = EnhancementTestSignals(seed: 15)
        let noise = signals.gaussian(count: Self.sampleRate + enhancer.latencySamples, standardDeviation: 0.05)
        let output = EnhancementTestSignals.enhance(noise, with: enhancer)
        let delay = enhancer.latencySamples
        let scored = (Self.sampleRate / 10)..<Self.sampleRate
        let before = EnhancementTestSignals.power(noise[scored])
        let after = EnhancementTestSignals.power(output[(scored.lowerBound + delay)..<(scored.upperBound + delay)])
        let reductionDB = 10 * log10(after / before)
        #expect(reductionDB < -12, "noise reduced by \(reductionDB) dB over 0.1…1 s")
    }

    /// Alert energy retained (dB) for a 6 s, 1 kHz tone that starts 2 s into white noise of standard deviation
    /// 0.05 (`noiseBeforeDB` louder before the tone), with and without the alert flag over the tone.
    private func alertRetention(
        toneAmplitude: Double, mode: EnhancerConfiguration.Mode, seed: UInt64, noiseBeforeDB: Double = 0
    ) throws -> (plain: Double, flagged: Double) {
        let rate = Self.sampleRate
        let count = 9 * rate
        let alertRange = (2 * rate)..<(8 * rate)
        var alert = [Float](repeating: 0, count: count)
        let tone = EnhancementTestSignals.tone(
            frequency: 1000, amplitude: toneAmplitude, count: alertRange.count, sampleRate: rate)
        alert.replaceSubrange(alertRange, with: tone)
        var signals = EnhancementTestSignals(seed: seed)
        var noise = signals.gaussian(count: count, standardDeviation: Self.alertTestNoiseDeviation)
        let louderBefore = Float(pow(10, noiseBeforeDB / 20))
        for index in 0..<alertRange.lowerBound { noise[index] *= louderBefore }
        let noisy = zip(alert, noise).map { $0 + $1 }

        func retained(flagged: Bool) throws -> Double {
            let enhancer = try SpeechEnhancer(configuration: .init(mode: mode), sampleRate: rate)
            let output = EnhancementTestSignals.enhance(noisy, with: enhancer) { start in
                flagged && alertRange.contains(start)
            }
            let delay = enhancer.latencySamples
            return try #require(EnhancementMetrics.alertEnergyRetained(
                alert: Array(alert[alertRange]), output: alertRange.map { output[$0 + delay] }))
        }
        return (try retained(flagged: false), try retained(flagged: true))
    }

    private static let alertTestNoiseDeviation = 0.05

    /// The amplitude A of a tone that stands `binSNRDB` above the test noise in its frequency bin: for the mode's
    /// analysis window w, the tone's power there is (A/2)²·(Σw)², the noise's σ²·Σw².
    private static func toneAmplitude(binSNRDB: Double, mode: EnhancerConfiguration.Mode) throws -> Double {
        let window = try EnhancerFraming(mode: mode, sampleRate: sampleRate).analysisWindow.map(Double.init)
        let coherentGain = window.reduce(0, +)
        let noiseGain = window.reduce(0) { $0 + $1 * $1 }
        let ratio = pow(10, binSNRDB / 10)
        return 2 * alertTestNoiseDeviation * (ratio * noiseGain).squareRoot() / coherentGain
    }

    /// A steady 1 kHz alarm tone in noise, 6 s long: plain subtraction learns it as noise within a couple of
    /// seconds; with the alert flag on, the tone's bins pass, retaining ≥ −1 dB.
    /// (Measured: −11.9 dB plain, +0.00 dB flagged.)
    @Test func keepsAnAlertAudibleWhileFlagged() throws {
        let (plain, kept) = try alertRetention(toneAmplitude: 0.1, mode: .lowLatency, seed: 13)
        #expect(kept >= -1, "alert energy retained with the flag: \(kept) dB")
        #expect(plain < kept - 3, "plain subtraction keeps \(plain) dB, flagged \(kept) dB")
    }

    /// An alert barely above the noise, as in the corpus files where parts of a doorbell or a smoke alarm sit
    /// 1–3 dB above the noise estimate (`toneAmplitude`). It must still come through at ≥ −1 dB while flagged
    /// (with a 3 dB unit-gain threshold alone it lost 1.5–4 dB here).
    @Test(arguments: [Float(1), 2, 3], EnhancerConfiguration.Mode.allCases)
    func keepsAnAlertBarelyAboveTheNoiseAudible(binSNRDB: Float, mode: EnhancerConfiguration.Mode) throws {
        let amplitude = try Self.toneAmplitude(binSNRDB: Double(binSNRDB), mode: mode)
        let (_, kept) = try alertRetention(toneAmplitude: amplitude, mode: mode, seed: 21)
        #expect(kept >= -1, "\(binSNRDB) dB above the noise in its bin, \(mode.rawValue): retained \(kept) dB")
    }

    /// Noise that falls as the alert begins, as traffic 10 dB louder in the second before a truck horn than during
    /// it (test_00134 of the alert corpus): here the noise drops by 10 dB as the tone starts, and the tone stands
    /// 10 dB above the new noise in its bin, about as loud as the noise before. An estimate frozen at the
    /// alert's start stays 10 dB too high, the tone does not stand out against it, and the alert suppression
    /// limit holds it down (measured: −4.7 dB low-latency, −0.6 dB higher-quality); an estimate that follows
    /// the noise down keeps it (−0.3 dB, +0.1 dB).
    @Test(arguments: EnhancerConfiguration.Mode.allCases)
    func keepsAnAlertAudibleWhenTheNoiseFallsAsItBegins(mode: EnhancerConfiguration.Mode) throws {
        let amplitude = try Self.toneAmplitude(binSNRDB: 10, mode: mode)
        let (_, kept) = try alertRetention(toneAmplitude: amplitude, mode: mode, seed: 22, noiseBeforeDB: 10)
        #expect(kept >= -1, "noise 10 dB louder before the alert, \(mode.rawValue): retained \(kept) dB")
    }

    @Test func resetStartsAfresh() throws {
        let enhancer = try SpeechEnhancer(configuration: .init(), sampleRate: Self.sampleRate)
        var signals = EnhancementTestSignals(seed: 14)
        let first = signals.gaussian(count: 4000, standardDeviation: 0.3)
        let second = signals.gaussian(count: 4000, standardDeviation: 0.01)
        let fresh = try SpeechEnhancer(configuration: .init(), sampleRate: Self.sampleRate)
        let expected = EnhancementTestSignals.enhance(second, with: fresh)
        _ = EnhancementTestSignals.enhance(first, with: enhancer)
        enhancer.setAlertActive(true)
        enhancer.reset()
        let again = EnhancementTestSignals.enhance(second, with: enhancer)
        // Not bit-exact: FFTW_MEASURE may pick a different algorithm for each plan.
        let worst = zip(again, expected).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 1e-6, "largest difference after reset: \(worst)")
    }

    @Test func rejectsConfigurationsOutOfRange() {
        #expect(throws: EnhancerError.self) {
            try SpeechEnhancer(configuration: .init(strength: 1.5), sampleRate: Self.sampleRate)
        }
        #expect(throws: EnhancerError.unsupportedSampleRate(1000)) {
            try SpeechEnhancer(configuration: .init(), sampleRate: 1000)
        }
    }
}
