import Foundation
import Testing
@testable import HearAlertKit

/// Weight files as a hostile author would write them: labels and a model name that try to act on a terminal,
/// break a TSV row, or lose characters on the way. The loader refuses such labels (C core and host); names and
/// other free text are shown escaped, never interpreted.
@Suite struct ForgedModelTests {
    /// The tone fixture's header holds `"labels":"[\"siren\", \"smoke_alarm\"]"` and
    /// `"model_name":"hearalert-test-tone-bands"`.
    static let original = ListenEndToEndTests.model

    /// The fixture with `text` replaced by `forged` (raw header bytes, as they stand in the file), written to a
    /// fresh temporary file; the header is re-padded to a multiple of 8 bytes.
    static func forged(_ text: String, with forged: [UInt8]) throws -> String {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: original)))
        let length = bytes[0..<8].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        var header = Array(bytes[8..<(8 + length)])
        let target = Array(text.utf8)
        let start = try #require((0...(header.count - target.count)).first {
            Array(header[$0..<($0 + target.count)]) == target
        })
        header.replaceSubrange(start..<(start + target.count), with: forged)
        while header.last == UInt8(ascii: " ") { header.removeLast() }
        while header.count % 8 != 0 { header.append(UInt8(ascii: " ")) }
        let size = (0..<8).map { UInt8(truncatingIfNeeded: header.count >> (8 * $0)) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("forged-\(UUID()).safetensors").path
        try Data(size + header + bytes[(8 + length)...]).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The fixture with its first label replaced by `label`, written as it stands in the header (JSON text inside
    /// a JSON string, so `\\u001b` there is ESC in the label).
    static func forgedLabel(_ label: [UInt8]) throws -> String {
        try forged(#"\"siren\""#, with: Array(#"\""#.utf8) + label + Array(#"\""#.utf8))
    }

    static let escape = Array(#"\\u001b[2J\\u001b[1;31mFAKE\\u001b]0;title\\u0007"#.utf8)

    @Test(arguments: [
        (escape, "label 0 (\"\\x1B[2J\\x1B[1;31mFAKE\\x1B]0;title\\x07\") must be 1 to 32 characters of a-z, 0-9 and _"),
        (Array(#"sir\\ten"#.utf8), "label 0 (\"sir\\x09en\") must be 1 to 32 characters"),
        (Array(#"siren\\n00:00 ALERT fire"#.utf8), "label 0 (\"siren\\x0A00:00 ALERT fire\") must be"),
        (Array(#"sir\\u0000en"#.utf8), "metadata \"labels\" holds a NUL character (\\u0000, near byte 5)"),
        (Array("sir".utf8) + [0xFF, 0xFE] + Array("en".utf8), "must be 1 to 32 characters of a-z, 0-9 and _"),
        (Array("Siren".utf8), "label 0 (\"Siren\") must be 1 to 32 characters"),
    ])
    func aLabelThatIsNotAnIdentifierIsRefused(label: [UInt8], message: String) throws {
        let path = try Self.forgedLabel(label)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try AlertModel(path: path)
            Issue.record("loaded a model whose first label is \(label)")
        } catch let error as AlertModelError {
            #expect("\(error)".contains(message), "\(error)")
            #expect(!"\(error)".unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(error)")
        }
    }

    @Test func theLabelRuleIsFormatMDs() {
        for good in ["siren", "car_horn", "a", "_", "x9", String(repeating: "z", count: 32)] {
            #expect(AlertLabel.isValid(good), "\(good)")
        }
        for bad in ["", "Siren", "car horn", "car-horn", "sir\ten", "sir\u{0}en", "café", "\u{1B}[2J",
                    String(repeating: "z", count: 33)] {
            #expect(!AlertLabel.isValid(bad), "\(bad)")
        }
    }

    /// A model name that would clear the screen and set the window title, through every command that shows it.
    @Test func aForgedModelNameIsShownEscapedByInspectAndCheck() throws {
        // model_name is plain text in the header's JSON: one backslash makes an escape there.
        let path = try Self.forged("hearalert-test-tone-bands",
                                   with: Array(#"\u001b[2J\u001b[1;31mFAKE\u001b]0;title\u0007"#.utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let shown = #"\u{1b}[2J\u{1b}[1;31mFAKE\u{1b}]0;title\u{7}"#
        let inspect = try runHearAlert(["model", "inspect", path])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout.contains("model       \(shown)\n"), "\(inspect.stdout)")
        let check = try runHearAlert(["model", "check", path])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout == "\(path): OK: \(shown): 2 labels (siren, smoke_alarm), input 32x64, 130 parameters\n")
        for output in [inspect.stdout, check.stdout] {
            #expect(!output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{7}" })
        }
    }

    @Test func controlAndFormatCharactersAreEscapedAndEverythingElseKept() {
        #expect(PrintableText.escaped("siren") == "siren")
        #expect(PrintableText.escaped("a\tb\nc\rd") == #"a\tb\nc\rd"#)
        #expect(PrintableText.escaped("\u{1B}[2J\u{7F}\u{9B}") == #"\u{1b}[2J\u{7f}\u{9b}"#)
        #expect(PrintableText.escaped("abc\u{202E}cba") == #"abc\u{202e}cba"#)  // a bidirectional override
        #expect(PrintableText.escaped("café \\ ☃") == "café \\ ☃")
    }

    @Test func textLinesEscapeWhatCameFromOutside() {
        let message = AlertMessage.started(label: "siren", score: 0.9, onset: 1, detectedAt: 1.2)
        let line = AlertLineFormatter.textLine(AlertReport(message: message, source: "mic\u{1B}]0;x\u{7}"),
                                               colour: false)
        #expect(line.hasSuffix(#"mic\u{1b}]0;x\u{7}"#), "\(line)")
        let event = AlertEvent(label: "siren", onset: 1, offset: 2, detectedAt: 1.2, peakScore: 0.9)
        #expect(AlertLineFormatter.eventLine(filename: "a\nb.wav", event: event, colour: false)
            .hasPrefix(#"a\nb.wav  siren  1.00–2.00 s"#))
    }
}
