import Foundation

/// Why a corpus cannot be evaluated, naming the file and, for table rows, the line.
///
/// A corpus reader that skipped bad rows would score a different corpus than the one described, silently, so
/// every problem is one of these and stops the evaluation.
public struct CorpusError: Error, CustomStringConvertible, LocalizedError, Equatable {
    /// The offending file, as the user would type it (the corpus directory joined with the file's name).
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
