/// Event-based scores, accumulated file by file exactly as sed_eval 0.2.1's `EventBasedMetrics` with its default
/// `event_matching_type='optimal'`.
///
/// Overall: a maximum matching of same-label estimates to references whose times agree gives the true
/// positives; references and estimates left over are then paired greedily, in list order, as substitutions when
/// their times agree; what remains are deletions and insertions. Class-wise: the same matching within each class
/// of the vocabulary, without substitutions. Estimates with labels outside the vocabulary count in the overall
/// scores (as insertions or substitutions) but in no class.
public struct EventBasedMetrics: Sendable {
    /// The vocabulary: the classes scored and averaged.
    public let labels: [String]
    public let rules: EventMatchingRules
    public private(set) var overall = DetectionCounts()
    public private(set) var classWise: [String: DetectionCounts]

    public init(labels: [String], rules: EventMatchingRules = .onsetAndOffset) {
        self.labels = labels
        self.rules = rules
        self.classWise = Dictionary(uniqueKeysWithValues: labels.map { ($0, DetectionCounts()) })
    }

    /// Scores one file's events and adds them to the totals.
    ///
    /// Returns the file's own overall counts and the same-label pairs the matching found (indices into the two
    /// lists), from which callers measure onset latency.
    @discardableResult
    public mutating func add(reference: [SoundEvent], estimate: [SoundEvent]) -> FileEventMatch {
        let matching = BipartiteMatching(referenceCount: reference.count, estimateCount: estimate.count) { r, e in
            reference[r].label == estimate[e].label && rules.timesAgree(reference: reference[r], estimate: estimate[e])
        }
        let pairs = matching.pairs()
        var referenceMatched = [Bool](repeating: false, count: reference.count)
        var estimateMatched = [Bool](repeating: false, count: estimate.count)
        for pair in pairs {
            referenceMatched[pair.reference] = true
            estimateMatched[pair.estimate] = true
        }
        let substitutions = countSubstitutions(reference: reference, estimate: estimate,
                                               referenceMatched: referenceMatched, estimateMatched: estimateMatched)
        var file = DetectionCounts()
        file.reference = reference.count
        file.system = estimate.count
        file.truePositives = pairs.count
        file.substitutions = substitutions
        file.deletions = reference.count - pairs.count - substitutions
        file.insertions = estimate.count - pairs.count - substitutions
        overall += file

        for label in labels {
            let classReference = reference.filter { $0.label == label }
            let classEstimate = estimate.filter { $0.label == label }
            let truePositives = BipartiteMatching(
                referenceCount: classReference.count, estimateCount: classEstimate.count
            ) { r, e in
                rules.timesAgree(reference: classReference[r], estimate: classEstimate[e])
            }.pairs().count
            var counts = DetectionCounts()
            counts.reference = classReference.count
            counts.system = classEstimate.count
            counts.truePositives = truePositives
            counts.deletions = classReference.count - truePositives
            counts.insertions = classEstimate.count - truePositives
            classWise[label, default: DetectionCounts()] += counts
        }
        return FileEventMatch(counts: file, pairs: pairs)
    }

    /// sed_eval's substitution pass: each leftover reference, in order, takes the first leftover estimate not yet
    /// taken whose times agree, whatever its label.
    private func countSubstitutions(reference: [SoundEvent], estimate: [SoundEvent],
                                    referenceMatched: [Bool], estimateMatched: [Bool]) -> Int {
        var taken = estimateMatched
        var substitutions = 0
        for r in reference.indices where !referenceMatched[r] {
            for e in estimate.indices where !taken[e] && rules.timesAgree(reference: reference[r], estimate: estimate[e]) {
                taken[e] = true
                substitutions += 1
                break
            }
        }
        return substitutions
    }

    /// The scores over everything added so far.
    public func results() -> ScoreTable {
        ScoreTable(labels: labels, overall: overall, classWise: classWise)
    }
}

/// What event-based matching found in one file.
public struct FileEventMatch: Sendable {
    /// The file's overall counts.
    public var counts: DetectionCounts
    /// Same-label reference/estimate pairs whose times agree, by index into the lists given.
    public var pairs: [(reference: Int, estimate: Int)]
}
