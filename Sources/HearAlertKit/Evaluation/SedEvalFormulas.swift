/// The scalar formulas of `sed_eval.metric` (sed_eval 0.2.1), reproduced operation for operation so that scores
/// agree with the package the sound-event-detection literature reports with.
///
/// Undefined quantities are NaN exactly where sed_eval returns NaN (precision with no system output, recall with
/// no reference); rates divide by `Nref + eps` with `eps = numpy.spacing(1)`, so a class with no reference events
/// but some insertions gets a very large, finite error rate, as in sed_eval.
enum SedEvalFormulas {
    /// `numpy.spacing(1)`, the guard sed_eval adds to every rate's denominator.
    static let epsilon = Double.ulpOfOne

    static func precision(truePositives: Double, systemCount: Double) -> Double {
        systemCount == 0 ? .nan : truePositives / systemCount
    }

    static func recall(truePositives: Double, referenceCount: Double) -> Double {
        referenceCount == 0 ? .nan : truePositives / referenceCount
    }

    /// F1: `(1 + β²)·P·R / (β²·P + R)` with β = 1, and 0 when both are 0 (NaN stays NaN).
    static func fMeasure(precision: Double, recall: Double) -> Double {
        if precision == 0 && recall == 0 { return 0 }
        let betaSquared = 1.0
        return (1 + betaSquared) * precision * recall / (betaSquared * precision + recall)
    }

    /// Substitution, deletion and insertion rates all share this form.
    static func rate(_ count: Double, referenceCount: Double) -> Double {
        count / (referenceCount + epsilon)
    }

    /// `numpy.nanmean`: the mean of the values that are not NaN, NaN when none is.
    static func nanMean(_ values: [Double]) -> Double {
        let defined = values.filter { !$0.isNaN }
        return defined.isEmpty ? .nan : defined.reduce(0, +) / Double(defined.count)
    }
}
