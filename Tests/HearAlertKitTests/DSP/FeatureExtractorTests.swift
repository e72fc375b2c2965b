import Foundation
import Testing
@testable import HearAlertKit

/// Streaming behaviour the parity fixtures do not cover: block sizes, reset, hops longer than a frame, and
/// inputs that must not produce non-finite features.
@Suite struct FeatureExtractorTests {
    static func noise(_ count: Int, seed: UInt64) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in Float.random(in: -0.5...0.5, using: &generator) }
    }

    static func streamed(_ samples: [Float], _ extractor: FeatureExtractor, blockSizes: [Int]) -> [Float] {
        var rows = [Float]()
        var start = 0
        var next = 0
        samples.withUnsafeBufferPointer { all in
            while start < all.count {
                let end = min(all.count, start + blockSizes[next % blockSizes.count])
                extractor.process(UnsafeBufferPointer(rebasing: all[start..<end])) { rows += $0 }
                start = end
                next += 1
            }
        }
        return rows
    }

    @Test func blockSizesDoNotChangeTheFeatures() throws {
        let spec = FeatureSpec(winLength: 400, hopLength: 160)
        let samples = Self.noise(10_000, seed: 1)
        let whole = try FeatureExtractor.features(of: samples, spec: spec)
        #expect(whole.count == FeatureExtractor.frameCount(sampleCount: samples.count, spec: spec) * 64)
        #expect(whole.count == (1 + (10_000 - 512) / 160) * 64)
        let extractor = try FeatureExtractor(spec: spec)
        #expect(Self.streamed(samples, extractor, blockSizes: [1, 7, 160, 511, 1_000, 3]) == whole)
        extractor.reset()
        #expect(Self.streamed(samples, extractor, blockSizes: [4_096]) == whole, "reset starts a new stream")
    }

    @Test func hopLongerThanAFrameSkipsSamples() throws {
        let samples = Self.noise(8_000, seed: 2)
        let skippingSpec = FeatureSpec(nFFT: 256, winLength: 200, hopLength: 512, nMels: 32)
        var denseSpec = skippingSpec
        denseSpec.hopLength = 256
        let skipping = try FeatureExtractor.features(of: samples, spec: skippingSpec)
        let dense = try FeatureExtractor.features(of: samples, spec: denseSpec)
        let everyOther = stride(from: 0, to: dense.count / 32, by: 2).flatMap { dense[($0 * 32)..<(($0 + 1) * 32)] }
        #expect(skipping.count == FeatureExtractor.frameCount(sampleCount: 8_000, spec: skippingSpec) * 32)
        #expect(skipping.count == 16 * 32, "1 + (8000 - 256) / 512 frames")
        #expect(skipping == Array(everyOther.prefix(skipping.count)))
        let extractor = try FeatureExtractor(spec: skippingSpec)
        #expect(Self.streamed(samples, extractor, blockSizes: [100, 333]) == skipping)
    }

    @Test func silenceSitsOnTheFloorAndHugeValuesStayFinite() throws {
        let silence = try FeatureExtractor.features(of: [Float](repeating: 0, count: 2_048), spec: FeatureSpec())
        #expect(silence.allSatisfy { abs($0 - -100) < 1e-4 }, "10·log10(1e-10) = -100 dB")
        let huge = try FeatureExtractor.features(
            of: (0..<2_048).map { $0.isMultiple(of: 2) ? 1e30 : -1e30 }, spec: FeatureSpec(kind: .logPower))
        #expect(!huge.isEmpty && huge.allSatisfy(\.isFinite))
    }

    @Test func invalidSpecIsRefused() {
        #expect(throws: FeatureSpecError.self) { try FeatureExtractor(spec: FeatureSpec(winLength: 1_024)) }
        #expect(FeatureExtractor.frameCount(sampleCount: 511, spec: FeatureSpec()) == 0)
    }
}
