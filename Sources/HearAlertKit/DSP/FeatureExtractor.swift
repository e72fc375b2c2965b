import Foundation

/// Computes the features a `FeatureSpec` describes (CSources/alertnet/FORMAT.md), streaming: audio arrives in
/// blocks of any size and each completed frame is handed to the caller as soon as its last sample arrives.
///
/// Frame t covers input samples `[t·hop, t·hop + n_fft)` (no centring, no padding); the window of `win_length`
/// samples sits in the middle of the frame. Per frame: window → real FFT → `|X|^power` → optional Mel filterbank
/// → `log_multiplier · log_base(max(value, log_floor))` → optional `(x - mean) / std`. Arithmetic is float32;
/// the filterbank and window are computed in double precision and rounded once.
///
/// All buffers are allocated at init; `process` allocates nothing. Not for concurrent use; it may be handed
/// from one thread to another.
public final class FeatureExtractor: @unchecked Sendable {
    /// The features computed, exactly as the model file describes them.
    public let spec: FeatureSpec

    private let fft: RealFFT
    private let filterbank: MelFilterbank?
    private let window: UnsafeMutableBufferPointer<Float>
    private let windowOffset: Int
    private let pending: UnsafeMutableBufferPointer<Float>   // the frame being filled
    private let windowed: UnsafeMutableBufferPointer<Float>  // zero outside the window, forever
    private let real: UnsafeMutableBufferPointer<Float>
    private let imag: UnsafeMutableBufferPointer<Float>
    private let spectrum: UnsafeMutableBufferPointer<Float>
    private let output: UnsafeMutableBufferPointer<Float>
    private let mean: UnsafeMutableBufferPointer<Float>?
    private let std: UnsafeMutableBufferPointer<Float>?
    private let logScale: Float
    private let logFloor: Float
    private var filled = 0
    private var skip = 0   // samples to drop before the next frame when hop > n_fft

    /// Validates the spec (`FeatureSpecError`) and prepares the FFT plan, window and filterbank.
    public init(spec: FeatureSpec) throws {
        try spec.validate()
        self.spec = spec
        fft = RealFFT(size: spec.nFFT)
        filterbank = spec.kind == .logMel ? MelFilterbank(spec: spec) : nil
        window = Self.buffer(WindowFunction.make(spec.window, length: spec.winLength))
        windowOffset = (spec.nFFT - spec.winLength) / 2
        pending = Self.buffer(count: spec.nFFT)
        windowed = Self.buffer(count: spec.nFFT)
        real = Self.buffer(count: fft.binCount)
        imag = Self.buffer(count: fft.binCount)
        spectrum = Self.buffer(count: fft.binCount)
        output = Self.buffer(count: spec.binCount)
        mean = spec.normalization.map { Self.buffer($0.mean) }
        std = spec.normalization.map { Self.buffer($0.std) }
        logScale = Float(spec.logMultiplier / Foundation.log(spec.logBase))
        logFloor = Float(spec.logFloor)
    }

    deinit {
        for buffer in [window, pending, windowed, real, imag, spectrum, output] { buffer.deallocate() }
        mean?.deallocate()
        std?.deallocate()
    }

    /// Feeds samples (mono, at `spec.sampleRate`) and calls `onFrame` with each frame completed by them:
    /// `spec.binCount` values, valid only during the call. Allocates nothing.
    public func process(_ samples: UnsafeBufferPointer<Float>, onFrame: (UnsafeBufferPointer<Float>) -> Void) {
        guard let source = samples.baseAddress else { return }
        let frameLength = spec.nFFT
        var index = 0
        while index < samples.count {
            let remaining = samples.count - index
            if skip > 0 {
                let dropped = min(skip, remaining)
                skip -= dropped
                index += dropped
                continue
            }
            let taken = min(frameLength - filled, remaining)
            (pending.baseAddress! + filled).update(from: source + index, count: taken)
            filled += taken
            index += taken
            guard filled == frameLength else { continue }
            computeFrame()
            onFrame(UnsafeBufferPointer(output))
            if spec.hopLength < frameLength {
                let kept = frameLength - spec.hopLength
                pending.baseAddress!.update(from: pending.baseAddress! + spec.hopLength, count: kept)
                filled = kept
            } else {
                filled = 0
                skip = spec.hopLength - frameLength
            }
        }
    }

    /// Forgets buffered samples, so the next sample starts frame 0 of a new stream.
    public func reset() {
        filled = 0
        skip = 0
    }

    /// Number of whole frames in `sampleCount` samples: `1 + (n - n_fft) / hop`, or 0 if shorter than a frame.
    public static func frameCount(sampleCount: Int, spec: FeatureSpec) -> Int {
        sampleCount < spec.nFFT ? 0 : 1 + (sampleCount - spec.nFFT) / spec.hopLength
    }

    /// All frames of a whole signal, row-major `[frames][spec.binCount]`; for offline use and tests.
    public static func features(of samples: [Float], spec: FeatureSpec) throws -> [Float] {
        let extractor = try FeatureExtractor(spec: spec)
        var rows = [Float]()
        rows.reserveCapacity(frameCount(sampleCount: samples.count, spec: spec) * spec.binCount)
        samples.withUnsafeBufferPointer { buffer in
            extractor.process(buffer) { rows.append(contentsOf: $0) }
        }
        return rows
    }

    private func computeFrame() {
        for index in 0..<spec.winLength {
            windowed[windowOffset + index] = pending[windowOffset + index] * window[index]
        }
        fft.forward(UnsafeBufferPointer(windowed), real: real, imag: imag)
        let halfPower = Float(spec.power / 2)
        for bin in 0..<fft.binCount {
            let squared = real[bin] * real[bin] + imag[bin] * imag[bin]
            spectrum[bin] = halfPower == 1 ? squared : (halfPower == 0.5 ? squared.squareRoot() : pow(squared, halfPower))
        }
        if let filterbank {
            for (band, filter) in filterbank.bands.enumerated() {
                var sum: Float = 0
                for (offset, weight) in filter.weights.enumerated() { sum += weight * spectrum[filter.firstBin + offset] }
                output[band] = sum
            }
        } else {
            output.baseAddress!.update(from: spectrum.baseAddress!, count: fft.binCount)
        }
        for bin in 0..<output.count {
            // Clamped to the largest float so a full-scale overflow stays finite rather than +Inf.
            let value = min(max(output[bin], logFloor), .greatestFiniteMagnitude)
            output[bin] = logScale * Foundation.log(value)
        }
        if let mean, let std {
            for bin in 0..<output.count { output[bin] = (output[bin] - mean[bin]) / std[bin] }
        }
    }

    private static func buffer(count: Int) -> UnsafeMutableBufferPointer<Float> {
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: count)
        buffer.initialize(repeating: 0)
        return buffer
    }

    private static func buffer(_ values: [Float]) -> UnsafeMutableBufferPointer<Float> {
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: values.count)
        _ = buffer.initialize(from: values)
        return buffer
    }
}
