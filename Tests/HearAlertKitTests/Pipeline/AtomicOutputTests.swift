import Foundation
import Testing
@testable import HearAlertKit

/// A result file is either written whole or not at all: a command that fails or is stopped half-way leaves the
/// previous file at that name as it was, and nothing half-written beside it. A path that cannot be written is
/// found before the work starts, and said in one line.
@Suite struct AtomicOutputTests {
    static let clip = DetectCommandTests.clip
    static let model = ListenEndToEndTests.model
    static let previous = Data("the previous result, which must survive\n".utf8)

    /// Each writer, its arguments for an output at `target` (a scratch folder in `folder`), and a file-size limit
    /// (bytes) below what it writes, so its write fails part-way as on a full disk.
    enum Writer: String, CaseIterable, Sendable {
        case enhance, features, detectOutput, evaluateJSON

        func arguments(output target: String, folder: String, corpus: String) -> [String] {
            switch self {
            case .enhance: ["enhance", AtomicOutputTests.clip, target]
            case .features: ["features", AtomicOutputTests.clip, "-o", target]
            case .detectOutput: ["detect", "--model", AtomicOutputTests.model, AtomicOutputTests.clip,
                                 "--format", "tsv", "--output", folder]
            case .evaluateJSON: ["evaluate", "--corpus", corpus, "--model", AtomicOutputTests.model, "--json", target]
            }
        }

        var outputName: String {
            switch self {
            case .enhance: "out.wav"
            case .features: "out.npy"
            case .detectOutput: "alerts_clip.tsv"
            case .evaluateJSON: "report.json"
            }
        }

        /// Smaller than the file written (the TSV result is the smallest: its header alone is 35 bytes).
        var fileSizeLimit: Int { self == .detectOutput ? 20 : 200 }
    }

    /// Runs `writer` over an output folder that holds `previous` at the writer's output name: the folder, the
    /// output's path and the run's outcome.
    static func run(_ writer: Writer, fileSizeLimit: Int? = nil, permissions: mode_t = 0o644) throws
        -> (scratch: ScratchFolder, target: String, result: (status: Int32, stdout: String, stderr: String)) {
        let scratch = try ScratchFolder()
        let corpus = try EvaluateCorpus.write()
        defer { try? FileManager.default.removeItem(atPath: corpus) }
        let target = scratch.path(writer.outputName)
        try Self.previous.write(to: URL(fileURLWithPath: target))
        chmod(target, permissions)
        let result = try runHearAlert(writer.arguments(output: target, folder: scratch.url.path, corpus: corpus),
                                      fileSizeLimit: fileSizeLimit)
        return (scratch, target, result)
    }

    @Test(arguments: Writer.allCases)
    func aWriteThatFailsPartWayLeavesThePreviousFileWhole(writer: Writer) throws {
        let (scratch, target, result) = try Self.run(writer, fileSizeLimit: writer.fileSizeLimit)
        defer { scratch.remove() }
        #expect(result.status != 0)
        #expect(result.stderr.contains("\(target): cannot write: File too large"), "\(result.stderr)")
        #expect(!result.stderr.contains("Domain="), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Self.previous)
        #expect(scratch.names == [writer.outputName])
    }

    @Test(arguments: Writer.allCases)
    func aWriteThatSucceedsReplacesThePreviousFile(writer: Writer) throws {
        let (scratch, target, result) = try Self.run(writer, permissions: 0o640)
        defer { scratch.remove() }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) != Self.previous)
        #expect(scratch.names == [writer.outputName])
        // Replacing a file keeps its permissions, as writing into it did.
        let mode = try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int
        #expect(mode == 0o640)
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func aStoppedEnhanceLeavesThePreviousFileWhole(signal: Int32) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // Ten minutes of noise: enhancing it takes several seconds, so the stop comes while it writes.
        let long = scratch.path("long.wav")
        let writer = try AudioFileWriter(path: long, sampleRate: 16_000)
        var generator = SystemRandomNumberGenerator()
        let second = (0..<16_000).map { _ in Float.random(in: -0.1...0.1, using: &generator) }
        for _ in 0..<600 { try second.withUnsafeBufferPointer { try writer.write($0) } }
        try writer.close()
        let target = scratch.path("previous.wav")
        try FileManager.default.copyItem(atPath: Self.clip, toPath: target)
        let previous = try Data(contentsOf: URL(fileURLWithPath: target))

        let process = hearAlertProcess(["enhance", long, target])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        usleep(1_500_000)
        #expect(process.isRunning, "enhance finished before it could be stopped")
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == signal)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == previous)
        #expect(scratch.names == ["long.wav", "previous.wav"])
    }

    @Test(arguments: ["/nonexistent/report.json", "\(DetectCommandTests.clip)/report.json"])
    func aReportPathThatCannotBeWrittenFailsBeforeTheWork(json: String) throws {
        let corpus = try EvaluateCorpus.write()
        defer { try? FileManager.default.removeItem(atPath: corpus) }
        let result = try runHearAlert(["evaluate", "--corpus", corpus, "--model", Self.model, "--json", json])
        #expect(result.status == 1)
        // One plain line, and no table: the corpus was not evaluated first.
        #expect(result.stderr.hasPrefix("Error: \(json): cannot write: "), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func anOutputFolderThatCannotBeWrittenFailsBeforeTheWork() throws {
        let result = try runHearAlert(["enhance", Self.clip, "/nonexistent/out.wav",
                                       "--model", Self.model])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: /nonexistent/out.wav: cannot write: the folder /nonexistent does not exist\n")
    }

    /// A device is written in place, never replaced by a file (as root, a rename would replace /dev/null).
    @Test func aDeviceIsWrittenInPlace() throws {
        for arguments in [["enhance", Self.clip, "/dev/null"], ["features", Self.clip, "-o", "/dev/null"]] {
            let result = try runHearAlert(arguments)
            #expect(result.status == 0, "\(result.stderr)")
            let type = try FileManager.default.attributesOfItem(atPath: "/dev/null")[.type] as? FileAttributeType
            #expect(type == .typeCharacterSpecial)
        }
        let full = try runHearAlert(["features", Self.clip, "-o", "/dev/full"])
        #expect(full.status == 1)
        #expect(full.stderr == "Error: /dev/full: cannot write: No space left on device\n")
    }
}
