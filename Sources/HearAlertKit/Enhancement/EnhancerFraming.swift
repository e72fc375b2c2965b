import Foundation

/// The STFT framing of each enhancer mode: FFT size, hop and the analysis/synthesis window pair.
///
/// Sizes are set in milliseconds and converted at the stream's sample rate, so the delay of a mode is the same
/// at 16 kHz and at 48 kHz.
struct EnhancerFraming: Equatable {
    let fftSize: Int
    let hopLength: Int
    let analysisWindow: [Float]
    let synthesisWindow: [Float]
    /// Hops between two updates of the noise estimate. The lowest-latency mode's 16 ms frames every 2 ms overlap
    /// by seven eighths: the noise estimate, which moves over seconds, learns nothing more from every one of them
    /// than from every other (its time constants are converted to the update step), and updating it every
    /// other hop keeps that mode's CPU per second close to the low-latency mode's.
    let noiseUpdateHops: Int

    init(mode: EnhancerConfiguration.Mode, sampleRate: Int) throws(EnhancerError) {
        guard (8000...96000).contains(sampleRate) else { throw .unsupportedSampleRate(sampleRate) }
        let samplesPerMillisecond = Double(sampleRate) / 1000
        func samples(_ milliseconds: Double) -> Int { Int((milliseconds * samplesPerMillisecond).rounded()) }
        switch mode {
        case .lowLatency, .lowestLatency:
            // 16 ms analysis frame, 4 ms hop, 8 ms synthesis window: delay = 8 − 4 = 4 ms; or a 2 ms hop and
            // a 4 ms synthesis window: delay 2 ms.
            let frame = samples(16)
            let delay = samples(mode == .lowLatency ? 4 : 2)
            hopLength = delay
            noiseUpdateHops = mode == .lowLatency ? 1 : 2
            fftSize = Self.evenFFTSize(atLeast: frame)
            (analysisWindow, synthesisWindow) = Self.lowDelayWindows(frameLength: frame, delay: delay)
        case .higherQuality:
            // 32 ms square-root-Hann analysis and synthesis, 8 ms hop: delay = 32 − 8 = 24 ms.
            let frame = samples(32)
            hopLength = frame / 4
            noiseUpdateHops = 1
            fftSize = Self.evenFFTSize(atLeast: frame)
            let window = WindowFunction.make(.sqrtHann, length: frame)
            analysisWindow = window
            synthesisWindow = window
        }
    }

    /// Samples from an input sample to its reconstruction: the synthesis window minus one hop (see
    /// `StreamingSTFT.latencySamples`).
    var latencySamples: Int { synthesisWindow.count - hopLength }

    private static func evenFFTSize(atLeast length: Int) -> Int {
        var size = 1
        while size < length { size *= 2 }
        return max(size, 2)
    }

    /// Mauler & Martin's asymmetric pair ("A low delay, variable resolution, perfect reconstruction spectral
    /// analysis-synthesis system for speech enhancement", EUSIPCO 2007), for frame length K and delay M:
    /// the analysis window rises as √Hann over K − M samples and falls as √Hann over M, so it sees a long
    /// stretch of signal (frequency resolution of a K-sample frame); the synthesis window covers only the last
    /// 2M samples and is chosen so that analysis × synthesis is a Hann window of 2M samples, which overlap-adds
    /// to a constant at hop M. The output then lags the input by only M samples.
    static func lowDelayWindows(frameLength: Int, delay: Int) -> (analysis: [Float], synthesis: [Float]) {
        precondition(frameLength >= 2 * delay && delay >= 1)
        let rising = WindowFunction.make(.sqrtHann, length: 2 * (frameLength - delay)).prefix(frameLength - delay)
        let falling = WindowFunction.make(.sqrtHann, length: 2 * delay).suffix(delay)
        let analysis = Array(rising) + Array(falling)
        let product = WindowFunction.make(.hann, length: 2 * delay)
        let synthesis = (0..<(2 * delay)).map { index -> Float in
            let analysisValue = analysis[frameLength - 2 * delay + index]
            return analysisValue > 0 ? product[index] / analysisValue : 0
        }
        return (analysis, synthesis)
    }
}
