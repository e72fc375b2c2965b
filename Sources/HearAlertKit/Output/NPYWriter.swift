import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Why a .npy file could not be written; one line naming the file.
public enum NPYError: Error, Equatable, CustomStringConvertible, LocalizedError {
    case cannotWrite(path: String, reason: String)
    case shapeMismatch(path: String, reason: String)

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): return "\(path): cannot write: \(reason)"
        case .shapeMismatch(let path, let reason): return "\(path): \(reason)"
        }
    }

    public var errorDescription: String? { description }
}

/// Writes a float32 matrix `[rows, columns]` as a NumPy .npy file (format 1.0, little-endian `<f4`, C order),
/// so a researcher can `numpy.load` exactly what the model sees.
///
/// Rows stream to disk as they come (features of a ten-hour recording need not fit in memory); the header is
/// written first with room for any row count and rewritten with the final count on `close()`. The file is an
/// `AtomicOutputFile`: only `close()` puts it in place, so a failed or interrupted run leaves the previous file
/// of that name as it was, never an array that looks like a short recording.
public final class NPYWriter {
    /// The file written, as given.
    public let path: String
    /// Values per row (feature bins).
    public let columns: Int
    /// Rows appended so far.
    public private(set) var rows = 0
    private let output: AtomicOutputFile
    private var stream: UnsafeMutablePointer<FILE>?

    /// Header size: a multiple of 64 as the format asks, with room for a 20-digit row count.
    private static let headerSize = 128

    /// Starts the file and writes a provisional header, refusing a `path` that would overwrite one of `inputs`;
    /// throws `OutputFileError` when the path cannot be written, `NPYError` otherwise.
    public init(path: String, columns: Int, protecting inputs: [CommandInput] = []) throws {
        guard columns >= 1 else {
            throw NPYError.shapeMismatch(path: path, reason: "a matrix needs at least one column, got \(columns)")
        }
        self.path = path
        self.columns = columns
        output = try AtomicOutputFile(path: path, protecting: inputs)
        // A stream of its own over a duplicate, so that fclose leaves the output's descriptor to commit.
        let duplicate = dup(output.descriptor)
        guard duplicate >= 0, let opened = fdopen(duplicate, "wb") else {
            let reason = String(cString: strerror(errno))
            if duplicate >= 0 { Glibc.close(duplicate) }
            output.discard()
            throw NPYError.cannotWrite(path: path, reason: reason)
        }
        stream = opened
        do {
            try writeHeader(to: opened)
        } catch {
            discard()
            throw error
        }
    }

    /// Released without `close()`: nothing is put in place.
    deinit {
        discard()
    }

    /// Appends whole rows: `values.count` must be a multiple of `columns`.
    public func append(_ values: UnsafeBufferPointer<Float>) throws {
        guard let stream else { throw NPYError.cannotWrite(path: path, reason: "already closed") }
        guard values.count.isMultiple(of: columns) else {
            throw NPYError.shapeMismatch(path: path, reason: "\(values.count) values are not whole rows of \(columns)")
        }
        guard let base = values.baseAddress, !values.isEmpty else { return }
        // .npy stores little-endian; every platform Swift on Linux supports is little-endian, checked here.
        precondition(1.littleEndian == 1, "NPYWriter assumes a little-endian host")
        if fwrite(base, MemoryLayout<Float>.size, values.count, stream) != values.count {
            throw NPYError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        rows += values.count / columns
    }

    /// Rewrites the header with the final row count, closes and puts the file in place; later calls do nothing.
    /// On failure nothing is put in place.
    public func close() throws {
        guard let stream else { return }
        self.stream = nil
        do {
            try writeHeader(to: stream)
        } catch {
            fclose(stream)
            output.discard()
            throw error
        }
        if fclose(stream) != 0 {
            let reason = String(cString: strerror(errno))
            output.discard()
            throw NPYError.cannotWrite(path: path, reason: reason)
        }
        try output.commit()
    }

    /// Abandons the file: the previous file at `path`, if any, stays as it was.
    public func discard() {
        if let stream { fclose(stream) }
        stream = nil
        output.discard()
    }

    /// Writes a whole matrix in one call.
    public static func write(_ values: [Float], columns: Int, to path: String) throws {
        let writer = try NPYWriter(path: path, columns: columns)
        try values.withUnsafeBufferPointer { try writer.append($0) }
        try writer.close()
    }

    private func writeHeader(to stream: UnsafeMutablePointer<FILE>) throws {
        let dictionary = "{'descr': '<f4', 'fortran_order': False, 'shape': (\(rows), \(columns)), }"
        let preambleSize = 10  // magic (6) + version (2) + header length (2)
        let padded = dictionary.padding(toLength: Self.headerSize - preambleSize - 1, withPad: " ", startingAt: 0) + "\n"
        let headerLength = UInt16(padded.utf8.count)
        var bytes: [UInt8] = [0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(headerLength & 0xFF), UInt8(headerLength >> 8)]
        bytes += Array(padded.utf8)
        let position = ftell(stream)
        guard fseek(stream, 0, SEEK_SET) == 0, fwrite(bytes, 1, bytes.count, stream) == bytes.count else {
            throw NPYError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        if position > Self.headerSize, fseek(stream, position, SEEK_SET) != 0 {
            throw NPYError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
    }
}
