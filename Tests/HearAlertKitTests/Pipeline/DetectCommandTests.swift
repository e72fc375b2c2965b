import Foundation
import Testing
@testable import HearAlertKit

/// `hearalert detect` as a person or the evaluator runs it: the real binary on the fixture clip.
@Suite struct DetectCommandTests {
    static let fixtures = ListenEndToEndTests.fixtures
    static let clip = fixtures.appendingPathComponent("alerts_clip.wav").path

    static func detect(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runHearAlert(["detect", "--model", ListenEndToEndTests.model] + arguments)
    }

    @Test func tsvOnStdoutIsTheDetectorsEventsUnderADCASEHeader() throws {
        let model = try AlertModel(path: ListenEndToEndTests.model)
        let events = try FileDetector(model: model, settings: try TrackerSettings(model: model)).detect(path: Self.clip)
        let result = try Self.detect([Self.clip, "--format", "tsv"])
        #expect(result.status == 0)
        let expected = [AlertLineFormatter.tsvHeader]
            + events.map { AlertLineFormatter.tsvLine(filename: "alerts_clip.wav", event: $0) }
        #expect(result.stdout == expected.map { $0 + "\n" }.joined())
    }

    @Test func outputFolderGetsOneFilePerInput() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-detect-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Self.detect([Self.clip, "--format", "jsonl", "--output", folder.path])
        #expect(result.status == 0 && result.stdout.isEmpty)
        let lines = try String(contentsOf: folder.appendingPathComponent("alerts_clip.jsonl"), encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.allSatisfy { $0.contains("\"source\":\"\(Self.clip)\"") })
    }

    @Test func twoInputsOfOneNameAreRefusedRatherThanOneResultOverwritten() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-detect-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("in/alerts_clip.wav")
        try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.clip, toPath: copy.path)
        let out = folder.appendingPathComponent("out")
        let result = try Self.detect([Self.clip, copy.path, "--format", "tsv", "--output", out.path])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: \(Self.clip) and \(copy.path) would both be written to "
            + "\(out.path)/alerts_clip.tsv; run them separately or rename one\n")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test func anOutputFolderThatCannotBeMadeIsOneLine() throws {
        let result = try Self.detect([Self.clip, "--output", "\(Self.clip)/out"])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: cannot create the output folder \(Self.clip)/out: Not a directory\n")
    }

    @Test func aBadFileIsReportedAndTheOthersStillRun() throws {
        let result = try Self.detect(["/nonexistent/missing.wav", Self.clip, "--format", "text",
                                      "--threshold", "siren=0.6"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("/nonexistent/missing.wav"))
        #expect(result.stdout.contains("alerts_clip.wav  siren  0.97–3.09 s"), "\(result.stdout)")
    }

    @Test func aMalformedThresholdIsAUsageErrorOfDetect() throws {
        for malformed in ["siren", "=0.5", "siren=high"] {
            let result = try Self.detect([Self.clip, "--threshold", malformed])
            #expect(result.status == 64)
            #expect(result.stderr.contains("--threshold wants LABEL=P (e.g. siren=0.7) or P for every label "
                                           + "(e.g. 0.9); got '\(malformed)'"), "\(result.stderr)")
            #expect(result.stderr.contains("Usage: hearalert detect "), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func aModelThatIsNotAModelIsNamedInTheError() throws {
        let result = try Self.detect([Self.clip, "--model", Self.clip])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: \(Self.clip): not a safetensors model file (its header length "),
                "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aNegativeDurationIsRefusedWithItsReason() throws {
        let result = try Self.detect([Self.clip, "--min-duration", "-1"])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: invalid event-tracking setting: minimum duration -1.0 is not a non-negative "
            + "number of seconds\n")
    }

    @Test func awayFromTheRepositoryTheBundledModelIsFoundBesideTheExecutable() throws {
        let result = try runHearAlert(["detect", Self.clip, "--format", "tsv"], in: FileManager.default.temporaryDirectory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("filename\tonset\toffset\tevent_label\n"))
    }

    @Test func withoutABundledModelAnywhereTheErrorSaysHowToNameOne() throws {
        // A copy of the binary outside any checkout or install finds no bundled model.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("hearalert")
        try FileManager.default.copyItem(atPath: ListenEndToEndTests.binary, toPath: copy.path)
        let result = try runHearAlert(["detect", Self.clip], in: directory, binary: copy.path)
        #expect(result.status == 1)
        #expect(result.stderr == "Error: no bundled model found (looked for models/default.safetensors); "
            + "give one with --model FILE or $HEARALERT_MODEL\n")
    }

    @Test func anUnknownLabelInAThresholdIsRejected() throws {
        let result = try Self.detect([Self.clip, "--threshold", "doorbell=0.5"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("unknown label 'doorbell'; this model knows: siren, smoke_alarm"))
    }
}
