import Foundation

extension FeatureExtractor {
    /// Streams a whole file through the extractor in constant memory, handing completed frames over in batches
    /// (row-major, `spec.binCount` values per row, valid only during the call) once per block of audio.
    /// The reader must deliver samples at `spec.sampleRate`. Returns the number of frames produced.
    @discardableResult
    public func process(
        _ reader: AudioFileReader, blockSize: Int = 16_384, onRows: (UnsafeBufferPointer<Float>) throws -> Void
    ) throws -> Int {
        precondition(reader.sampleRate == spec.sampleRate, "the reader must deliver samples at the spec's rate")
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockSize)
        defer { block.deallocate() }
        let maxRows = blockSize / spec.hopLength + 1
        let rows = UnsafeMutableBufferPointer<Float>.allocate(capacity: maxRows * spec.binCount)
        defer { rows.deallocate() }
        var total = 0
        while true {
            let count = try reader.read(into: block)
            if count == 0 { return total }
            var filled = 0
            process(UnsafeBufferPointer(rebasing: block[0..<count])) { frame in
                (rows.baseAddress! + filled).update(from: frame.baseAddress!, count: frame.count)
                filled += frame.count
            }
            if filled > 0 { try onRows(UnsafeBufferPointer(rebasing: rows[0..<filled])) }
            total += filled / spec.binCount
        }
    }
}
