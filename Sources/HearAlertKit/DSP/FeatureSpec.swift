import Foundation

/// The one definition of "the features a model sees".
///
/// A model file carries its `FeatureSpec` as JSON (see `CSources/alertnet/FORMAT.md`), the Swift host computes
/// exactly these features, and `tools/features.py` computes the same for training. Keeping every parameter here,
/// and none hard-coded elsewhere, is what prevents the train/deploy mismatches (window type, log base, a dropped
/// bin) that broke earlier hearing-aid detectors.
public struct FeatureSpec: Codable, Sendable, Equatable {
    /// Analysis window shapes; periodic forms, as used for STFT analysis.
    public enum Window: String, Codable, Sendable, CaseIterable {
        case hann
        case sqrtHann = "sqrt_hann"
        case hamming
    }

    /// Whether the network sees the one-sided power spectrum or its Mel-band summary.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case logPower = "log_power"
        case logMel = "log_mel"
    }

    /// Mel frequency scale: HTK's formula, or Slaney's (linear below 1 kHz), as in librosa.
    public enum MelScale: String, Codable, Sendable, CaseIterable {
        case htk
        case slaney
    }

    /// Mel filter normalisation: Slaney's area normalisation, or peak 1.
    public enum MelNorm: String, Codable, Sendable, CaseIterable {
        case slaney
        case none
    }

    /// Per-bin standardisation learned at training time, applied last as `(x - mean) / std`.
    public struct Normalization: Codable, Sendable, Equatable {
        /// Training-set mean per bin (`binCount` values).
        public var mean: [Float]
        /// Training-set standard deviation per bin (`binCount` values, all positive).
        public var std: [Float]

        /// Lengths and positivity are checked by `FeatureSpec.validate()`, against the spec they belong to.
        public init(mean: [Float], std: [Float]) {
            self.mean = mean
            self.std = std
        }
    }

    /// Audio samples per second the features are computed at (`sample_rate`); input is resampled to it.
    public var sampleRate: Int
    /// FFT size (`n_fft`): a frame spans this many samples, and the spectrum has `nFFT / 2 + 1` bins.
    public var nFFT: Int
    /// Window length (`win_length`, ≤ `nFFT`), centred in the frame and zero-padded to `nFFT` as librosa does.
    public var winLength: Int
    /// Samples between frame starts (`hop_length`): the feature frame rate is `sampleRate / hopLength`.
    public var hopLength: Int
    /// Analysis window shape.
    public var window: Window
    /// Log-Mel bands or the log-power spectrum.
    public var kind: Kind
    /// Mel bands (`n_mels`); used only for `.logMel`.
    public var nMels: Int
    /// Lowest Mel band edge in Hz; used only for `.logMel`.
    public var fmin: Double
    /// Highest Mel band edge in Hz (≤ `sampleRate / 2`); used only for `.logMel`.
    public var fmax: Double
    /// Mel formula (`mel_scale`); used only for `.logMel`.
    public var melScale: MelScale
    /// Mel filter normalisation (`mel_norm`); used only for `.logMel`.
    public var melNorm: MelNorm
    /// Exponent applied to the magnitude spectrum: 2 for power, 1 for magnitude.
    public var power: Double
    /// Base of the logarithm (`log_base`): 10 with multiplier 10 gives decibels.
    public var logBase: Double
    /// Factor on the logarithm (`log_multiplier`).
    public var logMultiplier: Double
    /// Values are clamped to at least this before the log (`log_floor`), so silence gives a finite floor.
    public var logFloor: Double
    /// Per-bin standardisation applied last; nil for none.
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

    /// The defaults are the default model's features: 16 kHz, 32 ms periodic Hann frames every 16 ms, 64 Slaney
    /// Mel bands from 50 Hz to 8 kHz, power in dB with a -100 dB floor, no normalisation.
    public init(
        sampleRate: Int = 16_000, nFFT: Int = 512, winLength: Int = 512, hopLength: Int = 256,
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

// MARK: - Strict JSON form

// Decoding lives in this file so that it replaces the synthesised conformance rather than redeclaring it.
extension FeatureSpec {
    /// Keys whose values must be JSON integers (`512`, never `512.0`), as the C core and tools/features.py demand.
    static let integerKeys: [CodingKeys] = [.sampleRate, .nFFT, .winLength, .hopLength, .nMels]

    /// Decodes strictly and validates: an unknown or missing key, a wrong type or an out-of-range value is a
    /// `FeatureSpecError`, because a spec the host does not fully understand must not be half-honoured.
    /// Only `normalization` may be absent (meaning null). A decoder cannot see whether a number was written as an
    /// integer, so `init(json:)` lists the integer keys written otherwise (`512.0`, `5e2`) in the decoder's
    /// `userInfo` under `.featureSpecNonIntegerKeys`, and those are refused here, in the order of the keys.
    public init(from decoder: any Decoder) throws {
        try StrictKeys.reject(unknownIn: decoder, known: CodingKeys.allCases.map(\.stringValue), context: "")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let nonIntegerKeys = decoder.userInfo[.featureSpecNonIntegerKeys] as? Set<String> ?? []
        func field<T: Decodable>(_ key: CodingKeys, _ type: T.Type, _ expected: String) throws -> T {
            do {
                return try container.decode(type, forKey: key)
            } catch DecodingError.keyNotFound {
                throw FeatureSpecError.missingKey(key.stringValue)
            } catch let error as FeatureSpecError {
                throw error
            } catch {
                throw FeatureSpecError.wrongType(key: key.stringValue, expected: expected)
            }
        }
        func integer(_ key: CodingKeys) throws -> Int {
            if nonIntegerKeys.contains(key.stringValue) {
                throw FeatureSpecError.wrongType(key: key.stringValue, expected: "an integer")
            }
            return try field(key, Int.self, "an integer")
        }
        func choice<T: RawRepresentable & CaseIterable>(_ key: CodingKeys, _ type: T.Type) throws -> T
        where T.RawValue == String {
            let names = T.allCases.map(\.rawValue)
            let text = try field(key, String.self, "one of \(names.joined(separator: ", "))")
            guard let value = T(rawValue: text) else {
                throw FeatureSpecError.invalidValue(
                    key: key.stringValue, reason: "\"\(text)\" is not one of \(names.joined(separator: ", "))")
            }
            return value
        }
        func normalization() throws -> Normalization? {
            // The one optional key: absent and null both mean "no normalisation".
            guard container.contains(.normalization) else { return nil }
            return try field(.normalization, Normalization?.self, "null or {\"mean\": [numbers], \"std\": [numbers]}")
        }
        self.init(
            sampleRate: try integer(.sampleRate),
            nFFT: try integer(.nFFT),
            winLength: try integer(.winLength),
            hopLength: try integer(.hopLength),
            window: try choice(.window, Window.self),
            kind: try choice(.kind, Kind.self),
            nMels: try integer(.nMels),
            fmin: try field(.fmin, Double.self, "a number"),
            fmax: try field(.fmax, Double.self, "a number"),
            melScale: try choice(.melScale, MelScale.self),
            melNorm: try choice(.melNorm, MelNorm.self),
            power: try field(.power, Double.self, "a number"),
            logBase: try field(.logBase, Double.self, "a number"),
            logMultiplier: try field(.logMultiplier, Double.self, "a number"),
            logFloor: try field(.logFloor, Double.self, "a number"),
            normalization: try normalization()
        )
        try validate()
    }

    /// Writes every key, `normalization` as an explicit null when absent, so the JSON documents itself.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(nFFT, forKey: .nFFT)
        try container.encode(winLength, forKey: .winLength)
        try container.encode(hopLength, forKey: .hopLength)
        try container.encode(window, forKey: .window)
        try container.encode(kind, forKey: .kind)
        try container.encode(nMels, forKey: .nMels)
        try container.encode(fmin, forKey: .fmin)
        try container.encode(fmax, forKey: .fmax)
        try container.encode(melScale, forKey: .melScale)
        try container.encode(melNorm, forKey: .melNorm)
        try container.encode(power, forKey: .power)
        try container.encode(logBase, forKey: .logBase)
        try container.encode(logMultiplier, forKey: .logMultiplier)
        try container.encode(logFloor, forKey: .logFloor)
        if let normalization {
            try container.encode(normalization, forKey: .normalization)
        } else {
            try container.encodeNil(forKey: .normalization)
        }
    }
}

