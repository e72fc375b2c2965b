import Foundation

/// Triangular Mel filters over the one-sided spectrum, built exactly as `librosa.filters.mel` (0.10/0.11):
/// `n_mels + 2` points equally spaced on the Mel scale between `fmin` and `fmax`, each band a triangle between
/// its neighbours evaluated at the FFT bin frequencies, optionally area-normalised (Slaney: 2 / bandwidth in Hz).
/// Computed in double precision and rounded to float once, as librosa does. Stored sparsely (each band's first
/// non-zero bin and its weights) because a band touches only a few bins.
public struct MelFilterbank: Sendable {
    /// One band: `weights[i]` applies to spectrum bin `firstBin + i`.
    public struct Band: Sendable {
        /// The first spectrum bin the band touches.
        public let firstBin: Int
        /// The band's non-zero weights, from `firstBin` on.
        public let weights: [Float]
    }

    /// One entry per Mel band, lowest first.
    public let bands: [Band]
    /// Bins of the spectrum the filters apply to (`nFFT / 2 + 1`).
    public let binCount: Int

    /// Builds the filters for already validated parameters (see `FeatureSpec.validate()`).
    public init(sampleRate: Int, nFFT: Int, nMels: Int, fmin: Double, fmax: Double,
                scale: FeatureSpec.MelScale, norm: FeatureSpec.MelNorm) {
        let binCount = nFFT / 2 + 1
        // numpy.fft.rfftfreq's arithmetic, so bin frequencies round as librosa's do.
        let binStep = 1 / (Double(nFFT) * (1 / Double(sampleRate)))
        let binFrequencies = (0..<binCount).map { Double($0) * binStep }
        let lowMel = Self.mel(fromHertz: fmin, scale: scale)
        let highMel = Self.mel(fromHertz: fmax, scale: scale)
        let melStep = (highMel - lowMel) / Double(nMels + 1)
        let edges = (0..<(nMels + 2)).map { index -> Double in
            // numpy.linspace: index * step + start, with the last point exactly `stop`.
            let mel = index == nMels + 1 ? highMel : Double(index) * melStep + lowMel
            return Self.hertz(fromMel: mel, scale: scale)
        }
        bands = (0..<nMels).map { band in
            let lower = edges[band], centre = edges[band + 1], upper = edges[band + 2]
            let scaleFactor = norm == .slaney ? 2 / (upper - lower) : 1
            let weights = binFrequencies.map { frequency -> Double in
                let rising = -(lower - frequency) / (centre - lower)
                let falling = (upper - frequency) / (upper - centre)
                return max(0, min(rising, falling)) * scaleFactor
            }
            let first = weights.firstIndex { Float($0) != 0 } ?? 0
            let last = weights.lastIndex { Float($0) != 0 } ?? -1
            return Band(firstBin: first, weights: last < first ? [] : weights[first...last].map { Float($0) })
        }
        self.binCount = binCount
    }

    /// Builds the filterbank a `log_mel` spec describes.
    public init(spec: FeatureSpec) {
        self.init(sampleRate: spec.sampleRate, nFFT: spec.nFFT, nMels: spec.nMels, fmin: spec.fmin, fmax: spec.fmax,
                  scale: spec.melScale, norm: spec.melNorm)
    }

    /// The dense `[nMels][binCount]` matrix, for the tests that hold it against librosa's.
    package var dense: [[Float]] {
        bands.map { band in
            var row = [Float](repeating: 0, count: binCount)
            for (offset, weight) in band.weights.enumerated() { row[band.firstBin + offset] = weight }
            return row
        }
    }

    // Slaney's scale (Auditory Toolbox): linear, 200/3 Hz per Mel, below 1 kHz; logarithmic above, 27 Mels
    // per factor 6.4. HTK's: 2595·log10(1 + f/700).
    private static let slaneyHertzPerMel = 200.0 / 3
    private static let slaneyBreakHertz = 1_000.0
    private static let slaneyBreakMel = slaneyBreakHertz / slaneyHertzPerMel
    private static let slaneyLogStep = log(6.4) / 27

    static func mel(fromHertz hertz: Double, scale: FeatureSpec.MelScale) -> Double {
        switch scale {
        case .htk:
            return 2_595 * log10(1 + hertz / 700)
        case .slaney:
            return hertz >= slaneyBreakHertz
                ? slaneyBreakMel + log(hertz / slaneyBreakHertz) / slaneyLogStep : hertz / slaneyHertzPerMel
        }
    }

    static func hertz(fromMel mel: Double, scale: FeatureSpec.MelScale) -> Double {
        switch scale {
        case .htk:
            return 700 * (pow(10, mel / 2_595) - 1)
        case .slaney:
            return mel >= slaneyBreakMel
                ? slaneyBreakHertz * exp(slaneyLogStep * (mel - slaneyBreakMel)) : slaneyHertzPerMel * mel
        }
    }
}
