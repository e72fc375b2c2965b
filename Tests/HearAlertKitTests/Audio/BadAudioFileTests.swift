import Foundation
import Testing
@testable import HearAlertKit

/// Every bad input gives an `AudioFileError` whose message is one line starting with the path; nothing
/// crashes and nothing non-finite is returned.
@Suite struct BadAudioFileTests {
    static func failure(reading path: String) -> AudioFileError? {
        do {
            let samples = try AudioFile.readAll(path: path, sampleRate: 16_000)
            Issue.record("\(path) was read (\(samples.count) samples, all finite: \(samples.allSatisfy(\.isFinite)))")
            return nil
        } catch let error as AudioFileError {
            let message = error.description
            #expect(message.hasPrefix(path) && !message.contains("\n"), "message: \(message)")
            #expect(error.errorDescription == message)
            return error
        } catch {
            Issue.record("unexpected error type \(type(of: error)): \(error)")
            return nil
        }
    }

    @Test func missingFileAndDirectory() throws {
        let scratch = try ScratchFolder()
        #expect(Self.failure(reading: scratch.path("nothing.wav")) == .notFound(path: scratch.path("nothing.wav")))
        #expect(Self.failure(reading: scratch.url.path) == .isDirectory(path: scratch.url.path))
    }

    @Test func emptyFiles() throws {
        let scratch = try ScratchFolder()
        _ = FileManager.default.createFile(atPath: scratch.path("zero-bytes.wav"), contents: Data())
        #expect(Self.failure(reading: scratch.path("zero-bytes.wav")) == .empty(path: scratch.path("zero-bytes.wav")))
        try writeWAV([], to: scratch.path("no-frames.wav"), sampleRate: 16_000)
        #expect(Self.failure(reading: scratch.path("no-frames.wav")) == .empty(path: scratch.path("no-frames.wav")))
    }

    @Test func garbageIsUnsupported() throws {
        let scratch = try ScratchFolder()
        var generator = SeededGenerator(seed: 5)
        let noise = Data((0..<4_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        _ = FileManager.default.createFile(atPath: scratch.path("noise.wav"), contents: noise)
        _ = FileManager.default.createFile(atPath: scratch.path("text.flac"), contents: Data("hello, not audio\n".utf8))
        for name in ["noise.wav", "text.flac"] {
            guard case .unsupported? = Self.failure(reading: scratch.path(name)) else {
                Issue.record("\(name) not reported as unsupported")
                continue
            }
        }
    }

    /// Cut a WAV, FLAC and OGG file short: each is reported as truncated rather than read as a shorter clip.
    @Test(arguments: ["wav", "flac", "ogg"])
    func truncatedFiles(format: String) throws {
        let scratch = try ScratchFolder()
        let whole = scratch.path("whole.\(format)")
        try sox([FeatureFixtures.url("speech.wav").path, whole])
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = scratch.path("cut.\(format)")
        _ = FileManager.default.createFile(atPath: cut, contents: data.prefix(data.count * 6 / 10))
        guard case .truncated? = Self.failure(reading: cut) else {
            Issue.record("truncated \(format) not reported as truncated")
            return
        }
    }

    @Test func nonFiniteFloatSamples() throws {
        let scratch = try ScratchFolder()
        try writeWAV([0.1, 0.2, .nan, 0.3], to: scratch.path("nan.wav"), sampleRate: 16_000)
        let nan = scratch.path("nan.wav")
        #expect(Self.failure(reading: nan) == .nonFiniteSample(path: nan, seconds: 2.0 / 16_000))
        try writeWAV([Float](repeating: 0, count: 16_000) + [.infinity], to: scratch.path("inf.wav"), sampleRate: 16_000)
        #expect(Self.failure(reading: scratch.path("inf.wav")) == .nonFiniteSample(path: scratch.path("inf.wav"), seconds: 1))
    }

    @Test func unwritablePath() throws {
        let scratch = try ScratchFolder()
        let path = scratch.path("no/such/folder/out.wav")
        #expect(throws: OutputFileError.cannotWrite(path: path, reason: "the folder \(scratch.path("no/such/folder")) does not exist")) {
            try AudioFileWriter(path: path, sampleRate: 16_000)
        }
        #expect(throws: AudioFileError.invalidRequest(path: "x.wav", reason: "sample rate must be positive, got 0")) {
            try AudioFileReader(path: "x.wav", sampleRate: 0)
        }
    }
}