extension CodingUserInfoKey {
    /// `Set<String>`: the FeatureSpec keys that must be integers but whose JSON numbers were not written as
    /// integers (see `FeatureSpec.init(from:)`).
    static let featureSpecNonIntegerKeys = CodingUserInfoKey(rawValue: "HearAlert.FeatureSpec.nonIntegerKeys")!
}

extension FeatureSpec.Normalization {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case mean, std
    }

    /// Strict like the spec itself: exactly `mean` and `std`, both arrays of numbers.
    public init(from decoder: any Decoder) throws {
        try StrictKeys.reject(
            unknownIn: decoder, known: CodingKeys.allCases.map(\.stringValue), context: "normalization.")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func numbers(_ key: CodingKeys) throws -> [Float] {
            do {
                return try container.decode([Float].self, forKey: key)
            } catch DecodingError.keyNotFound {
                throw FeatureSpecError.missingKey("normalization.\(key.stringValue)")
            } catch is DecodingError {
                throw FeatureSpecError.wrongType(key: "normalization.\(key.stringValue)", expected: "an array of numbers")
            }
        }
        self.init(mean: try numbers(.mean), std: try numbers(.std))
    }
}

/// Finds keys a strict decoder does not know, so that a typo (`"n_mel"`) is an error instead of a default.
private enum StrictKeys {
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static func reject(unknownIn decoder: any Decoder, known: [String], context: String) throws {
        let container: KeyedDecodingContainer<AnyKey>
        do {
            container = try decoder.container(keyedBy: AnyKey.self)
        } catch {
            throw FeatureSpecError.wrongType(key: context.isEmpty ? "feature spec" : String(context.dropLast()),
                                             expected: "a JSON object")
        }
        let unknown = container.allKeys.map(\.stringValue).filter { !known.contains($0) }.sorted()
        if !unknown.isEmpty {
            throw FeatureSpecError.unknownKeys(unknown.map { context + $0 })
        }
    }
}
