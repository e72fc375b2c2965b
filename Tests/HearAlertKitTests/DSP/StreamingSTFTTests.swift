import Foundation
import Testing
@testable import HearAlertKit

/// Weighted overlap-add must rebuild the input exactly (error < 1e-5) when the spectrum is left alone, for the
/// window pairs the enhancer may use, and the stated latency must be the true delay.
@Suite struct StreamingSTFTTests {
    /// Runs `signal` through analysis/synthesis hop by hop, optionally changing each spectrum.
    static func roundTrip(_ stft: StreamingSTFT, _ signal: [Float], modify: (StreamingSTFT) -> Void = { _ in }) -> [Float] {
        var output = [Float](repeating: 0, count: signal.count)
        let hop = stft.hopLength
        signal.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                for start in stride(from: 0, to: signal.count - hop + 1, by: hop) {
                    stft.analyze(UnsafeBufferPointer(rebasing: input[start..<(start + hop)]))
                    modify(stft)
                    stft.synthesize(into: UnsafeMutableBufferPointer(rebasing: out[start..<(start + hop)]))
                }
            }
        }
        return output
    }

    static func noise(_ count: Int, seed: UInt64 = 1) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in Float.random(in: -0.9...0.9, using: &generator) }
    }

    /// Largest |output[k] − input[k − latency]| once the first full frame has passed.
    static func reconstructionError(_ stft: StreamingSTFT, _ signal: [Float], _ output: [Float], gain: Float = 1) -> Float {
        let latency = stft.latencySamples
        var worst: Float = 0
        for index in (stft.fftSize + latency)..<(signal.count - stft.hopLength) {
            worst = max(worst, abs(output[index] - gain * signal[index - latency]))
        }
        return worst
    }

    @Test(arguments: [(512, 256), (512, 128)])
    func sqrtHannReconstructsPerfectly(fftSize: Int, hop: Int) throws {
        let window = WindowFunction.make(.sqrtHann, length: fftSize)
        let stft = try StreamingSTFT(fftSize: fftSize, hopLength: hop, analysisWindow: window, synthesisWindow: window)
        #expect(stft.latencySamples == fftSize - hop)
        let signal = Self.noise(16_000)
        let error = Self.reconstructionError(stft, signal, Self.roundTrip(stft, signal))
        #expect(error < 1e-5, "max error \(error) at \(100 * (fftSize - hop) / fftSize)% overlap")
    }

    @Test func zeroPaddedShortWindowsReconstruct() throws {
        let window = WindowFunction.make(.sqrtHann, length: 256)
        let stft = try StreamingSTFT(fftSize: 512, hopLength: 128, analysisWindow: window, synthesisWindow: window)
        #expect(stft.latencySamples == 128)
        let signal = Self.noise(12_000, seed: 2)
        #expect(Self.reconstructionError(stft, signal, Self.roundTrip(stft, signal)) < 1e-5)
    }

    /// Low-delay asymmetric pair (Mauler & Martin 2007): a long analysis window for frequency resolution, a
    /// synthesis window of two hops so that the delay is one hop (here 2 ms at 16 kHz).
    @Test func asymmetricLowDelayPairReconstructs() throws {
        let (fftSize, hop) = (256, 32)
        let (analysis, synthesis) = Self.lowDelayPair(length: fftSize, hop: hop)
        let stft = try StreamingSTFT(fftSize: fftSize, hopLength: hop, analysisWindow: analysis, synthesisWindow: synthesis)
        #expect(stft.latencySamples == hop)
        let signal = Self.noise(8_000, seed: 3)
        #expect(Self.reconstructionError(stft, signal, Self.roundTrip(stft, signal)) < 1e-5)
    }

    /// Analysis rises as sqrt-Hann over length − hop samples and falls as sqrt-Hann over the last hop; synthesis
    /// is Hann(2·hop) divided by the analysis window over the last two hops, zero before.
    static func lowDelayPair(length: Int, hop: Int) -> (analysis: [Float], synthesis: [Float]) {
        let rise = 2 * (length - hop)
        var analysis = [Float](repeating: 0, count: length)
        for index in 0..<(length - hop) { analysis[index] = Float(sin(Double.pi * Double(index) / Double(rise))) }
        for index in 0..<hop {
            analysis[length - hop + index] = Float(sin(Double.pi * Double(hop + index) / Double(2 * hop)))
        }
        let hann = WindowFunction.make(.hann, length: 2 * hop)
        let synthesis = (0..<(2 * hop)).map { hann[$0] / analysis[length - 2 * hop + $0] }
        return (analysis, synthesis)
    }

    @Test func spectralGainScalesTheOutput() throws {
        let window = WindowFunction.make(.sqrtHann, length: 256)
        let stft = try StreamingSTFT(fftSize: 256, hopLength: 128, analysisWindow: window, synthesisWindow: window)
        let signal = Self.noise(6_000, seed: 4)
        let output = Self.roundTrip(stft, signal) { stft in
            for bin in 0..<stft.real.count {
                stft.real[bin] *= 0.25
                stft.imag[bin] *= 0.25
            }
        }
        #expect(Self.reconstructionError(stft, signal, output, gain: 0.25) < 1e-5)
    }

    @Test func rejectsWindowsThatCannotReconstruct() {
        let short = WindowFunction.make(.hann, length: 64)
        #expect(throws: STFTError.self) {
            try StreamingSTFT(fftSize: 256, hopLength: 128, analysisWindow: short, synthesisWindow: short)
        }
        #expect(throws: STFTError.self) {
            try StreamingSTFT(fftSize: 255, hopLength: 64, analysisWindow: short, synthesisWindow: short)
        }
        #expect(throws: STFTError.self) {
            try StreamingSTFT(fftSize: 64, hopLength: 32, analysisWindow: short + short, synthesisWindow: short)
        }
        // Periodic Hann's first sample is 0: at a hop equal to the window, that offset gets no weight.
        #expect(throws: STFTError.windowsLeaveGap(position: 0)) {
            try StreamingSTFT(fftSize: 64, hopLength: 64, analysisWindow: short, synthesisWindow: short)
        }
    }
}

/// SplitMix64: reproducible test signals without Foundation's global random state.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
