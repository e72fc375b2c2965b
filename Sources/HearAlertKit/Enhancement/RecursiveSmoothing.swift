import Foundation

/// First-order recursive smoothing factors from the literature, carried over to another hop length.
///
/// Papers quote factors per frame (`x̄ ← α·x̄ + (1−α)·x` with, say, α = 0.98 at a 10 ms frame step). What they
/// mean is a time constant τ = −T / ln α, so at hop T′ the same behaviour needs α′ = α^(T′/T).
enum RecursiveSmoothing {
    static func factor(_ referenceFactor: Double, referenceHopSeconds: Double, hopSeconds: Double) -> Float {
        Float(pow(referenceFactor, hopSeconds / referenceHopSeconds))
    }
}
