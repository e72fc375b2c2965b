import Foundation
import Testing
@testable import HearAlertKit

/// The ring that carries audio between the ALSA threads and the processing thread.
@Suite struct SPSCRingBufferTests {
    @Test func wrapsAroundAndReportsShortCounts() {
        let ring = SPSCRingBuffer(minimumCapacity: 5)
        #expect(ring.capacity == 8)
        let first: [Float] = [1, 2, 3, 4, 5, 6]
        #expect(first.withUnsafeBufferPointer { ring.write($0) } == 6)
        var out = [Float](repeating: 0, count: 4)
        #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 4)
        #expect(out == [1, 2, 3, 4])
        let second: [Float] = [7, 8, 9, 10, 11, 12, 13]
        // 2 samples are still queued, so only 6 of 7 fit; the write wraps past the end of storage.
        #expect(second.withUnsafeBufferPointer { ring.write($0) } == 6)
        #expect(ring.availableToWrite == 0)
        var rest = [Float](repeating: 0, count: 10)
        #expect(rest.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 8)
        #expect(Array(rest[0..<8]) == [5, 6, 7, 8, 9, 10, 11, 12])
        #expect(ring.availableToRead == 0)
    }

    @Test func carriesAStreamBetweenTwoThreadsInOrder() async {
        let ring = SPSCRingBuffer(minimumCapacity: 256)
        let total = 500_000
        let producer = Thread {
            var block = [Float](repeating: 0, count: 97)
            var next = 0
            while next < total {
                let count = min(block.count, total - next)
                for index in 0..<count { block[index] = Float(next + index) }
                var sent = 0
                while sent < count {
                    sent += block.withUnsafeBufferPointer { ring.write(UnsafeBufferPointer(rebasing: $0[sent..<count])) }
                }
                next += count
            }
        }
        producer.start()
        var received = 0
        var inOrder = true
        var block = [Float](repeating: 0, count: 61)
        while received < total {
            let count = block.withUnsafeMutableBufferPointer { ring.read(into: $0) }
            for index in 0..<count where block[index] != Float(received + index) { inOrder = false }
            received += count
        }
        #expect(inOrder)
        #expect(received == total)
    }
}
