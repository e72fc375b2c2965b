/// One labelled stretch of a file's timeline, in seconds from the file's start.
///
/// Both sides of an evaluation use it: the corpus's annotations (the reference) and the detector's output (the
/// estimate), so the metrics compare like with like. This is the DCASE / sed_eval event: a label, an onset and
/// an offset.
public struct SoundEvent: Sendable, Hashable, Codable {
    /// The alert class, in the corpus vocabulary (`siren`, `car_horn`, ...).
    public var label: String
    /// When the sound starts, in seconds.
    public var onset: Double
    /// When the sound stops, in seconds.
    public var offset: Double

    public init(label: String, onset: Double, offset: Double) {
        self.label = label
        self.onset = onset
        self.offset = offset
    }
}

/// An event the detector reported, with the moment it reported it.
///
/// The onset says where the detector places the start of the sound (it may date it back); `detectedAt` says when
/// the user was told, which is what onset latency measures.
public struct DetectedEvent: Sendable, Hashable, Codable {
    public var label: String
    public var onset: Double
    public var offset: Double
    /// The file time, in seconds, at which the detector announced the event.
    public var detectedAt: Double

    public init(label: String, onset: Double, offset: Double, detectedAt: Double) {
        self.label = label
        self.onset = onset
        self.offset = offset
        self.detectedAt = detectedAt
    }

    /// Label, onset and offset, as the event-based and segment-based metrics see them.
    public var event: SoundEvent { SoundEvent(label: label, onset: onset, offset: offset) }
}
