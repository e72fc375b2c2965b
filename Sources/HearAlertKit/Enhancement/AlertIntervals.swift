import Foundation

/// When alerts sound in a file, so that offline enhancement keeps them audible as the live pipeline does when
/// the detector reports one.
public struct AlertIntervals: Sendable, Equatable {
    /// Alert stretches in seconds from the file's start, sorted by onset.
    public let intervals: [ClosedRange<Double>]

    /// Any order, overlaps allowed (a siren and a horn at once).
    public init(_ intervals: [ClosedRange<Double>] = []) {
        self.intervals = intervals.sorted { $0.lowerBound < $1.lowerBound }
    }

    /// Whether any alert overlaps the stretch [start, end) seconds.
    public func overlaps(start: Double, end: Double) -> Bool {
        intervals.contains { $0.lowerBound < end && $0.upperBound >= start }
    }

    /// The intervals within a file of `duration` seconds: ends past it are cut there, and intervals that start
    /// at or after it are dropped (a table written for a longer file must not claim alerts this one cannot hold).
    public func clipped(to duration: Double) -> AlertIntervals {
        AlertIntervals(intervals.compactMap { $0.lowerBound < duration ? $0.lowerBound...min($0.upperBound, duration) : nil })
    }

    /// Total seconds covered (overlaps counted once).
    public var coveredSeconds: Double {
        var total = 0.0
        var reach = -Double.infinity
        for interval in intervals where interval.upperBound > reach {
            total += interval.upperBound - max(interval.lowerBound, reach)
            reach = interval.upperBound
        }
        return total
    }

    /// Reads the rows of a DCASE event table (`filename<TAB>onset<TAB>offset<TAB>event_label`, as in a corpus's
    /// annotations.tsv or `hearalert detect --format tsv`) that name `filename`; rows for other files are
    /// ignored, so one table can serve a whole corpus. Any malformed row is an error naming its line.
    public static func load(dcaseTable path: String, filename: String) throws -> AlertIntervals {
        let table = try TabSeparatedTable(
            path: path, displayPath: path, header: ["filename", "onset", "offset", "event_label"])
        var intervals: [ClosedRange<Double>] = []
        for row in table.rows where row.fields[0] == filename {
            let onset = try table.seconds(row.fields[1], column: "onset", row: row)
            let offset = try table.seconds(row.fields[2], column: "offset", row: row)
            guard onset >= 0, offset >= onset else {
                throw table.error(row, "onset \(onset) and offset \(offset) do not make an interval")
            }
            intervals.append(onset...offset)
        }
        return AlertIntervals(intervals)
    }
}
