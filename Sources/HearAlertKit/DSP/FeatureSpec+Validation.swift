import Foundation

extension FeatureSpec {
    /// Checks every parameter can produce finite features, so a bad spec fails when it is loaded, with the key
    /// named, rather than as NaNs or a crash mid-stream. `tools/features.py` applies the same rules.
    public func validate() throws {
        func require(_ condition: Bool, _ key: CodingKeys, _ reason: @autoclosure () -> String) throws {
            if !condition { throw FeatureSpecError.invalidValue(key: key.stringValue, reason: reason()) }
        }
        try require((1...1_000_000).contains(sampleRate), .sampleRate, "must be 1...1000000 Hz, got \(sampleRate)")
        try require(
            (4...65_536).contains(nFFT) && nFFT.isMultiple(of: 2), .nFFT,
            "must be an even number in 4...65536, got \(nFFT)")
        try require((1...nFFT).contains(winLength), .winLength, "must be 1...n_fft (\(nFFT)), got \(winLength)")
        try require(hopLength >= 1, .hopLength, "must be at least 1, got \(hopLength)")
        if kind == .logMel {
            try require((1...4_096).contains(nMels), .nMels, "must be 1...4096, got \(nMels)")
            try require(fmin.isFinite && fmin >= 0, .fmin, "must be a finite frequency >= 0, got \(fmin)")
            let nyquist = Double(sampleRate) / 2
            try require(
                fmax.isFinite && fmax > fmin && fmax <= nyquist, .fmax,
                "must be above fmin (\(fmin)) and at most sample_rate/2 (\(nyquist)), got \(fmax)")
        }
        try require(power.isFinite && power > 0, .power, "must be a finite number > 0, got \(power)")
        try require(
            logBase.isFinite && logBase > 0 && logBase != 1, .logBase, "must be finite, > 0 and not 1, got \(logBase)")
        try require(
            logMultiplier.isFinite && logMultiplier != 0, .logMultiplier, "must be finite and not 0, got \(logMultiplier)")
        try require(logFloor.isFinite && logFloor > 0, .logFloor, "must be a finite number > 0, got \(logFloor)")
        if let normalization {
            let bins = binCount
            try require(
                normalization.mean.count == bins, .normalization,
                "mean must have \(bins) values (one per bin), got \(normalization.mean.count)")
            try require(
                normalization.std.count == bins, .normalization,
                "std must have \(bins) values (one per bin), got \(normalization.std.count)")
            try require(normalization.mean.allSatisfy(\.isFinite), .normalization, "mean must be finite numbers")
            try require(
                normalization.std.allSatisfy { $0.isFinite && $0 > 0 }, .normalization, "std must be finite numbers > 0")
        }
    }
}
