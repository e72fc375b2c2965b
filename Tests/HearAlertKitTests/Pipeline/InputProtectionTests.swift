import Foundation
import Testing

/// No command writes over what it reads: an output that is an input (the same path, a symlink or a hard link to
/// it) or a corpus's own file is refused before anything is opened for writing, and the input is left as it was.
@Suite struct InputProtectionTests {
    static let clip = DetectCommandTests.clip
    static let model = ListenEndToEndTests.model

    /// Runs `arguments` (built from the scratch folder) and checks the refusal: one error line naming `phrase`,
    /// a failure status, and every file in `kept` byte for byte as before.
    static func expectRefused(_ arguments: [String], phrase: String, kept: [String], status: Int32? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = try kept.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let result = try runHearAlert(arguments)
        #expect(result.status != 0, "\(arguments) exited 0", sourceLocation: sourceLocation)
        if let status { #expect(result.status == status, sourceLocation: sourceLocation) }
        #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains(phrase), "\(result.stderr)",
                sourceLocation: sourceLocation)
        for (path, data) in zip(kept, before) {
            #expect((try? Data(contentsOf: URL(fileURLWithPath: path))) == data, "\(path) changed",
                    sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: ["enhance", "features"], ScratchFolder.Alias.allCases)
    func aWriterRefusesToWriteOverItsInput(command: String, alias: ScratchFolder.Alias) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let input = try scratch.copy(Self.clip, as: "clip.wav")
        let output = try scratch.alias(alias, of: input, as: "out")
        let arguments = command == "enhance" ? ["enhance", input, output] : ["features", input, "-o", output]
        try Self.expectRefused(arguments, phrase: "is the input file", kept: [input], status: 64)
    }

    @Test func enhanceRefusesToWriteOverItsAlertTable() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let table = scratch.path("alerts.tsv")
        try "filename\tonset\toffset\tevent_label\nclip.wav\t1.0\t2.0\tsiren\n"
            .write(toFile: table, atomically: true, encoding: .utf8)
        try Self.expectRefused(["enhance", Self.clip, table, "--alert-intervals", table],
                               phrase: "is the --alert-intervals file", kept: [table], status: 64)
    }

    @Test(arguments: ScratchFolder.Alias.allCases)
    func evaluateRefusesToWriteItsReportOverTheModel(alias: ScratchFolder.Alias) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let model = try scratch.copy(Self.model, as: "model.safetensors")
        let json = try scratch.alias(alias, of: model, as: "report.json")
        let corpus = try EvaluateCorpus.write()
        defer { try? FileManager.default.removeItem(atPath: corpus) }
        try Self.expectRefused(["evaluate", "--corpus", corpus, "--model", model, "--json", json],
                               phrase: "is the model file", kept: [model], status: 64)
    }

    @Test func detectRefusesAResultFileThatIsAnInput() throws {
        // An audio file whose name ends in .tsv: its result file in the same folder would be itself.
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let input = try scratch.copy(Self.clip, as: "clip.tsv")
        try Self.expectRefused(["detect", "--model", Self.model, input, "--format", "tsv", "--output", scratch.url.path],
                               phrase: "is the input file", kept: [input])
    }

    /// corpus.json, files.tsv, annotations.tsv, anything under audio/ (and clean/, alerts/), under any name.
    @Test(arguments: ["corpus.json", "files.tsv", "annotations.tsv", "audio/clip.wav", "audio/report.json",
                      "link-to-files.tsv", "hard-link-to-annotations.tsv"])
    func evaluateRefusesToWriteIntoTheCorpus(target: String) throws {
        let corpus = try EvaluateCorpus.write()
        defer { try? FileManager.default.removeItem(atPath: corpus) }
        let outside = try ScratchFolder()
        defer { outside.remove() }
        var json = corpus + "/" + target
        if target == "link-to-files.tsv" {
            json = outside.path(target)
            try FileManager.default.createSymbolicLink(atPath: json, withDestinationPath: corpus + "/files.tsv")
        } else if target == "hard-link-to-annotations.tsv" {
            json = outside.path(target)
            try FileManager.default.linkItem(atPath: corpus + "/annotations.tsv", toPath: json)
        }
        let own = ["corpus.json", "files.tsv", "annotations.tsv", "audio/clip.wav"].map { corpus + "/" + $0 }
        try Self.expectRefused(["evaluate", "--corpus", corpus, "--model", Self.model, "--json", json],
                               phrase: "is part of the corpus", kept: own)
        #expect(!FileManager.default.fileExists(atPath: corpus + "/audio/report.json"))
    }

    @Test func evaluateWritesItsReportBesideTheCorpusFiles() throws {
        let corpus = try EvaluateCorpus.write()
        defer { try? FileManager.default.removeItem(atPath: corpus) }
        let result = try runHearAlert(["evaluate", "--corpus", corpus, "--model", Self.model,
                                       "--json", corpus + "/report.json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try Data(contentsOf: URL(fileURLWithPath: corpus + "/report.json"))
        #expect(try JSONSerialization.jsonObject(with: report) is [String: Any])
    }
}

/// A one-file corpus of the detector fixture's clip, for `hearalert evaluate` runs that take a second.
enum EvaluateCorpus {
    static func write() throws -> String {
        var layout = TemporaryCorpus()
        layout.description = #"{"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": ["siren", "smoke_alarm"]}"#
        layout.files = "filename\tduration\nclip.wav\t8.0\n"
        layout.annotations = try String(contentsOfFile: ListenEndToEndTests.fixtures.appendingPathComponent(
            "alerts_clip.tsv").path, encoding: .utf8).replacingOccurrences(of: "alerts_clip.wav", with: "clip.wav")
        layout.audio = []
        let directory = try layout.write()
        try FileManager.default.createDirectory(atPath: directory + "/audio", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: DetectCommandTests.clip, toPath: directory + "/audio/clip.wav")
        return directory
    }
}
