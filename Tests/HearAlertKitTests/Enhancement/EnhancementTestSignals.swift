import Foundation
@testable import HearAlertKit

/// Reproducible test signals for the enhancer tests: a seeded generator (SplitMix64, Steele et al. 2014),
/// Gaussian noise, tones and a syllable-rate modulated harmonic "voice".
struct EnhancementTestSignals {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func nextUniform() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return (Double(mixed >> 11) + 0.5) / Double(1 << 53)
    }

    /// Standard normal samples by Box–Muller.
    mutating func gaussian(count: Int, standardDeviation: Double) -> [Float] {
        (0..<count).map { _ in
            let radius = (-2 * log(nextUniform())).squareRoot()
            return Float(standardDeviation * radius * cos(2 * Double.pi * nextUniform()))
        }
    }

    /// Exponentially distributed values with the given mean: the periodogram of Gaussian noise in one bin.
    mutating func exponential(mean: Float) -> Float { Float(-log(nextUniform())) * mean }

    static func tone(frequency: Double, amplitude: Double, count: Int, sampleRate: Int) -> [Float] {
        (0..<count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(sampleRate))) }
    }

    /// A voiced-speech stand-in: harmonics of 140 Hz with a 1/k spectral tilt, switched on and off at a
    /// syllable rate (200 ms on, 150 ms off) with 20 ms ramps, so noise estimation has pauses to learn from.
    static func syllables(count: Int, sampleRate: Int, amplitude: Double) -> [Float] {
        let rate = Double(sampleRate)
        return (0..<count).map { index in
            let time = Double(index) / rate
            let phase = time.truncatingRemainder(dividingBy: 0.35)
            let envelope = phase < 0.2 ? min(1, min(phase, 0.2 - phase) / 0.02) : 0
            var value = 0.0
            for harmonic in 1...20 where Double(harmonic) * 140 < rate / 2 {
                value += sin(2 * Double.pi * 140 * Double(harmonic) * time) / Double(harmonic)
            }
            return Float(amplitude * envelope * value)
        }
    }

    static func power(_ signal: ArraySlice<Float>) -> Double {
        signal.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(signal.count, 1))
    }

    /// Runs `input` through `enhancer` hop by hop (zero-padded to whole hops), returning as many samples, with
    /// `alertActive(hopStart)` deciding the alert flag for each hop.
    static func enhance(
        _ input: [Float], with enhancer: SpeechEnhancer, alertActive: (Int) -> Bool = { _ in false }
    ) -> [Float] {
        let hop = enhancer.hopLength
        let hopCount = (input.count + hop - 1) / hop
        var padded = input
        padded.append(contentsOf: repeatElement(0, count: hopCount * hop - input.count))
        var output = [Float](repeating: 0, count: padded.count)
        padded.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                for start in stride(from: 0, to: padded.count, by: hop) {
                    enhancer.setAlertActive(alertActive(start))
                    enhancer.process(
                        UnsafeBufferPointer(rebasing: source[start..<(start + hop)]),
                        into: UnsafeMutableBufferPointer(rebasing: destination[start..<(start + hop)]))
                }
            }
        }
        return Array(output.prefix(input.count))
    }
}
