/// Segment-based scores, accumulated file by file exactly as sed_eval 0.2.1's `SegmentBasedMetrics`.
///
/// Each file is cut into fixed segments (1 s by default) over its whole duration; a class is active in a segment
/// when any of its events touches it (onset rounded down, offset rounded up to the segment grid). Per segment,
/// overall S = min(N_ref, N_sys) − TP, D = max(0, N_ref − N_sys), I = max(0, N_sys − N_ref); class-wise D and I are
/// the false negatives and false positives. Estimates with labels outside the vocabulary are active classes of
/// their own in the overall counts and belong to no class-wise row, as in the event-based scores (sed_eval itself
/// raises on them).
public struct SegmentBasedMetrics: Sendable {
    public let labels: [String]
    /// Segment length in seconds: sed_eval's `time_resolution`.
    public let segmentLength: Double
    public private(set) var overall = DetectionCounts()
    public private(set) var classWise: [String: DetectionCounts]

    public init(labels: [String], segmentLength: Double = 1.0) {
        precondition(segmentLength > 0, "segment length must be positive")
        self.labels = labels
        self.segmentLength = segmentLength
        self.classWise = Dictionary(uniqueKeysWithValues: labels.map { ($0, DetectionCounts()) })
    }

    /// Scores one file of `duration` seconds and adds it to the totals; returns the file's overall counts.
    @discardableResult
    public mutating func add(reference: [SoundEvent], estimate: [SoundEvent], duration: Double) -> DetectionCounts {
        let segmentCount = Int((duration * 1 / segmentLength).rounded(.up))
        var fileLabels = labels
        for event in reference + estimate where !fileLabels.contains(event.label) { fileLabels.append(event.label) }
        let referenceRoll = activity(of: reference, labels: fileLabels, segmentCount: segmentCount)
        let estimateRoll = activity(of: estimate, labels: fileLabels, segmentCount: segmentCount)

        var file = DetectionCounts()
        for segment in 0..<segmentCount {
            var nRef = 0, nSys = 0, truePositives = 0
            for column in fileLabels.indices {
                let isReference = referenceRoll[column][segment], isEstimate = estimateRoll[column][segment]
                if isReference { nRef += 1 }
                if isEstimate { nSys += 1 }
                if isReference && isEstimate { truePositives += 1 }
            }
            file.reference += nRef
            file.system += nSys
            file.truePositives += truePositives
            file.substitutions += min(nRef, nSys) - truePositives
            file.deletions += max(0, nRef - nSys)
            file.insertions += max(0, nSys - nRef)
        }
        overall += file

        for (column, label) in labels.enumerated() {
            var counts = DetectionCounts()
            for segment in 0..<segmentCount {
                let isReference = referenceRoll[column][segment], isEstimate = estimateRoll[column][segment]
                if isReference { counts.reference += 1 }
                if isEstimate { counts.system += 1 }
                if isReference && isEstimate { counts.truePositives += 1 }
                if isReference && !isEstimate { counts.deletions += 1 }
                if isEstimate && !isReference { counts.insertions += 1 }
            }
            classWise[label, default: DetectionCounts()] += counts
        }
        return file
    }

    /// sed_eval's event roll, one row of segments per label, cut or padded to the evaluated length.
    ///
    /// A negative onset (never in a valid corpus; possible in a detector's back-dated estimate) starts at segment
    /// 0 here, where numpy's slicing would wrap around to the end.
    private func activity(of events: [SoundEvent], labels: [String], segmentCount: Int) -> [[Bool]] {
        var roll = [[Bool]](repeating: [Bool](repeating: false, count: segmentCount), count: labels.count)
        for event in events {
            guard let column = labels.firstIndex(of: event.label) else { continue }
            let first = max(0, Int((event.onset * 1 / segmentLength).rounded(.down)))
            let end = min(segmentCount, Int((event.offset * 1 / segmentLength).rounded(.up)))
            if first < end { for segment in first..<end { roll[column][segment] = true } }
        }
        return roll
    }

    /// The scores over everything added so far.
    public func results() -> ScoreTable {
        ScoreTable(labels: labels, overall: overall, classWise: classWise)
    }
}
