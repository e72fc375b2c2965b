import Foundation
import Testing
@testable import HearAlertKit

@Suite struct AlertLineFormatterTests {
    static let time = Date(timeIntervalSince1970: 1_795_000_000.25)
    static let start = AlertReport(message: .started(label: "smoke_alarm", score: 0.93, onset: 1.5, detectedAt: 1.84),
                                   source: "mic \"A\"", time: time)
    static let end = AlertReport(message: .ended(AlertEvent(label: "smoke_alarm", onset: 1.5, offset: 3.25,
                                                            detectedAt: 1.84, peakScore: 0.97)), source: "x.wav", time: time)

    /// Parsed back by Foundation's JSON reader: the fields the README documents, with their values.
    @Test func jsonLinesCarryTheDocumentedFields() throws {
        let line = AlertLineFormatter.jsonLine(Self.start)
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "alert_start")
        #expect(object["label"] as? String == "smoke_alarm")
        #expect(object["score"] as? Double == 0.93)
        #expect(object["stream_time"] as? Double == 1.5)
        #expect(object["detected_at"] as? Double == 1.84)
        #expect(object["source"] as? String == "mic \"A\"")
        #expect(object["time"] as? String == "2026-11-18T11:06:40.250Z")

        let ended = try #require(
            try JSONSerialization.jsonObject(with: Data(AlertLineFormatter.jsonLine(Self.end).utf8)) as? [String: Any])
        #expect(ended["type"] as? String == "alert_end")
        #expect(ended["stream_time"] as? Double == 3.25)
        #expect(ended["duration"] as? Double == 1.75)
        #expect(ended["score"] as? Double == 0.97)
    }

    @Test func textIsReadableAndColouredOnlyWhenAsked() {
        let plain = AlertLineFormatter.textLine(Self.start, colour: false)
        #expect(plain.contains("ALERT  smoke alarm  (score 0.93, at 1.50 s)"))
        #expect(!plain.contains("\u{1B}"))
        #expect(AlertLineFormatter.textLine(Self.start, colour: true).hasPrefix("\u{1B}[1;31m"))
        #expect(AlertLineFormatter.textLine(Self.end, colour: false).contains("ended  smoke alarm  (1.50–3.25 s"))
    }

    @Test func tsvRowsAreDCASEEventLists() {
        let row = AlertLineFormatter.tsvLine(filename: "mix_0007.wav",
                                             event: AlertEvent(label: "siren", onset: 1.5, offset: 3.0004,
                                                               detectedAt: 2, peakScore: 0.9))
        #expect(AlertLineFormatter.tsvHeader == "filename\tonset\toffset\tevent_label")
        #expect(row == "mix_0007.wav\t1.500\t3.000\tsiren")
    }

    @Test func controlCharactersAreEscapedInJSON() {
        #expect(AlertLineFormatter.quoted("a\u{01}\n\\") == "\"a\\u0001\\n\\\\\"")
    }
}
