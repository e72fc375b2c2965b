import Foundation

/// Why `detect --output` cannot write its results, in one line that names the path (Foundation's own errors
/// print as a multi-line NSError dump).
enum DetectOutputError: Error, CustomStringConvertible, LocalizedError {
    case cannotCreateFolder(path: String, reason: String)
    /// Two inputs with the same name (`a/x.wav`, `b/x.wav`, or `x.wav` and `x.flac`) would overwrite one result.
    case sameResultFile(first: String, second: String, target: String)

    var description: String {
        switch self {
        case .cannotCreateFolder(let path, let reason): "cannot create the output folder \(path): \(reason)"
        case .sameResultFile(let first, let second, let target):
            "\(first) and \(second) would both be written to \(target); run them separately or rename one"
        }
    }

    var errorDescription: String? { description }

    /// The system's reason ("Permission denied", "Not a directory") behind a Foundation file error.
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        // swift-corelibs-foundation stores the errno as a Swift POSIXError, not as an NSError.
        if let posix = nsError.userInfo[NSUnderlyingErrorKey] as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return nsError.localizedFailureReason ?? nsError.localizedDescription
    }
}
