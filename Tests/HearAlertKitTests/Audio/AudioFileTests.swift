import Foundation
import Testing
@testable import HearAlertKit

@Suite struct AudioFileTests {
    @Test func float32RoundTripIsExactAndPCM16IsWithinOneStep() throws {
        let scratch = try ScratchFolder()
        var generator = SeededGenerator(seed: 9)
        let samples = (0..<10_000).map { _ in Float.random(in: -0.99...0.99, using: &generator) }
        try writeWAV(samples, to: scratch.path("f.wav"), sampleRate: 16_000, encoding: .float32)
        #expect(try AudioFile.readAll(path: scratch.path("f.wav"), sampleRate: 16_000) == samples)

        try writeWAV(samples + [3, -3], to: scratch.path("p.wav"), sampleRate: 16_000, encoding: .pcm16)
        let back = try AudioFile.readAll(path: scratch.path("p.wav"), sampleRate: 16_000)
        #expect(back.count == samples.count + 2)
        #expect(zip(back, samples).allSatisfy { abs($0 - $1) <= 1.0 / 32_768 })
        // Out-of-range samples clip instead of wrapping to the opposite sign.
        #expect(back[samples.count] > 0.99 && back[samples.count + 1] < -0.99)

        let reader = try AudioFileReader(path: scratch.path("p.wav"), sampleRate: 16_000)
        #expect(reader.sourceSampleRate == 16_000 && reader.sourceChannels == 1)
        #expect(abs(reader.duration - Double(samples.count + 2) / 16_000) < 1e-12)
    }

    /// A float file holds its samples and format only: libsndfile's default PEAK chunk stamps the time of
    /// writing, which made `hearalert enhance` give different bytes for the same audio from one second to the next.
    @Test func theSameSamplesAlwaysGiveTheSameBytes() throws {
        let scratch = try ScratchFolder()
        let samples = (0..<4_000).map { Float(sin(Double($0) * 0.05)) / 2 }
        try writeWAV(samples, to: scratch.path("a.wav"), sampleRate: 16_000, encoding: .float32)
        try writeWAV(samples, to: scratch.path("b.wav"), sampleRate: 16_000, encoding: .float32)
        let first = try Data(contentsOf: URL(fileURLWithPath: scratch.path("a.wav")))
        let second = try Data(contentsOf: URL(fileURLWithPath: scratch.path("b.wav")))
        #expect(first == second)
        #expect(first.range(of: Data("PEAK".utf8)) == nil, "a PEAK chunk (with its time stamp) was written")
        #expect(try AudioFile.readAll(path: scratch.path("a.wav"), sampleRate: 16_000) == samples)
    }

    @Test func stereoIsAveragedToMono() throws {
        let scratch = try ScratchFolder()
        let left = (0..<4_000).map { Float($0 % 100) / 200 }
        let right = (0..<4_000).map { -Float($0 % 7) / 20 }
        try writeWAV(left, to: scratch.path("l.wav"), sampleRate: 8_000)
        try writeWAV(right, to: scratch.path("r.wav"), sampleRate: 8_000)
        try sox(["-M", scratch.path("l.wav"), scratch.path("r.wav"), scratch.path("lr.wav")])
        let reader = try AudioFileReader(path: scratch.path("lr.wav"), sampleRate: 8_000)
        #expect(reader.sourceChannels == 2)
        let mono = try AudioFile.readAll(path: scratch.path("lr.wav"), sampleRate: 8_000)
        #expect(mono.count == left.count)
        #expect(zip(mono, zip(left, right)).allSatisfy { abs($0 - ($1.0 + $1.1) / 2) < 1e-6 })
    }

    /// Reading in small pieces gives exactly what one big read gives, with and without resampling.
    @Test(arguments: [16_000, 11_025])
    func streamingDoesNotDependOnReadSize(rate: Int) throws {
        let path = FeatureFixtures.url("speech.wav").path
        let whole = try AudioFile.readAll(path: path, sampleRate: rate)
        let reader = try AudioFileReader(path: path, sampleRate: rate, blockFrames: 777)
        var pieces = [Float]()
        var buffer = [Float](repeating: 0, count: 313)
        while true {
            let count = try buffer.withUnsafeMutableBufferPointer { try reader.read(into: $0) }
            if count == 0 { break }
            pieces += buffer[0..<count]
        }
        #expect(pieces == whole)
        let expected = Double(reader.sourceFrames) * Double(rate) / 16_000
        #expect(abs(Double(whole.count) - expected) <= 1, "resampled length \(whole.count), expected \(expected)")
    }
}
