import Foundation

/// How far an evaluation has got, reported after every file.
public struct EvaluationProgress: Sendable {
    public var filesDone: Int
    public var fileCount: Int
    /// Audio seconds scored so far, and in all.
    public var secondsDone: Double
    public var totalSeconds: Double
    /// Wall-clock seconds since the run started.
    public var elapsed: Double

    /// A one-line bar for a terminal, e.g. `[██████····]  60% 2160/3600 files  6.0/10.0 h  41 s, ~27 s left`.
    public func bar(width: Int = 30) -> String {
        let fraction = totalSeconds > 0 ? min(1, secondsDone / totalSeconds) : 1
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        let remaining = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0
        // Audio in the unit that suits the corpus: a 2-minute test set is not "0.0/0.0 h".
        let (unit, scale) = totalSeconds >= 7200 ? ("h", 3600.0) : totalSeconds >= 120 ? ("min", 60.0) : ("s", 1.0)
        return "[\(bar)] " + String(format: "%3d%% %d/%d files  %.1f/%.1f ", Int(fraction * 100), filesDone, fileCount,
                                    secondsDone / scale, totalSeconds / scale)
            + unit + String(format: "  %.0f s, ~%.0f s left", elapsed, remaining)
    }
}
