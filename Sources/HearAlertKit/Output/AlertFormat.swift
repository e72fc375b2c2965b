import Foundation

/// How alerts are written to a terminal, pipe or file.
public enum AlertFormat: String, Sendable, CaseIterable {
    /// One JSON object per line (`type`, `label`, `score`, `stream_time`, `time`, `source`, ...): for programs.
    case jsonl
    /// One readable line per message, coloured on a terminal: for people.
    case text
    /// DCASE event lists, `filename onset offset event_label` (sed_eval reads these): ended events only.
    case tsv
}

/// Renders alert messages as lines of text in each `AlertFormat`.
public enum AlertLineFormatter {
    /// The JSON Lines object for one message, without the newline.
    ///
    /// Scores are rounded to 4 decimals and times to milliseconds; more digits would be noise. `alert_end` adds
    /// `onset`, `offset` and `duration`; both add `detected_at` (stream time when the start was announced).
    public static func jsonLine(_ report: AlertReport) -> String {
        var fields: [(String, String)] = [
            ("type", quoted(report.message.typeName)),
            ("label", quoted(report.message.label)),
            ("score", number(Double(report.message.score), decimals: 4)),
            ("stream_time", number(report.message.streamTime, decimals: 3)),
            ("time", quoted(report.isoTime)),
            ("source", quoted(report.source)),
        ]
        switch report.message {
        case .started(_, _, _, let detectedAt):
            fields.append(("detected_at", number(detectedAt, decimals: 3)))
        case .ended(let event):
            fields.append(("onset", number(event.onset, decimals: 3)))
            fields.append(("offset", number(event.offset, decimals: 3)))
            fields.append(("duration", number(event.duration, decimals: 3)))
            fields.append(("detected_at", number(event.detectedAt, decimals: 3)))
        }
        return "{" + fields.map { "\(quoted($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    /// A line for people: `09:00:01  ALERT  siren  (score 0.93, at 1.52 s)  default`.
    public static func textLine(_ report: AlertReport, colour: Bool) -> String {
        let clock = report.time.formatted(Date.ISO8601FormatStyle(timeZone: .current).time(includingFractionalSeconds: false))
        // Labels are identifiers (the loader refuses others); the device name may be anything: both escaped.
        let label = PrintableText.escaped(report.message.label.replacingOccurrences(of: "_", with: " "))
        let body: String
        let style: String
        switch report.message {
        case .started(_, let score, let onset, _):
            body = "ALERT  \(label)  (score \(format(Double(score), 2)), at \(format(onset, 2)) s)"
            style = "\u{1B}[1;31m"
        case .ended(let event):
            body = "ended  \(label)  (\(format(event.onset, 2))–\(format(event.offset, 2)) s, lasted "
                + "\(format(event.duration, 1)) s, peak \(format(Double(event.peakScore), 2)))"
            style = "\u{1B}[2m"
        }
        let line = "\(clock)  \(body)  \(PrintableText.escaped(report.source))"
        return colour ? style + line + "\u{1B}[0m" : line
    }

    /// One finished event for people: `clip.wav  siren  1.02–3.05 s  (peak 0.99, announced at 1.31 s)`.
    public static func eventLine(filename: String, event: AlertEvent, colour: Bool) -> String {
        let label = PrintableText.escaped(event.label.replacingOccurrences(of: "_", with: " "))
        let line = "\(PrintableText.escaped(filename))  \(label)  \(format(event.onset, 2))–\(format(event.offset, 2)) s  "
            + "(peak \(format(Double(event.peakScore), 2)), announced at \(format(event.detectedAt, 2)) s)"
        return colour ? "\u{1B}[1m" + line + "\u{1B}[0m" : line
    }

    /// The DCASE header row, written once before `tsvLine` rows.
    public static let tsvHeader = "filename\tonset\toffset\tevent_label"

    /// One DCASE row for a finished event; `filename` is the audio file's name as the annotations name it.
    public static func tsvLine(filename: String, event: AlertEvent) -> String {
        "\(filename)\t\(format(event.onset, 3))\t\(format(event.offset, 3))\t\(event.label)"
    }

    private static func format(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }

    private static func number(_ value: Double, decimals: Int) -> String {
        let scale = pow(10, Double(decimals))
        let rounded = (value * scale).rounded() / scale
        return rounded.isFinite ? "\(rounded)" : "null"
    }

    /// A JSON string literal (RFC 8259 escaping).
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let control where control.value < 0x20:
                out += String(format: "\\u%04x", control.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
