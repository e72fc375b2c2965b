import Foundation

/// Analysis and synthesis windows, in their periodic form (`0.5 - 0.5·cos(2πn/L)`, denominator L, not L-1):
/// periodic windows overlap-add to a constant at hops of L/2 and L/4, which STFT analysis and perfect
/// reconstruction rely on, and they match `scipy.signal.get_window(..., fftbins=True)` as librosa uses it.
public enum WindowFunction {
    /// A window of `length` samples, computed in double precision and rounded once.
    public static func make(_ kind: FeatureSpec.Window, length: Int) -> [Float] {
        precondition(length >= 1, "a window needs at least one sample")
        let step = 2 * Double.pi / Double(length)
        return (0..<length).map { index in
            let cosine = cos(step * Double(index))
            switch kind {
            case .hann: return Float(0.5 - 0.5 * cosine)
            case .sqrtHann: return Float((0.5 - 0.5 * cosine).squareRoot())
            case .hamming: return Float(0.54 - 0.46 * cosine)
            }
        }
    }
}
