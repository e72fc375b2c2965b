import Foundation

/// Weighted overlap-add (WOLA) analysis and synthesis, one hop at a time, for the speech enhancer.
///
/// Each hop: `analyze` takes exactly `hopLength` new samples, windows the newest `fftSize` samples with the
/// analysis window and exposes their one-sided spectrum in `real`/`imag` (split form, `fftSize/2 + 1` bins) for
/// the caller to modify in place; `synthesize` then inverse-transforms it, applies the synthesis window and
/// overlap-adds, returning `hopLength` finished output samples.
///
/// Both windows are **right-aligned** in the frame (their last sample on the newest input sample, zeros before),
/// so a window shorter than `fftSize` is zero-padded on the old side and short asymmetric synthesis windows give
/// low latency (Mauler & Martin, "A low delay, variable resolution, perfect reconstruction spectral analysis-
/// synthesis system for speech enhancement", EUSIPCO 2007). The synthesis window is divided, position by
/// position, by the sum of analysis×synthesis over all frames overlapping that position, so the unmodified
/// spectrum reconstructs the input exactly (up to float rounding) for any window pair without gaps; pass the
/// pair your design calls for and any constant gain is removed.
///
/// Nothing is allocated after init. Not for concurrent use; it may be handed from one thread to another.
public final class StreamingSTFT: @unchecked Sendable {
    /// Samples per frame (the FFT size).
    public let fftSize: Int
    /// Samples between frame starts.
    public let hopLength: Int
    /// Output sample k is input sample k - `latencySamples` (for an unmodified spectrum): the synthesis window's
    /// length minus one hop, because a sample is finished only when the last frame covering it has been added.
    /// With full-length windows that is `fftSize - hopLength`; with a synthesis window of two hops, one hop.
    public let latencySamples: Int

    private let fft: RealFFT
    private let analysisWindow: UnsafeMutableBufferPointer<Float>   // fftSize, right-aligned, zero-padded
    private let synthesisWindow: UnsafeMutableBufferPointer<Float>  // fftSize, normalised, includes 1/fftSize
    private let history: UnsafeMutableBufferPointer<Float>          // newest fftSize input samples
    private let frame: UnsafeMutableBufferPointer<Float>            // windowed frame / inverse transform
    private let accumulator: UnsafeMutableBufferPointer<Float>      // overlap-add sums, aligned with history
    private let synthesisStart: Int                                 // first non-zero synthesis position

    /// The spectrum of the newest frame, real parts; valid after `analyze`, modifiable until `synthesize`.
    public let real: UnsafeMutableBufferPointer<Float>
    /// The spectrum of the newest frame, imaginary parts.
    public let imag: UnsafeMutableBufferPointer<Float>

    /// - Parameters:
    ///   - fftSize: transform length, even; windows shorter than it are zero-padded.
    ///   - hopLength: samples per `analyze`/`synthesize` call, 1...`synthesisWindow.count`.
    ///   - analysisWindow: at most `fftSize` samples, any shape (asymmetric allowed).
    ///   - synthesisWindow: at most `fftSize` samples, any shape; it sets the latency.
    public init(fftSize: Int, hopLength: Int, analysisWindow: [Float], synthesisWindow: [Float]) throws {
        guard fftSize >= 2, fftSize.isMultiple(of: 2) else {
            throw STFTError.invalidSize("FFT size must be even and at least 2, got \(fftSize)")
        }
        guard (1...fftSize).contains(analysisWindow.count), (1...fftSize).contains(synthesisWindow.count) else {
            throw STFTError.invalidSize(
                "window lengths must be 1...\(fftSize), got \(analysisWindow.count) and \(synthesisWindow.count)")
        }
        guard (1...synthesisWindow.count).contains(hopLength) else {
            throw STFTError.invalidSize("hop must be 1...\(synthesisWindow.count) (the synthesis window), got \(hopLength)")
        }
        guard (analysisWindow + synthesisWindow).allSatisfy(\.isFinite) else {
            throw STFTError.invalidSize("windows must be finite numbers")
        }
        let padded = { (window: [Float]) -> [Double] in
            Array(repeating: 0, count: fftSize - window.count) + window.map(Double.init)
        }
        let analysis = padded(analysisWindow)
        var synthesis = padded(synthesisWindow)
        // Sum of analysis × synthesis over every frame position that lands on the same offset within a hop.
        var overlap = [Double](repeating: 0, count: hopLength)
        for position in 0..<fftSize { overlap[position % hopLength] += analysis[position] * synthesis[position] }
        if let gap = overlap.firstIndex(where: { abs($0) < 1e-12 }) { throw STFTError.windowsLeaveGap(position: gap) }
        for position in 0..<fftSize { synthesis[position] /= overlap[position % hopLength] * Double(fftSize) }

        self.fftSize = fftSize
        self.hopLength = hopLength
        self.latencySamples = synthesisWindow.count - hopLength
        self.synthesisStart = fftSize - synthesisWindow.count
        fft = RealFFT(size: fftSize)
        self.analysisWindow = .allocate(capacity: fftSize)
        _ = self.analysisWindow.initialize(from: analysis.map(Float.init))
        self.synthesisWindow = .allocate(capacity: fftSize)
        _ = self.synthesisWindow.initialize(from: synthesis.map(Float.init))
        history = .allocate(capacity: fftSize)
        history.initialize(repeating: 0)
        frame = .allocate(capacity: fftSize)
        frame.initialize(repeating: 0)
        accumulator = .allocate(capacity: fftSize)
        accumulator.initialize(repeating: 0)
        real = .allocate(capacity: fft.binCount)
        real.initialize(repeating: 0)
        imag = .allocate(capacity: fft.binCount)
        imag.initialize(repeating: 0)
    }

    deinit {
        for buffer in [analysisWindow, synthesisWindow, history, frame, accumulator, real, imag] {
            buffer.deallocate()
        }
    }

    /// Takes exactly `hopLength` new samples and leaves the newest frame's spectrum in `real`/`imag`.
    public func analyze(_ hop: UnsafeBufferPointer<Float>) {
        precondition(hop.count == hopLength, "analyze takes exactly hopLength (\(hopLength)) samples, got \(hop.count)")
        let base = history.baseAddress!
        let kept = fftSize - hopLength
        base.update(from: base + hopLength, count: kept)
        (base + kept).update(from: hop.baseAddress!, count: hopLength)
        for index in 0..<fftSize { frame[index] = history[index] * analysisWindow[index] }
        fft.forward(UnsafeBufferPointer(frame), real: real, imag: imag)
    }

    /// Writes `hopLength` finished samples of the reconstruction of the (possibly modified) spectrum.
    public func synthesize(into output: UnsafeMutableBufferPointer<Float>) {
        precondition(output.count == hopLength, "synthesize writes exactly hopLength (\(hopLength)) samples")
        fft.inverse(real: UnsafeBufferPointer(real), imag: UnsafeBufferPointer(imag), into: frame)
        for index in synthesisStart..<fftSize { accumulator[index] += frame[index] * synthesisWindow[index] }
        let base = accumulator.baseAddress!
        output.baseAddress!.update(from: base + synthesisStart, count: hopLength)
        base.update(from: base + hopLength, count: fftSize - hopLength)
        (base + fftSize - hopLength).update(repeating: 0, count: hopLength)
    }

    /// Clears the signal history, as if the stream started again.
    public func reset() {
        history.update(repeating: 0)
        accumulator.update(repeating: 0)
    }
}
