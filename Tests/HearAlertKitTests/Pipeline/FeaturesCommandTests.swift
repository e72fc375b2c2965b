import Foundation
import Testing

/// `hearalert features` as a researcher runs it: the real binary.
@Suite struct FeaturesCommandTests {
    @Test func theInputNamedAsOutputIsRefusedAndKept() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-features-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let audio = folder.appendingPathComponent("clip.wav")
        try FileManager.default.copyItem(atPath: DetectCommandTests.clip, toPath: audio.path)
        let original = try Data(contentsOf: audio)

        let result = try runHearAlert(["features", audio.path, "-o", folder.appendingPathComponent("./clip.wav").path])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: -o \(folder.path)/./clip.wav is the input file"), "\(result.stderr)")
        #expect(try Data(contentsOf: audio) == original)
    }
}
