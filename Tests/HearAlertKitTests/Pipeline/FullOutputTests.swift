import Foundation
import Testing

/// Results that cannot be written to standard output (here /dev/full, as a full disk) are a failure with a
/// message, never an exit status of 0 with the results gone.
@Suite struct FullOutputTests {
    static let clip = DetectCommandTests.clip
    static let model = ListenEndToEndTests.model

    static func expectFailure(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        defer { try? full.close() }
        let result = try runHearAlert(arguments, standardOutput: full)
        #expect(result.status == 1, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasSuffix("Error: cannot write to standard output: No space left on device\n"),
                "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test func detect() throws {
        try Self.expectFailure(["detect", "--model", Self.model, Self.clip, "--format", "tsv"])
        try Self.expectFailure(["detect", "--model", Self.model, Self.clip, "--format", "jsonl"])
    }

    @Test func modelInspectAndCheck() throws {
        try Self.expectFailure(["model", "inspect", Self.model])
        try Self.expectFailure(["model", "check", Self.model])
    }

    @Test func evaluate() throws {
        let corpus = try EvaluateCorpus.write()
        defer { try? FileManager.default.removeItem(atPath: corpus) }
        try Self.expectFailure(["evaluate", "--corpus", corpus, "--model", Self.model])
    }

    @Test func devices() throws {
        try Self.expectFailure(["devices"])
    }

    @Test func theSummariesOfEnhanceAndFeatures() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        try Self.expectFailure(["enhance", Self.clip, scratch.path("out.wav")])
        try Self.expectFailure(["features", Self.clip, "-o", scratch.path("out.npy")])
    }
}
