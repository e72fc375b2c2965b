import Foundation

/// Why a result file cannot be written, in one line that names it (Foundation's own file errors print as a
/// multi-line NSError dump; these say what a person can do about it).
public enum OutputFileError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// The output names one of the command's inputs (the same path, a symlink or a hard link to it).
    case isInput(path: String, input: CommandInput)
    /// The output lies among a corpus's own files (`entry`: which one, e.g. `files.tsv` or `audio/`).
    case insideCorpus(path: String, corpus: String, entry: String)
    /// The output names a folder, not a file.
    case isFolder(path: String)
    /// The file system refused (no such folder, permission denied, disk full); `reason` is the system's words.
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .isInput(let path, let input):
            let named = input.path == path ? "" : " \(input.path)"
            return "\(path) is the \(input.role)\(named); choose another name for the output"
        case .insideCorpus(let path, let corpus, let entry):
            return "\(path) is part of the corpus \(corpus) (\(entry)); write it outside the corpus's own files"
        case .isFolder(let path): return "\(path): is a folder; name a file to write"
        case .cannotWrite(let path, let reason): return "\(path): cannot write: \(reason)"
        }
    }

    public var errorDescription: String? { description }

    /// Refuses an `output` that would overwrite one of `inputs`, before anything is opened for writing.
    public static func checkNotInput(_ output: String, inputs: [CommandInput]) throws(OutputFileError) {
        if let input = CommandInput.overwritten(by: output, among: inputs) {
            throw .isInput(path: output, input: input)
        }
    }

    /// `cannotWrite` for the `errno` value `code`, worded for the destination `path`.
    static func system(_ code: Int32, path: String) -> OutputFileError {
        if code == ENOENT {
            let folder = (path as NSString).deletingLastPathComponent
            return .cannotWrite(path: path, reason: "the folder \(folder.isEmpty ? "." : folder) does not exist")
        }
        return .cannotWrite(path: path, reason: String(cString: strerror(code)))
    }
}
