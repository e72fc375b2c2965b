import Foundation
import HearAlertKit

/// A model file that failed to load, named: alertnet's message says what is wrong inside a file ("header length
/// … exceeds …") but not which file, and a person who passed `--model X` needs both.
struct ModelFileError: Error, CustomStringConvertible, LocalizedError {
    let path: String
    let reason: AlertModelError

    var description: String {
        let message = "\(reason)"
        return message.contains(path) ? message : "\(path): \(message)"
    }

    var errorDescription: String? { description }

    /// Runs `body`, which reads the model at `path`, naming the file in any model error it throws.
    static func naming<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as AlertModelError {
            throw ModelFileError(path: path, reason: error)
        }
    }
}
