/// Enhancement scores of one file: the mixture and the enhancer's output, each against the clean speech plus
/// the alert stem (what the listener should hear).
public struct FileEnhancementScore: Sendable, Encodable {
    /// SNR of the mixture (what the ear gets without HearAlert), in dB.
    @NullWhenUndefined public var snrInDB: Double
    /// SNR of the enhanced output, in dB.
    @NullWhenUndefined public var snrOutDB: Double
    /// Segmental SNR in and out, in dB; absent for a file shorter than one frame.
    @NullWhenUndefined public var segmentalSNRInDB: Double?
    @NullWhenUndefined public var segmentalSNROutDB: Double?
    /// Alert energy retained over the reference alert events, in dB (0 = untouched); absent without `alerts/`,
    /// for an alert-free file, or when the output holds no trace of the alert.
    @NullWhenUndefined public var alertRetainedDB: Double?

    public init(snrInDB: Double, snrOutDB: Double, segmentalSNRInDB: Double?, segmentalSNROutDB: Double?,
                alertRetainedDB: Double?) {
        self.snrInDB = snrInDB
        self.snrOutDB = snrOutDB
        self.segmentalSNRInDB = segmentalSNRInDB
        self.segmentalSNROutDB = segmentalSNROutDB
        self.alertRetainedDB = alertRetainedDB
    }

}

/// Means over files of the enhancement scores, accumulated file by file.
public struct EnhancementSummary: Sendable {
    private var snrIn = Mean(), snrOut = Mean(), snrGain = Mean()
    private var segmentalIn = Mean(), segmentalOut = Mean(), segmentalGain = Mean()
    private var alertRetained = Mean()

    public init() {}

    /// Adds one file. A file whose target is silent (no speech, no alert) has no SNR and says nothing about
    /// speech, so only its alert figure, if any, counts.
    public mutating func add(_ score: FileEnhancementScore) {
        if let retained = score.alertRetainedDB { alertRetained.add(retained) }
        guard score.snrInDB.isFinite && score.snrOutDB.isFinite else { return }
        snrIn.add(score.snrInDB)
        snrOut.add(score.snrOutDB)
        snrGain.add(score.snrOutDB - score.snrInDB)
        if let input = score.segmentalSNRInDB, let output = score.segmentalSNROutDB {
            segmentalIn.add(input)
            segmentalOut.add(output)
            segmentalGain.add(output - input)
        }
    }

    public func results() -> EnhancementReport {
        EnhancementReport(
            files: snrIn.count, snrInDB: snrIn.value, snrOutDB: snrOut.value, snrImprovementDB: snrGain.value,
            segmentalSNRInDB: segmentalIn.value, segmentalSNROutDB: segmentalOut.value,
            segmentalSNRImprovementDB: segmentalGain.value,
            alertFiles: alertRetained.count, alertRetainedDB: alertRetained.value
        )
    }

    private struct Mean: Sendable {
        var sum = 0.0
        var count = 0
        mutating func add(_ value: Double) {
            sum += value
            count += 1
        }
        var value: Double? { count > 0 ? sum / Double(count) : nil }
    }
}

/// Enhancement over a corpus: mean per-file scores in dB, and the mean improvement (out − in).
public struct EnhancementReport: Sendable, Encodable {
    /// Files scored (those with finite SNRs in and out).
    public var files: Int
    @NullWhenUndefined public var snrInDB: Double?
    @NullWhenUndefined public var snrOutDB: Double?
    @NullWhenUndefined public var snrImprovementDB: Double?
    @NullWhenUndefined public var segmentalSNRInDB: Double?
    @NullWhenUndefined public var segmentalSNROutDB: Double?
    @NullWhenUndefined public var segmentalSNRImprovementDB: Double?
    /// Files whose alert energy retained could be measured.
    public var alertFiles: Int
    @NullWhenUndefined public var alertRetainedDB: Double?
}
