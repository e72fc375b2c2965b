import CFFTW3f

/// A real-input FFT of one size and its inverse, on FFTW single precision.
///
/// Spectra are in **split** form: `real[k]` and `imag[k]` for k = 0...size/2 (`binCount` values each), the
/// one-sided spectrum numpy's `rfft` returns, unnormalised. `inverse` is unnormalised too (FFTW convention): a
/// forward then inverse transform multiplies by `size`. Plans are made once, at init, on SIMD-aligned buffers
/// owned here; the transforms copy the caller's buffers in and out (tens of ns for 512 points) so callers may
/// pass any memory, and nothing is allocated per call.
///
/// Plans use `FFTW_ESTIMATE`, not `FFTW_MEASURE`: measured plans differ from run to run, and so do their
/// roundings (about 1e-3 dB on the same file), while features must be bit-for-bit reproducible. The estimated
/// plan already runs the default features at thousands of times real time (`hearalert-bench features`).
///
/// Not for concurrent use; it may be handed from one thread to another.
public final class RealFFT: @unchecked Sendable {
    /// Transform length in samples.
    public let size: Int
    /// Number of one-sided spectrum bins, `size / 2 + 1`.
    public let binCount: Int

    private let timeBuffer: UnsafeMutablePointer<Float>
    private let realBuffer: UnsafeMutablePointer<Float>
    private let imagBuffer: UnsafeMutablePointer<Float>
    private let forwardPlan: fftwf_plan
    private let inversePlan: fftwf_plan

    /// `size` must be even and at least 2; any even size works, powers of two and small primes are fastest.
    public init(size: Int) {
        precondition(size >= 2 && size.isMultiple(of: 2), "RealFFT size must be even and at least 2, got \(size)")
        self.size = size
        self.binCount = size / 2 + 1
        let time = Self.alignedFloats(size)
        let real = Self.alignedFloats(size / 2 + 1)
        let imag = Self.alignedFloats(size / 2 + 1)
        var dimension = fftwf_iodim(n: Int32(size), is: 1, os: 1)
        let flags = UInt32(FFTW_ESTIMATE)  // deterministic; see the type's comment
        guard
            let forward = FFTWPlanner.plan({
                fftwf_plan_guru_split_dft_r2c(1, &dimension, 0, nil, time, real, imag, flags)
            }),
            let inverse = FFTWPlanner.plan({
                fftwf_plan_guru_split_dft_c2r(1, &dimension, 0, nil, real, imag, time, flags)
            })
        else {
            preconditionFailure("FFTW could not plan a real transform of size \(size)")
        }
        timeBuffer = time
        realBuffer = real
        imagBuffer = imag
        forwardPlan = forward
        inversePlan = inverse
    }

    deinit {
        FFTWPlanner.destroy(forwardPlan)
        FFTWPlanner.destroy(inversePlan)
        fftwf_free(timeBuffer)
        fftwf_free(realBuffer)
        fftwf_free(imagBuffer)
    }

    /// One-sided spectrum of `input` (`size` samples) into `real` and `imag` (`binCount` values each).
    public func forward(
        _ input: UnsafeBufferPointer<Float>, real: UnsafeMutableBufferPointer<Float>,
        imag: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(input.count == size && real.count >= binCount && imag.count >= binCount)
        timeBuffer.update(from: input.baseAddress!, count: size)
        fftwf_execute(forwardPlan)
        real.baseAddress!.update(from: realBuffer, count: binCount)
        imag.baseAddress!.update(from: imagBuffer, count: binCount)
    }

    /// Real signal (`size` samples, scaled by `size`) from a one-sided spectrum; the inputs are left intact.
    public func inverse(
        real: UnsafeBufferPointer<Float>, imag: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(real.count >= binCount && imag.count >= binCount && output.count == size)
        realBuffer.update(from: real.baseAddress!, count: binCount)
        imagBuffer.update(from: imag.baseAddress!, count: binCount)
        fftwf_execute(inversePlan)
        output.baseAddress!.update(from: timeBuffer, count: size)
    }

    private static func alignedFloats(_ count: Int) -> UnsafeMutablePointer<Float> {
        guard let raw = fftwf_alloc_real(count) else { preconditionFailure("out of memory for FFT buffers") }
        raw.initialize(repeating: 0, count: count)
        return raw
    }
}
