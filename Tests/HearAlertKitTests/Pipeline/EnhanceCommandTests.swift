import Foundation
import Testing

/// `hearalert enhance --alert-intervals` as a person runs it: the real binary on the fixture clip (8.0 s).
@Suite struct EnhanceCommandTests {
    static let clip = DetectCommandTests.clip

    static func enhance(table rows: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let table = scratch.path("alerts.tsv")
        try ("filename\tonset\toffset\tevent_label\n" + rows).write(toFile: table, atomically: true, encoding: .utf8)
        return try runHearAlert(["enhance", clip, scratch.path("out.wav"), "--alert-intervals", table])
    }

    @Test func aTableWithNoRowForTheFileIsAWarning() throws {
        let result = try Self.enhance(table: "other.wav\t1.0\t2.0\tsiren\n")
        #expect(result.status == 0)
        #expect(result.stderr.hasSuffix("alerts.tsv has no row for alerts_clip.wav: it keeps no alert audible\n"),
                "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stdout.hasSuffix("0 alert interval(s) kept audible (0.0 s)\n"), "\(result.stdout)")
    }

    @Test func intervalsPastTheEndAreClippedToTheFile() throws {
        // 6.5-499 s keeps 6.5-8.0 s; 20-30 s lies wholly past the end: it keeps nothing, and is worth a word.
        let result = try Self.enhance(table: "alerts_clip.wav\t6.5\t499.0\tsiren\nalerts_clip.wav\t20\t30\tsiren\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasSuffix("1 alert interval(s) kept audible (1.5 s)\n"), "\(result.stdout)")
        #expect(result.stderr.hasSuffix("alerts.tsv: 1 interval for alerts_clip.wav starts after its end (8.0 s)\n"),
                "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
}
