/// How long after each alert began the user was told of it, whatever onset the detector stamped.
///
/// Onset latency counts only events that onset-only matching pairs, so a slow alert drops out of it when its
/// onset is stamped late (outside the collar) and counts when stamped right: better stamping can make it worse.
/// This measure takes every reference event that a detection of its label overlaps in time, and the earliest
/// announcement among those detections; it is the same definition as `announcement_delays` in
/// tools/hearalert_train/evaluation.py.
enum AnnouncementDelay {
    /// One file's (label, delay in seconds) pairs, in reference order; events no same-label detection overlaps
    /// are left out. Overlap is strict (touching at an edge does not count), and the delay is never negative: an
    /// event that began while its label was already being reported was waited for 0 s.
    static func delays(reference: [SoundEvent], detections: [DetectedEvent]) -> [(label: String, delay: Double)] {
        reference.compactMap { event in
            let told = detections.lazy
                .filter { $0.label == event.label && $0.onset < event.offset && $0.offset > event.onset }
                .map(\.detectedAt)
                .min()
            return told.map { (event.label, max(0, $0 - event.onset)) }
        }
    }
}
