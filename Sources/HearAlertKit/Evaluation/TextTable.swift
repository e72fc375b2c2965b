import Foundation

/// Columns of text padded to line up, for reports on a terminal: the first column left-aligned, the rest right.
struct TextTable {
    private var rows: [[String]] = []

    init(header: [String]) {
        rows.append(header)
    }

    mutating func add(_ row: [String]) {
        rows.append(row)
    }

    /// The table, indented by `indent` spaces, with a rule under the header.
    func rendered(indent: Int = 2) -> String {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        let pad = String(repeating: " ", count: indent)
        var lines = rows.map { row in
            var line = pad + row.enumerated().map { column, cell in
                let fill = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + fill : fill + cell
            }.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }  // a row whose last cells are empty
            return line
        }
        lines.insert(pad + String(repeating: "─", count: widths.reduce(0, +) + 2 * max(0, columns - 1)), at: 1)
        return lines.joined(separator: "\n")
    }
}

/// How report numbers are written: percentages with one decimal, rates with two, "—" where undefined.
enum ReportFormat {
    static func percent(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "—" }
        return String(format: "%.1f%%", value * 100)
    }

    static func rate(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "—" }
        return abs(value) >= 1e6 ? "∞" : String(format: "%.2f", value)
    }

    static func seconds(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "—" }
        return String(format: "%.2f s", value)
    }

    static func decibels(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "—" }
        return String(format: "%.1f dB", value)
    }

    static func perHour(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "—" }
        return String(format: "%.2f/h", value)
    }

    /// A signed difference in the unit of `format`.
    static func difference(_ value: Double?, scale: Double = 1, decimals: Int = 2, unit: String = "") -> String {
        guard let value, value.isFinite else { return "—" }
        return String(format: "%+.\(decimals)f", value * scale) + unit
    }
}
