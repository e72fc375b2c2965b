import Foundation
import Testing
@testable import HearAlertKit

/// Float files may hold samples far beyond full scale. The enhancer's gains depend only on power ratios, so a
/// louder copy of a signal must come out as the same louder copy, never as NaN, up to
/// `SpeechEnhancer.largestInputMagnitude`; a file beyond it is refused with its reason.
@Suite struct LoudInputTests {
    /// Speech-like syllables in white noise, 2 s at 16 kHz, with an alert flagged for the second half.
    static func noisySpeech() -> [Float] {
        var signals = EnhancementTestSignals(seed: 5)
        let noise = signals.gaussian(count: 32_000, standardDeviation: 0.05)
        let speech = EnhancementTestSignals.syllables(count: 32_000, sampleRate: 16_000, amplitude: 0.3)
        return zip(noise, speech).map { $0 + $1 }
    }

    @Test(arguments: [Float(1e12), 1e15], EnhancerConfiguration.Mode.allCases)
    func aLouderCopyComesOutAsTheSameLouderCopy(scale: Float, mode: EnhancerConfiguration.Mode) throws {
        let input = Self.noisySpeech()
        func enhanced(_ samples: [Float]) throws -> [Float] {
            let enhancer = try SpeechEnhancer(configuration: EnhancerConfiguration(mode: mode), sampleRate: 16_000)
            return EnhancementTestSignals.enhance(samples, with: enhancer) { $0 >= 16_000 }
        }
        let quiet = try enhanced(input)
        let loud = try enhanced(input.map { $0 * scale })
        #expect(loud.allSatisfy { $0.isFinite })
        let peak = quiet.map(abs).max() ?? 0
        let worst = zip(quiet, loud).map { abs($0 - $1 / scale) }.max() ?? .infinity
        #expect(peak > 0.1 && worst < 1e-3 * peak, "worst difference \(worst) against a peak of \(peak)")
    }

    /// At the limit, the signals that make one bin's power largest: a constant (DC) and the Nyquist tone, at
    /// 96 kHz, where the higher-quality mode's FFT is longest (4096 points).
    @Test(arguments: EnhancerConfiguration.Mode.allCases)
    func theLargestInputStaysFinite(mode: EnhancerConfiguration.Mode) throws {
        let limit = SpeechEnhancer.largestInputMagnitude
        for input in [[Float](repeating: limit, count: 96_000), (0..<96_000).map { $0 % 2 == 0 ? limit : -limit }] {
            let enhancer = try SpeechEnhancer(configuration: EnhancerConfiguration(mode: mode), sampleRate: 96_000)
            let output = EnhancementTestSignals.enhance(input, with: enhancer)
            #expect(output.allSatisfy { $0.isFinite })
        }
    }

    static func floatWAV(_ samples: [Float]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("loud-\(UUID()).wav").path
        let writer = try AudioFileWriter(path: path, sampleRate: 16_000, encoding: .float32)
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
        return path
    }

    @Test func enhanceWritesAFileOfLoudSamplesWithoutNaN() throws {
        let input = try Self.floatWAV(Self.noisySpeech().map { $0 * 1e12 })
        let output = input + ".out.wav"
        defer { for path in [input, output] { try? FileManager.default.removeItem(atPath: path) } }
        let result = try runHearAlert(["enhance", input, output])
        #expect(result.status == 0, "\(result.stderr)")
        let samples = try AudioFile.readAll(path: output, sampleRate: 16_000)
        #expect(samples.count == 32_000 && (samples.map(abs).max() ?? 0) > 1e11)
    }

    @Test func aSampleBeyondTheLimitIsRefusedWithItsTime() throws {
        var samples = Self.noisySpeech()
        samples[24_000] = 2e15
        let input = try Self.floatWAV(samples)
        let output = input + ".out.wav"
        defer { for path in [input, output] { try? FileManager.default.removeItem(atPath: path) } }
        #expect(throws: AudioFileError.sampleOutOfRange(path: input, seconds: 1.5, value: 2e15, limit: 1e15)) {
            try FileEnhancement.run(inputPath: input, outputPath: output, configuration: EnhancerConfiguration())
        }
        let result = try runHearAlert(["enhance", input, output])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: \(input): sample 2e+15 at 1.500 s is beyond ±1e+15, the most this command "
            + "can compute with (full scale is ±1)\n", "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
        // Detection has no such limit: the same file is read in full.
        #expect(try AudioFile.readAll(path: input, sampleRate: 16_000).count == 32_000)
    }
}
