import Synchronization

/// A fixed-capacity ring of samples between exactly one writing thread and one reading thread.
///
/// The live path hands audio from the ALSA capture thread to the processing thread, and from the processing
/// thread to the playback thread, through these rings. Neither side ever takes a lock or allocates, so a slow
/// consumer can never stall the audio device: when the ring is full, `write` returns a short count and the
/// caller decides what to drop.
///
/// The indices count samples since creation and only grow; each is written by one side only and published with
/// release/acquire ordering, which is the whole synchronisation (Lamport's single-producer/single-consumer queue).
public final class SPSCRingBuffer: @unchecked Sendable {
    // @unchecked: `storage` is shared, but a slot is only written by the producer while it lies outside
    // [readIndex, writeIndex) and only read by the consumer while it lies inside; the atomics order the hand-over.
    private let storage: UnsafeMutablePointer<Float>
    private let mask: Int
    private let writeIndex = Atomic<Int>(0)
    private let readIndex = Atomic<Int>(0)

    /// Samples the ring can hold: `minimumCapacity` rounded up to a power of two, so wrapping is a mask.
    public let capacity: Int

    /// Allocates the whole ring now, so neither side ever allocates later.
    public init(minimumCapacity: Int) {
        precondition(minimumCapacity > 0, "a ring buffer needs room for at least one sample")
        var size = 1
        while size < minimumCapacity { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = .allocate(capacity: size)
        storage.initialize(repeating: 0, count: size)
    }

    deinit {
        storage.deallocate()
    }

    /// Samples the consumer can read now. Call from the consumer (from the producer it is a lower bound).
    public var availableToRead: Int {
        writeIndex.load(ordering: .acquiring) - readIndex.load(ordering: .relaxed)
    }

    /// Free space the producer can fill now. Call from the producer (from the consumer it is a lower bound).
    public var availableToWrite: Int {
        capacity - (writeIndex.load(ordering: .relaxed) - readIndex.load(ordering: .acquiring))
    }

    /// Producer only: samples written since the ring was made, i.e. the position the next written sample will
    /// have in the stream the consumer reads (a producer can mark where something new begins).
    public var samplesWritten: Int { writeIndex.load(ordering: .relaxed) }

    /// Consumer only: samples read since the ring was made, i.e. the stream position of the next sample to read.
    public var samplesRead: Int { readIndex.load(ordering: .relaxed) }

    /// Producer only: copies as many of `samples` as fit and returns that count (short when the ring is full).
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Float>) -> Int {
        let write = writeIndex.load(ordering: .relaxed)
        let read = readIndex.load(ordering: .acquiring)
        let count = min(samples.count, capacity - (write - read))
        guard count > 0, let source = samples.baseAddress else { return 0 }
        let start = write & mask
        let firstPart = min(count, capacity - start)
        (storage + start).update(from: source, count: firstPart)
        (storage).update(from: source + firstPart, count: count - firstPart)
        writeIndex.store(write + count, ordering: .releasing)
        return count
    }

    /// Consumer only: moves up to `destination.count` samples out, oldest first, and returns how many.
    @discardableResult
    public func read(into destination: UnsafeMutableBufferPointer<Float>) -> Int {
        let read = readIndex.load(ordering: .relaxed)
        let write = writeIndex.load(ordering: .acquiring)
        let count = min(destination.count, write - read)
        guard count > 0, let target = destination.baseAddress else { return 0 }
        let start = read & mask
        let firstPart = min(count, capacity - start)
        target.update(from: storage + start, count: firstPart)
        (target + firstPart).update(from: storage, count: count - firstPart)
        readIndex.store(read + count, ordering: .releasing)
        return count
    }
}
