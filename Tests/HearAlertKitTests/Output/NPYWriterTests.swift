import Foundation
import Testing
@testable import HearAlertKit

/// numpy must load what NPYWriter writes; the header parse here follows the .npy format spec, and
/// tools/tests/test_features.py loads `hearalert features` output with numpy itself.
@Suite struct NPYWriterTests {
    @Test func streamsRowsAndRewritesTheShape() throws {
        let scratch = try ScratchFolder()
        let path = scratch.path("m.npy")
        let writer = try NPYWriter(path: path, columns: 3)
        try [Float](arrayLiteral: 1, 2, 3, 4, 5, 6).withUnsafeBufferPointer { try writer.append($0) }
        try [Float](arrayLiteral: -1, 0.5, .greatestFiniteMagnitude).withUnsafeBufferPointer { try writer.append($0) }
        #expect(throws: NPYError.self) { try [Float](arrayLiteral: 1, 2).withUnsafeBufferPointer { try writer.append($0) } }
        try writer.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.count == 128 + 9 * 4, "header padded to 128 bytes, a multiple of 64")
        #expect(bytes[127] == UInt8(ascii: "\n"))
        let matrix = try NPYMatrix(contentsOf: URL(fileURLWithPath: path))
        #expect(matrix.rows == 3 && matrix.columns == 3)
        #expect(matrix.values == [1, 2, 3, 4, 5, 6, -1, 0.5, .greatestFiniteMagnitude])
    }

    @Test func emptyMatrixAndBadPath() throws {
        let scratch = try ScratchFolder()
        try NPYWriter.write([], columns: 64, to: scratch.path("e.npy"))
        let empty = try NPYMatrix(contentsOf: URL(fileURLWithPath: scratch.path("e.npy")))
        #expect(empty.rows == 0 && empty.columns == 64)
        #expect(throws: OutputFileError.self) { try NPYWriter(path: scratch.path("missing/dir/x.npy"), columns: 1) }
    }
}
