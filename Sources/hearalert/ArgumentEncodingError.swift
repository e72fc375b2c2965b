import Foundation
import HearAlertKit

/// A command-line argument (usually a file name) whose bytes are not UTF-8, e.g. a name written in Latin-1.
/// Swift's `CommandLine.arguments` repairs such bytes to U+FFFD, so the name would no longer match the file; this
/// says so, showing each byte that is not UTF-8 as `\xNN`.
struct ArgumentEncodingError: Error, CustomStringConvertible, LocalizedError {
    /// The argument's position (1 is the first after `hearalert`).
    let position: Int
    /// Its bytes, without the terminating NUL.
    let bytes: [UInt8]

    var description: String {
        "argument \(position) (\(Self.shown(bytes))) is not UTF-8 text; HearAlert can only name files whose names "
            + "are UTF-8: rename it (e.g. convmv -f latin1 -t utf8)"
    }

    var errorDescription: String? { description }

    /// The first argument after the program name that is not valid UTF-8, or nil.
    static func firstInvalidArgument() -> ArgumentEncodingError? {
        for position in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[position] else { continue }
            if String(validatingCString: argument) == nil {
                let length = strlen(argument)
                let bytes = argument.withMemoryRebound(to: UInt8.self, capacity: length) {
                    Array(UnsafeBufferPointer(start: $0, count: length))
                }
                return ArgumentEncodingError(position: position, bytes: bytes)
            }
        }
        return nil
    }

    /// The bytes as text: valid UTF-8 sequences as themselves, every other byte as `\xNN`.
    static func shown(_ bytes: [UInt8]) -> String {
        var out = ""
        var index = 0
        while index < bytes.count {
            // The UTF-8 character starting here (1 to 4 bytes), else one escaped byte.
            let decoded = (1...4).lazy.filter { index + $0 <= bytes.count }.compactMap { length in
                String(validating: bytes[index..<(index + length)], as: UTF8.self).map { ($0, length) }
            }.first
            if let (text, length) = decoded {
                out += PrintableText.escaped(text)
                index += length
            } else {
                out += String(format: "\\x%02x", bytes[index])
                index += 1
            }
        }
        return out
    }
}
