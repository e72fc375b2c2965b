/// False alarms per hour: how often the user would be told of an alert when none is sounding.
///
/// Two views. Over alert-free files (no reference event at all), every detection is a false alarm. Over
/// alert-free time in all files, a detection is a false alarm when it overlaps no reference event widened by the
/// collar on both sides, and the exposure is the time outside those widened events; this uses the speech and
/// noise around alerts too, and does not blame a detector for a late tail of a real alert.
public struct FalseAlarmRate: Sendable {
    /// Seconds added before each reference onset and after each offset: the event-matching collar.
    public let collar: Double
    public private(set) var alertFreeFiles = FalseAlarmExposure()
    public private(set) var alertFreeTime = FalseAlarmExposure()

    public init(collar: Double = EventMatchingRules.onsetAndOffset.collar) {
        self.collar = collar
    }

    /// Adds one file; returns how many of its detections were false alarms over its alert-free time.
    @discardableResult
    public mutating func add(reference: [SoundEvent], estimate: [SoundEvent], duration: Double) -> Int {
        if reference.isEmpty {
            alertFreeFiles.count += estimate.count
            alertFreeFiles.seconds += duration
        }
        let falseAlarms = estimate.filter { detection in
            !reference.contains { detection.onset < $0.offset + collar && detection.offset > $0.onset - collar }
        }.count
        alertFreeTime.count += falseAlarms
        alertFreeTime.seconds += duration - widenedCoverage(of: reference, duration: duration)
        return falseAlarms
    }

    /// Length of the union of the reference events widened by the collar, clipped to the file.
    private func widenedCoverage(of reference: [SoundEvent], duration: Double) -> Double {
        let spans = reference
            .map { (start: max(0, $0.onset - collar), end: min(duration, $0.offset + collar)) }
            .sorted { ($0.start, $0.end) < ($1.start, $1.end) }
        var total = 0.0
        var current: (start: Double, end: Double)?
        for span in spans {
            if let open = current, span.start <= open.end {
                current = (open.start, max(open.end, span.end))
            } else {
                if let open = current { total += open.end - open.start }
                current = span
            }
        }
        if let open = current { total += open.end - open.start }
        return total
    }
}

/// False alarms counted over some listening time.
public struct FalseAlarmExposure: Sendable, Equatable, Encodable {
    public var count = 0
    /// Listening time the count was gathered over.
    public var seconds = 0.0

    public init() {}

    /// Absent when there was no such time to listen to.
    public var perHour: Double? { seconds > 0 ? Double(count) / (seconds / 3600) : nil }

    private enum CodingKeys: String, CodingKey { case count, seconds, perHour }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(NullWhenUndefined(wrappedValue: perHour), forKey: .perHour)
    }
}
