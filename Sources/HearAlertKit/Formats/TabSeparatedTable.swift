import Foundation

/// A tab-separated table with a fixed header, read strictly: every line after the header is a row with exactly
/// the header's columns, and any deviation is an error naming the file and line.
struct TabSeparatedTable {
    /// One data row: its 1-based line number in the file and its fields, in header order.
    struct Row {
        let line: Int
        let fields: [String]
    }

    let displayPath: String
    let rows: [Row]

    /// Reads `path`, requiring the first line to be exactly `header` joined by tabs.
    ///
    /// The file may end with a newline; an empty line anywhere else is an error, because it is either a lost row
    /// or a damaged file; so is a Windows line ending, which would hide in the last field (as tools/corpus_format.py
    /// rules too).
    init(path: String, displayPath: String, header: [String]) throws {
        self.displayPath = displayPath
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TextFileError(file: displayPath, "cannot be read (missing or not a file)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw TextFileError(file: displayPath, "is not UTF-8 text")
        }
        // Split on scalars: "\r\n" is a single Character, which would hide a Windows line ending.
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String(String.UnicodeScalarView($0)) }
        if lines.last == "" { lines.removeLast() }
        guard let first = lines.first else { throw TextFileError(file: displayPath, "is empty; expected a header") }
        if let index = lines.firstIndex(where: { $0.unicodeScalars.contains("\r") }) {
            throw TextFileError(file: displayPath, line: index + 1, "carriage return (CRLF line ending); use LF")
        }
        let expected = header.joined(separator: "\t")
        guard first == expected else {
            throw TextFileError(file: displayPath, line: 1,
                              "header must be exactly \(Self.show(expected)), found \(Self.show(first))")
        }
        var rows: [Row] = []
        for (index, line) in lines.enumerated().dropFirst() {
            let number = index + 1
            guard !line.isEmpty else { throw TextFileError(file: displayPath, line: number, "empty line") }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == header.count else {
                throw TextFileError(file: displayPath, line: number,
                                  "expected \(header.count) tab-separated fields (\(header.joined(separator: ", "))), found \(fields.count)")
            }
            rows.append(Row(line: number, fields: fields))
        }
        self.rows = rows
    }

    /// Parses a time or duration written as a plain decimal (`12`, `3.250`, `1e-3`): no hex, `nan` or `inf`.
    func seconds(_ text: String, column: String, row: Row) throws -> Double {
        let allowed = Set("0123456789+-.eE")
        guard !text.isEmpty, text.allSatisfy(allowed.contains), let value = Double(text), value.isFinite else {
            throw TextFileError(file: displayPath, line: row.line, "\(column) \(Self.show(text)) is not a decimal number")
        }
        return value
    }

    func error(_ row: Row, _ problem: String) -> TextFileError {
        TextFileError(file: displayPath, line: row.line, problem)
    }

    /// Quotes a value with tabs made visible, so header mismatches can be read.
    static func show(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\t", with: "<TAB>") + "\""
    }
}
