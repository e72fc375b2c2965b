/// Maximum-cardinality bipartite matching (Hopcroft–Karp), a faithful port of `sed_eval.util.bipartite_match`
/// (itself mir_eval's `_bipartite_match`, after D. Eppstein's 2002 implementation).
///
/// The size of a maximum matching is unique, but *which* pairs it picks is not, and sed_eval's event-based error
/// rate depends on it: the events left unmatched are then paired greedily as substitutions. So this keeps the
/// original's visiting order (Python dicts iterate in insertion order) instead of using any matching algorithm.
struct BipartiteMatching {
    /// Estimated-event indices in the order sed_eval first inserts them into its graph.
    private let estimateOrder: [Int]
    /// For each estimated event, the reference events it may match, in ascending order.
    private let candidates: [[Int]]
    private let referenceCount: Int

    /// Builds the graph sed_eval builds from its hit matrix: scanning references row by row, estimates column by
    /// column (the order of `numpy.where`), and linking every hit.
    init(referenceCount: Int, estimateCount: Int, hit: (_ reference: Int, _ estimate: Int) -> Bool) {
        var order: [Int] = []
        var candidates = [[Int]](repeating: [], count: estimateCount)
        for reference in 0..<referenceCount {
            for estimate in 0..<estimateCount where hit(reference, estimate) {
                if candidates[estimate].isEmpty { order.append(estimate) }
                candidates[estimate].append(reference)
            }
        }
        self.estimateOrder = order
        self.candidates = candidates
        self.referenceCount = referenceCount
    }

    /// The matched pairs, sorted by reference index as sed_eval sorts them.
    func pairs() -> [(reference: Int, estimate: Int)] {
        let matching = solve()
        return matching.enumerated().compactMap { reference, estimate in
            estimate.map { (reference: reference, estimate: $0) }
        }
    }

    /// The back-pointer of a left vertex (estimate) in the layered residual graph; `free` is the original's
    /// `unmatched` sentinel marking the first layer.
    private enum Predecessor: Equatable {
        case free
        case reference(Int)
    }

    /// Returns, for each reference event, the estimate matched to it.
    private func solve() -> [Int?] {
        var matching = [Int?](repeating: nil, count: referenceCount)
        for estimate in estimateOrder {
            for reference in candidates[estimate] where matching[reference] == nil {
                matching[reference] = estimate
                break
            }
        }

        while true {
            var predecessorsOfReference = [[Int]?](repeating: nil, count: referenceCount)
            var unmatched: [Int] = []
            var predecessor = [Predecessor?](repeating: nil, count: candidates.count)
            for estimate in estimateOrder { predecessor[estimate] = .free }
            for case let estimate? in matching { predecessor[estimate] = nil }
            var layer = estimateOrder.filter { predecessor[$0] != nil }

            while !layer.isEmpty && unmatched.isEmpty {
                var newLayerOrder: [Int] = []
                var newLayer: [Int: [Int]] = [:]
                for estimate in layer {
                    for reference in candidates[estimate] where predecessorsOfReference[reference] == nil {
                        if newLayer[reference] == nil { newLayerOrder.append(reference) }
                        newLayer[reference, default: []].append(estimate)
                    }
                }
                layer = []
                for reference in newLayerOrder {
                    predecessorsOfReference[reference] = newLayer[reference]
                    if let estimate = matching[reference] {
                        layer.append(estimate)
                        predecessor[estimate] = .reference(reference)
                    } else {
                        unmatched.append(reference)
                    }
                }
            }

            if unmatched.isEmpty { return matching }

            // Searches backward through the layers for an alternating path ending at `reference`.
            func augment(_ reference: Int) -> Bool {
                guard let layerBelow = predecessorsOfReference[reference] else { return false }
                predecessorsOfReference[reference] = nil
                for estimate in layerBelow {
                    guard let previous = predecessor[estimate] else { continue }
                    predecessor[estimate] = nil
                    let found: Bool
                    switch previous {
                    case .free: found = true
                    case .reference(let earlier): found = augment(earlier)
                    }
                    if found {
                        matching[reference] = estimate
                        return true
                    }
                }
                return false
            }
            for reference in unmatched { _ = augment(reference) }
        }
    }
}
