import Foundation

/// The one definition of "the features a model sees".
///
/// A model file carries its `FeatureSpec` as JSON (see `CSources/alertnet/FORMAT.md`), the Swift host computes
/// exactly these features, and `tools/features.py` computes the same for training. Keeping every parameter here,
/// and none hard-coded elsewhere, is what prevents the train/deploy mismatches (window type, log base, a dropped
/// bin) that broke earlier hearing-aid detectors.
public struct FeatureSpec: Codable, Sendable, Equatable {
    /// Analysis window shapes; periodic forms, as used for STFT analysis.
    public enum Window: String, Codable, Sendable {
        case hann
        case sqrtHann = "sqrt_hann"
        case hamming
    }

    /// Whether the network sees the one-sided power spectrum or its Mel-band summary.
    public enum Kind: String, Codable, Sendable {
        case logPower = "log_power"
        case logMel = "log_mel"
    }

    /// Mel frequency scale: HTK's formula, or Slaney's (linear below 1 kHz), as in librosa.
    public enum MelScale: String, Codable, Sendable {
        case htk
        case slaney
    }

    /// Mel filter normalisation: Slaney's area normalisation, or peak 1.
    public enum MelNorm: String, Codable, Sendable {
        case slaney
        case none
    }

    /// Per-bin standardisation learned at training time, applied last as `(x - mean) / std`.
    public struct Normalization: Codable, Sendable, Equatable {
        public var mean: [Float]
        public var std: [Float]

        public init(mean: [Float], std: [Float]) {
            self.mean = mean
            self.std = std
        }
    }

    public var sampleRate: Int
    public var nFFT: Int
    public var winLength: Int
    public var hopLength: Int
    public var window: Window
    public var kind: Kind
    public var nMels: Int
    public var fmin: Double
    public var fmax: Double
    public var melScale: MelScale
    public var melNorm: MelNorm
    public var power: Double
    public var logBase: Double
    public var logMultiplier: Double
    public var logFloor: Double
    public var normalization: Normalization?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case sampleRate = "sample_rate"
        case nFFT = "n_fft"
        case winLength = "win_length"
        case hopLength = "hop_length"
        case window, kind
        case nMels = "n_mels"
        case fmin, fmax
        case melScale = "mel_scale"
        case melNorm = "mel_norm"
        case power
        case logBase = "log_base"
        case logMultiplier = "log_multiplier"
        case logFloor = "log_floor"
        case normalization
    }

    public init(
        sampleRate: Int = 16_000, nFFT: Int = 512, winLength: Int = 400, hopLength: Int = 160,
        window: Window = .hann, kind: Kind = .logMel, nMels: Int = 64, fmin: Double = 50, fmax: Double = 8_000,
        melScale: MelScale = .slaney, melNorm: MelNorm = .slaney, power: Double = 2, logBase: Double = 10,
        logMultiplier: Double = 10, logFloor: Double = 1e-10, normalization: Normalization? = nil
    ) {
        self.sampleRate = sampleRate
        self.nFFT = nFFT
        self.winLength = winLength
        self.hopLength = hopLength
        self.window = window
        self.kind = kind
        self.nMels = nMels
        self.fmin = fmin
        self.fmax = fmax
        self.melScale = melScale
        self.melNorm = melNorm
        self.power = power
        self.logBase = logBase
        self.logMultiplier = logMultiplier
        self.logFloor = logFloor
        self.normalization = normalization
    }

    /// Width of one feature frame: Mel bands, or the one-sided spectrum's bins.
    public var binCount: Int { kind == .logMel ? nMels : nFFT / 2 + 1 }
}
