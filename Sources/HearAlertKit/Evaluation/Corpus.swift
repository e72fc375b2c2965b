import Foundation

/// A labelled corpus as described in shared/docs/CORPUS.md, validated and listed, without its audio.
///
/// Holds only the file list and the reference events (a few hundred bytes per file), so hours of corpus cost
/// little memory; audio is opened file by file when detection runs.
public struct Corpus: Sendable {
    /// The corpus directory, as given.
    public let directory: String
    /// `corpus.json`'s `sample_rate`: what the audio was written at (readers resample to what a model needs).
    public let sampleRate: Int
    /// `corpus.json`'s `labels`: the vocabulary scores are computed over.
    public let labels: [String]
    /// Every row of `files.tsv`, in order, with its annotations.
    public let files: [CorpusFile]
    /// Whether `clean/` exists: enhancement can be scored against the clean speech.
    public let hasCleanSpeech: Bool
    /// Whether `alerts/` exists: the alert energy the enhancer keeps can be measured.
    public let hasAlertStems: Bool

    /// Total listed audio, in seconds.
    public var duration: Double { files.reduce(0) { $0 + $1.duration } }

    /// The mixture the detector hears.
    public func audioPath(of file: CorpusFile) -> String { path("audio", file.name) }
    /// The clean speech alone (only when `hasCleanSpeech`).
    public func cleanPath(of file: CorpusFile) -> String { path("clean", file.name) }
    /// The alert component alone (only when `hasAlertStems`).
    public func alertsPath(of file: CorpusFile) -> String { path("alerts", file.name) }

    /// A path inside the corpus, relative if the directory was given relative.
    func path(_ components: String...) -> String {
        components.reduce(directory) { ($0 as NSString).appendingPathComponent($1) }
    }

    init(directory: String, sampleRate: Int, labels: [String], files: [CorpusFile],
         hasCleanSpeech: Bool, hasAlertStems: Bool) {
        self.directory = directory
        self.sampleRate = sampleRate
        self.labels = labels
        self.files = files
        self.hasCleanSpeech = hasCleanSpeech
        self.hasAlertStems = hasAlertStems
    }
}

/// One audio file of a corpus and what sounds in it.
public struct CorpusFile: Sendable, Equatable {
    /// Path relative to `audio/` (and to `clean/`, `alerts/`).
    public let name: String
    /// Length in seconds, from `files.tsv`.
    public let duration: Double
    /// The reference alert events, in `annotations.tsv` order; empty for an alert-free file.
    public let events: [SoundEvent]
    /// Signal-to-noise ratios the generator recorded, when it did.
    public let snr: RecordedSNR
    /// Its line in `files.tsv`, so a problem found later with its audio names the line, as the reader's own
    /// messages do; nil for a corpus built in code.
    public let line: Int?

    public init(name: String, duration: Double, events: [SoundEvent], snr: RecordedSNR = RecordedSNR(),
                line: Int? = nil) {
        self.name = name
        self.duration = duration
        self.events = events
        self.snr = snr
        self.line = line
    }
}

/// The SNRs a corpus generator recorded for one file in `corpus.json`'s `files` extras
/// (`{"files": {"mix_0001.wav": {"alert_snr_db": 3.2, "speech_snr_db": 10.5, ...}}}`); `nil` when not recorded.
public struct RecordedSNR: Sendable, Equatable {
    /// Alert power over the background (speech and noise), in dB: how hard the alert is to hear.
    public var alertDB: Double?
    /// Speech power over the noise, in dB: how hard the speech is to follow.
    public var speechDB: Double?

    public init(alertDB: Double? = nil, speechDB: Double? = nil) {
        self.alertDB = alertDB
        self.speechDB = speechDB
    }
}

extension Corpus {
    /// What a model's vocabulary means for its scores on this corpus, one sentence per kind of mismatch (empty
    /// when the model reports exactly the corpus's labels).
    public func vocabularyNotes(modelLabels: [String]) -> [String] {
        var notes: [String] = []
        let missing = labels.filter { !modelLabels.contains($0) }
        if !missing.isEmpty {
            notes.append("the model cannot report \(missing.joined(separator: ", ")): those events all count as missed")
        }
        let extra = modelLabels.filter { !labels.contains($0) }
        if !extra.isEmpty {
            notes.append("the corpus has no \(extra.joined(separator: ", ")) labels: such detections count as insertions")
        }
        return notes
    }
}
