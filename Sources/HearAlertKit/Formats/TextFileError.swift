import Foundation

/// A problem in a text file a person gave us (a corpus's tables and corpus.json, an alert-interval table),
/// named by file and, for a table row, line — printed as `file:line: problem`, the form editors jump to.
///
/// Readers stop at the first one instead of skipping bad rows: a corpus reader that skipped rows would score a
/// different corpus than the one described, silently.
public struct TextFileError: Error, CustomStringConvertible, LocalizedError, Equatable {
    /// The offending file, as the user would type it (for a corpus, its directory joined with the file's name).
    public let file: String
    /// 1-based line number in `file`, when the problem is on one line.
    public let line: Int?
    /// What is wrong, in one sentence.
    public let problem: String

    public init(file: String, line: Int? = nil, _ problem: String) {
        self.file = file
        self.line = line
        self.problem = problem
    }

    public var description: String {
        if let line { "\(file):\(line): \(problem)" } else { "\(file): \(problem)" }
    }

    public var errorDescription: String? { description }
}
