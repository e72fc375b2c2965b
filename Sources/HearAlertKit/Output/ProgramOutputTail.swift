import Foundation

/// The end of what a helper program printed (its stdout and stderr together): the last `limit` bytes, and how
/// many it printed in all. A program that prints without end (`exec yes`) costs a bounded buffer, and its report
/// stays a few kilobytes, instead of flooding our standard error and the journal behind it.
struct ProgramOutputTail {
    /// Bytes kept per run, by default.
    static let defaultLimit = 4_096

    let limit: Int
    /// Bytes the program printed, kept or not.
    private(set) var total = 0
    private var bytes: [UInt8] = []

    init(limit: Int = Self.defaultLimit) {
        self.limit = limit
    }

    mutating func append(_ chunk: UnsafeRawBufferPointer) {
        total += chunk.count
        bytes.append(contentsOf: chunk.suffix(limit))
        // Trimmed in batches, so that keeping the tail costs O(1) per byte.
        if bytes.count > 2 * limit { bytes.removeFirst(bytes.count - limit) }
    }

    /// Reads what `descriptor` (non-blocking) holds now, at most `maximum` bytes: a program that writes faster
    /// than that waits on its full pipe instead of keeping this thread busy.
    mutating func read(from descriptor: Int32, atMost maximum: Int) {
        var buffer = [UInt8](repeating: 0, count: min(maximum, 65_536))
        var taken = 0
        while taken < maximum {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            buffer.withUnsafeBytes { append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            taken += count
        }
    }

    /// The kept output as text (lines end without a final newline), nil when the program printed nothing but
    /// white space. A UTF-8 character cut in two by the limit is dropped whole.
    var text: String? {
        var kept = bytes.suffix(limit)
        if total > kept.count { kept = kept.drop { $0 & 0xC0 == 0x80 } }
        let text = String(decoding: kept, as: UTF8.self)
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : String(text.reversed().drop { $0.isNewline }.reversed())
    }

    /// How a report introduces the text: "its output" or "its output (last 4096 of 10009 bytes)".
    var heading: String {
        total > limit ? "its output (last \(limit) of \(total) bytes)" : "its output"
    }
}
