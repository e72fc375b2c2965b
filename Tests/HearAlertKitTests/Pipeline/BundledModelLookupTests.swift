import Foundation
import Testing

/// `hearalert` finds its bundled model the way a person starts it: from any folder, by name through `PATH`,
/// through a symbolic link, and from an install made by tools/install.sh. Each run is in a fresh folder away
/// from the checkout, with no `HEARALERT_MODEL`, and detects the fixture clip with the bundled model.
@Suite struct BundledModelLookupTests {
    static let clip = DetectCommandTests.clip
    static let checkout = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A fresh empty folder, removed by the caller.
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-lookup-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// `hearalert detect CLIP` started by name, found on `path` (`env` looks it up there, as a shell would, and
    /// passes `hearalert` as argv[0]), in `directory`.
    static func detectByName(onPath path: String, in directory: URL) throws -> (status: Int32, stdout: String,
                                                                               stderr: String) {
        try runHearAlert(["PATH=\(path):/usr/bin:/bin", "hearalert", "detect", clip, "--format", "tsv"],
                         in: directory, binary: "/usr/bin/env")
    }

    @Test func byNameThroughPATHFromAnotherFolder() throws {
        let elsewhere = try Self.folder()
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let bin = URL(fileURLWithPath: ListenEndToEndTests.binary).deletingLastPathComponent().path
        let result = try Self.detectByName(onPath: bin, in: elsewhere)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("filename\tonset\toffset\tevent_label\nalerts_clip.wav\t"), "\(result.stdout)")
    }

    @Test func throughASymbolicLinkByNameAndByPath() throws {
        let elsewhere = try Self.folder()
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let links = elsewhere.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: links, withIntermediateDirectories: true)
        let link = links.appendingPathComponent("hearalert")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: ListenEndToEndTests.binary)
        let byName = try Self.detectByName(onPath: links.path, in: elsewhere)
        #expect(byName.status == 0, "\(byName.stderr)")
        let byPath = try runHearAlert(["detect", Self.clip, "--format", "tsv"], in: elsewhere, binary: link.path)
        #expect(byPath.status == 0, "\(byPath.stderr)")
        #expect(byName.stdout == byPath.stdout && byPath.stdout.contains("alerts_clip.wav\t"))
    }

    @Test func installedIntoAPrefixItFindsItsModelThere() throws {
        let prefix = try Self.folder()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let install = Process()
        install.executableURL = Self.checkout.appendingPathComponent("tools/install.sh")
        install.arguments = ["--prefix", prefix.path, "--binary", ListenEndToEndTests.binary]
        install.standardError = FileHandle.nullDevice
        try install.run()
        install.waitUntilExit()
        #expect(install.terminationStatus == 0)
        let model = prefix.appendingPathComponent("share/hearalert/default.safetensors").path
        #expect(FileManager.default.contentsEqual(
            atPath: model, andPath: Self.checkout.appendingPathComponent("models/default.safetensors").path))
        // The installed copy is outside any checkout: only its prefix's share/ holds a model.
        let elsewhere = try Self.folder()
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let result = try Self.detectByName(onPath: prefix.appendingPathComponent("bin").path, in: elsewhere)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("filename\tonset\toffset\tevent_label\n"))
        try FileManager.default.removeItem(atPath: model)
        let without = try Self.detectByName(onPath: prefix.appendingPathComponent("bin").path, in: elsewhere)
        #expect(without.status == 1)
        #expect(without.stderr == "Error: no bundled model found (looked for models/default.safetensors, "
            + "\(prefix.resolvingSymlinksInPath().path)/share/hearalert/default.safetensors); give one with "
            + "--model FILE or $HEARALERT_MODEL\n", "\(without.stderr)")
    }
}
