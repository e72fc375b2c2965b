import Foundation
import Testing
@testable import HearAlertKit

@Suite struct RealFFTTests {
    /// Against a direct DFT in double precision, for a power of two and a size with an odd factor.
    @Test(arguments: [512, 30])
    func matchesDirectDFT(size: Int) {
        var generator = SeededGenerator(seed: UInt64(size))
        let input = (0..<size).map { _ in Float.random(in: -1...1, using: &generator) }
        let fft = RealFFT(size: size)
        var real = [Float](repeating: 0, count: fft.binCount)
        var imag = [Float](repeating: 0, count: fft.binCount)
        input.withUnsafeBufferPointer { input in
            real.withUnsafeMutableBufferPointer { real in
                imag.withUnsafeMutableBufferPointer { fft.forward(input, real: real, imag: $0) }
            }
        }
        var worst = 0.0
        for bin in 0..<fft.binCount {
            var sumReal = 0.0, sumImag = 0.0
            for (index, sample) in input.enumerated() {
                let angle = -2 * Double.pi * Double(bin * index) / Double(size)
                sumReal += Double(sample) * cos(angle)
                sumImag += Double(sample) * sin(angle)
            }
            worst = max(worst, abs(sumReal - Double(real[bin])), abs(sumImag - Double(imag[bin])))
        }
        // float32 FFT error grows like ε·√N·log N times the signal scale; 1e-4 is ~10× that here.
        #expect(worst < 1e-4, "worst bin error \(worst)")

        var back = [Float](repeating: 0, count: size)
        real.withUnsafeBufferPointer { re in
            imag.withUnsafeBufferPointer { im in
                back.withUnsafeMutableBufferPointer { fft.inverse(real: re, imag: im, into: $0) }
            }
        }
        let roundTrip = zip(back, input).map { abs($0 / Float(size) - $1) }.max()!
        #expect(roundTrip < 1e-6, "inverse(forward(x)) / N differs from x by \(roundTrip)")
    }

    @Test func windowsArePeriodic() {
        let hann = WindowFunction.make(.hann, length: 8)
        #expect(hann[0] == 0 && hann[4] == 1 && abs(hann[2] - 0.5) < 1e-7 && hann[7] == hann[1])
        let root = WindowFunction.make(.sqrtHann, length: 8)
        #expect(zip(root, hann).allSatisfy { abs($0 * $0 - $1) < 1e-7 })
        let hamming = WindowFunction.make(.hamming, length: 8)
        #expect(abs(hamming[0] - 0.08) < 1e-7 && abs(hamming[4] - 1) < 1e-7)
        // Periodic Hann overlap-adds to exactly 1 at half-window hops: the property STFT analysis relies on.
        let long = WindowFunction.make(.hann, length: 512)
        #expect((0..<256).allSatisfy { abs(long[$0] + long[$0 + 256] - 1) < 1e-6 })
    }
}
