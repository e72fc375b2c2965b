import CSoxr
import Foundation

/// Streaming sample-rate conversion of one mono float channel with libsoxr at high quality (`SOXR_HQ`: 20-bit
/// precision, linear phase, passband to 91 % of Nyquist), so that audio at 44.1 or 48 kHz gives the model the
/// same 16 kHz signal as audio recorded at 16 kHz, to within the converter's -120 dB stop band.
///
/// Feed blocks with `process`, then call `flush` until it returns 0 at the end of a stream. Output lags input
/// by the filter delay (`delaySamples`); libsoxr keeps that tail and `flush` releases it, so no audio is lost.
/// Nothing is allocated after init. Not for concurrent use; it may be handed from one thread to another
/// (e.g. from the setup code to a live capture thread).
public final class Resampler: @unchecked Sendable {
    /// Samples per second fed to `process`.
    public let inputRate: Double
    /// Samples per second produced.
    public let outputRate: Double
    private let soxr: soxr_t

    /// Throws `ResamplerError` for a rate that is not a positive finite number or that libsoxr refuses.
    public init(inputRate: Double, outputRate: Double) throws {
        guard inputRate.isFinite, outputRate.isFinite, inputRate > 0, outputRate > 0 else {
            throw ResamplerError.invalidRate(input: inputRate, output: outputRate)
        }
        var ioSpec = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var qualitySpec = soxr_quality_spec(UInt(SOXR_HQ), 0)
        var error: soxr_error_t?
        let created = soxr_create(inputRate, outputRate, 1, &error, &ioSpec, &qualitySpec, nil)
        guard let created, error == nil else {
            if let created { soxr_delete(created) }
            throw ResamplerError.soxr(error.map { String(cString: $0) } ?? "could not create a resampler")
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        soxr = created
    }

    deinit { soxr_delete(soxr) }

    /// Output room that always suffices for `inputCount` input samples in one `process` call.
    public func maxOutputCount(forInputCount inputCount: Int) -> Int {
        Int((Double(inputCount) * outputRate / inputRate).rounded(.up)) + 16
    }

    /// Consumes all of `input` and writes the output samples that are ready; returns how many.
    /// `output` must hold at least `maxOutputCount(forInputCount: input.count)` samples.
    public func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) throws -> Int {
        precondition(output.count >= maxOutputCount(forInputCount: input.count), "resampler output buffer too small")
        guard let inputBase = input.baseAddress, !input.isEmpty else { return 0 }
        var consumed = 0
        var produced = 0
        while consumed < input.count {
            var used = 0
            var made = 0
            if let error = soxr_process(
                soxr, inputBase + consumed, input.count - consumed, &used,
                output.baseAddress! + produced, output.count - produced, &made)
            {
                throw ResamplerError.soxr(String(cString: error))
            }
            consumed += used
            produced += made
            if used == 0 && made == 0 {
                throw ResamplerError.soxr("made no progress with \(input.count - consumed) samples left")
            }
        }
        return produced
    }

    /// At the end of a stream: writes held-back samples into `output`; call until it returns 0.
    public func flush(into output: UnsafeMutableBufferPointer<Float>) throws -> Int {
        guard let outputBase = output.baseAddress, !output.isEmpty else { return 0 }
        var made = 0
        if let error = soxr_process(soxr, nil, 0, nil, outputBase, output.count, &made) {
            throw ResamplerError.soxr(String(cString: error))
        }
        return made
    }

    /// Current delay of output behind input, in output samples (libsoxr's `soxr_delay`).
    public var delaySamples: Double { soxr_delay(soxr) }

    /// Forgets the stream so far, ready for a new one at the same rates.
    public func reset() throws {
        if let error = soxr_clear(soxr) { throw ResamplerError.soxr(String(cString: error)) }
    }
}
