/// Decides when a counted fact deserves a line on standard error: its first occurrence at once, then at most one
/// line per `interval`, summing what happened in between. A device that overruns 500 times a second thus costs
/// the person one line every ten seconds ("… 5000 times in the last 10 s"), not a flood that hides everything else.
///
/// A plain value with no clock of its own: the caller passes the time, so tests can drive it by hand.
struct ReportRateLimiter {
    /// The shortest time, in seconds, between two lines about the same fact.
    let interval: Double
    private var reportedTotal = 0
    private var lastLine: Double?

    init(interval: Double) {
        self.interval = interval
    }

    /// What to report now, given the fact's running `total` and the time `now` (seconds, any fixed origin):
    /// the occurrences since the last line and the seconds since that line (nil for the first line), or nil
    /// when nothing new happened or the last line is too recent. `force` ignores the interval (final lines).
    mutating func due(total: Int, now: Double, force: Bool = false) -> (count: Int, seconds: Double?)? {
        guard total > reportedTotal else { return nil }
        if let lastLine, now - lastLine < interval, !force { return nil }
        defer {
            reportedTotal = total
            lastLine = now
        }
        return (total - reportedTotal, lastLine.map { now - $0 })
    }
}
