import Foundation
import Testing
@testable import HearAlertKit

@Suite struct ResamplerTests {
    /// A 1 kHz tone at 44.1 kHz becomes the same tone at 16 kHz: after the filter delay, every sample within
    /// 1e-3 of the ideal (SOXR_HQ's passband ripple and 20-bit precision are far inside that).
    @Test func convertsAToneFaithfully() throws {
        let (inputRate, outputRate, frequency) = (44_100.0, 16_000.0, 1_000.0)
        let input = (0..<44_100).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / inputRate)) }
        let resampler = try Resampler(inputRate: inputRate, outputRate: outputRate)
        var output = [Float]()
        var scratch = [Float](repeating: 0, count: resampler.maxOutputCount(forInputCount: 1_000))
        for start in stride(from: 0, to: input.count, by: 1_000) {
            let block = Array(input[start..<min(start + 1_000, input.count)])
            let made = try block.withUnsafeBufferPointer { block in
                try scratch.withUnsafeMutableBufferPointer { try resampler.process(block, into: $0) }
            }
            output += scratch[0..<made]
        }
        while true {
            let made = try scratch.withUnsafeMutableBufferPointer { try resampler.flush(into: $0) }
            if made == 0 { break }
            output += scratch[0..<made]
        }
        #expect(output.count == 16_000, "libsoxr keeps the duration: got \(output.count) samples")
        // Skip the filter's start-up transient at both ends.
        let worst = (200..<15_800).map { index in
            abs(Double(output[index]) - 0.5 * sin(2 * Double.pi * frequency * Double(index) / outputRate))
        }.max()!
        #expect(worst < 1e-3, "worst deviation from the ideal tone \(worst)")
    }

    @Test func refusesImpossibleRates() {
        #expect(throws: ResamplerError.invalidRate(input: 0, output: 16_000)) {
            try Resampler(inputRate: 0, outputRate: 16_000)
        }
        #expect(throws: ResamplerError.self) { try Resampler(inputRate: .nan, outputRate: 16_000) }
    }
}
