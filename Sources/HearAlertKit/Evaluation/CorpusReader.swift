import Foundation

extension Corpus {
    /// How far an annotation may run past its file's listed duration, in seconds: durations are written rounded,
    /// so an event that ends with the file may overshoot by a rounding step.
    public static let durationTolerance = 0.01

    /// Reads and validates the corpus in `directory` (shared/docs/CORPUS.md).
    ///
    /// Rejects, with the file and line: a wrong `corpus.json` format, version, sample rate or label list; table
    /// headers that differ from the documented ones; malformed rows; an empty file list; duplicate files;
    /// missing audio (and missing `clean/` or `alerts/` counterparts when those folders exist); annotations for
    /// unlisted files; unknown labels; negative times; onsets not before offsets; offsets past the file's
    /// duration; duplicate events.
    public static func load(directory: String) throws -> Corpus {
        let reader = CorpusReader(directory: directory)
        let description = try reader.readDescription()
        let listing = try reader.readFileList()
        let events = try reader.readAnnotations(listing: listing, labels: description.labels)
        let snrs = try reader.recordedSNRs(description.files, listed: listing)
        let hasClean = reader.isDirectory("clean"), hasAlerts = reader.isDirectory("alerts")
        for entry in listing.entries {
            try reader.requireAudio(entry, in: "audio")
            if hasClean { try reader.requireAudio(entry, in: "clean") }
            if hasAlerts { try reader.requireAudio(entry, in: "alerts") }
        }
        let files = listing.entries.map { entry in
            CorpusFile(name: entry.name, duration: entry.duration, events: events[entry.name] ?? [],
                       snr: snrs[entry.name] ?? RecordedSNR(), line: entry.line)
        }
        return Corpus(directory: directory, sampleRate: description.sampleRate, labels: description.labels,
                      files: files, hasCleanSpeech: hasClean, hasAlertStems: hasAlerts)
    }
}

/// The reading steps of `Corpus.load`, one per file of the format.
private struct CorpusReader {
    let directory: String

    /// Paths stay as the user gave the directory (relative stays relative), so messages match what they typed.
    func path(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }

    func isDirectory(_ name: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path(name), isDirectory: &isDirectory) && isDirectory.boolValue
    }

    // MARK: corpus.json

    /// The fields of `corpus.json` the evaluator relies on; everything else is the generator's free-form extras.
    struct Description: Decodable {
        let format: String
        let version: Int
        let sampleRate: Int
        let labels: [String]
        /// Per-file extras; only the SNRs are read from them.
        let files: [String: FileExtras]?
        /// True for a distillation-only set of real sound effects (`make_real_set.py --kinds effects`): its files
        /// have no events yet may hold alert-like sounds, so scoring it would count them as false alarms.
        let unlabelled: Bool?

        private enum CodingKeys: String, CodingKey {
            case format, version, sampleRate = "sample_rate", labels, files, unlabelled
        }
    }

    struct FileExtras: Decodable {
        let alertSNR: Double?
        let speechSNR: Double?

        private enum CodingKeys: String, CodingKey {
            case alertSNR = "alert_snr_db", speechSNR = "speech_snr_db"
        }
    }

    func readDescription() throws -> Description {
        let shown = path("corpus.json")
        guard let data = FileManager.default.contents(atPath: shown) else {
            throw TextFileError(file: shown, "cannot be read (missing or not a file)")
        }
        let description: Description
        do {
            description = try JSONDecoder().decode(Description.self, from: data)
        } catch let error as DecodingError {
            throw TextFileError(file: shown, Self.explain(error))
        } catch {
            throw TextFileError(file: shown, "is not valid JSON")
        }
        guard description.format == "hearalert-corpus" else {
            throw TextFileError(file: shown, "format is \"\(description.format)\", expected \"hearalert-corpus\"")
        }
        guard description.unlabelled != true else {
            throw TextFileError(file: shown, "marks an unlabelled set (\"unlabelled\": true: sound effects without "
                + "trusted events, for train.py --distill only); it cannot be evaluated")
        }
        guard description.version == 1 else {
            throw TextFileError(file: shown, "version \(description.version) is not supported (this reader knows 1)")
        }
        guard description.sampleRate > 0 else {
            throw TextFileError(file: shown, "sample_rate must be positive, found \(description.sampleRate)")
        }
        guard !description.labels.isEmpty else { throw TextFileError(file: shown, "labels must not be empty") }
        var seen = Set<String>()
        for label in description.labels {
            guard !label.isEmpty, !label.contains(where: \.isWhitespace) else {
                throw TextFileError(file: shown, "label \(TabSeparatedTable.show(label)) is empty or contains white space")
            }
            guard seen.insert(label).inserted else { throw TextFileError(file: shown, "label \"\(label)\" is listed twice") }
        }
        return description
    }

    /// One line per decoding failure: which key, and what was wrong with it.
    static func explain(_ error: DecodingError) -> String {
        func key(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "the top level" : "\"" + path.map { $0.intValue.map(String.init) ?? $0.stringValue }
                .joined(separator: ".") + "\""
        }
        switch error {
        case .keyNotFound(let missing, let context):
            return "missing \(key(context.codingPath + [missing]))"
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "\(key(context.codingPath)) must be \(type)"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "is not valid JSON" : "\(key(context.codingPath)) is malformed"
        @unknown default:
            return "cannot be decoded"
        }
    }

    func recordedSNRs(_ extras: [String: FileExtras]?, listed listing: FileListing) throws -> [String: RecordedSNR] {
        guard let extras else { return [:] }
        var snrs: [String: RecordedSNR] = [:]
        for (name, entry) in extras {
            guard listing.index[name] != nil else {
                throw TextFileError(file: path("corpus.json"), "files entry \"\(name)\" is not listed in files.tsv")
            }
            snrs[name] = RecordedSNR(alertDB: entry.alertSNR, speechDB: entry.speechSNR)
        }
        return snrs
    }

    // MARK: files.tsv

    struct FileListing {
        /// One row: the file's name, its listed duration and its line in `files.tsv`.
        typealias Entry = (name: String, duration: Double, line: Int)

        var entries: [Entry] = []
        /// Name → position in `entries`.
        var index: [String: Int] = [:]
    }

    func readFileList() throws -> FileListing {
        let table = try TabSeparatedTable(path: path("files.tsv"), displayPath: path("files.tsv"),
                                          header: ["filename", "duration"])
        guard !table.rows.isEmpty else { throw TextFileError(file: path("files.tsv"), "lists no files") }
        var listing = FileListing()
        var lineOf: [String: Int] = [:]
        for row in table.rows {
            let name = row.fields[0]
            try requireRelativeName(name, table: table, row: row)
            let duration = try table.seconds(row.fields[1], column: "duration", row: row)
            guard duration > 0 else { throw table.error(row, "duration must be positive, found \(row.fields[1])") }
            if let earlier = lineOf[name] { throw table.error(row, "\"\(name)\" is already listed on line \(earlier)") }
            lineOf[name] = row.line
            listing.index[name] = listing.entries.count
            listing.entries.append((name, duration, row.line))
        }
        return listing
    }

    /// Names stay inside `audio/`: relative, no `..`, no empty components.
    private func requireRelativeName(_ name: String, table: TabSeparatedTable, row: TabSeparatedTable.Row) throws {
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, !name.hasPrefix("/"), !components.contains(where: { $0.isEmpty || $0 == ".." }) else {
            throw table.error(row, "filename \(TabSeparatedTable.show(name)) must be a relative path inside audio/")
        }
    }

    func requireAudio(_ entry: FileListing.Entry, in folder: String) throws {
        var isDirectory: ObjCBool = false
        let audio = path(folder + "/" + entry.name)
        guard FileManager.default.fileExists(atPath: audio, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw TextFileError(file: path("files.tsv"), line: entry.line, "\"\(entry.name)\" has no audio file at \(audio)")
        }
    }

    // MARK: annotations.tsv

    /// An event in a particular file: the same event in two files is two events, in one file a repeated row.
    private struct EventKey: Hashable {
        let file: String
        let event: SoundEvent
    }

    func readAnnotations(listing: FileListing, labels: [String]) throws -> [String: [SoundEvent]] {
        let table = try TabSeparatedTable(path: path("annotations.tsv"), displayPath: path("annotations.tsv"),
                                          header: ["filename", "onset", "offset", "event_label"])
        let vocabulary = Set(labels)
        var events: [String: [SoundEvent]] = [:]
        var lineOf: [EventKey: Int] = [:]
        for row in table.rows {
            let name = row.fields[0]
            guard let position = listing.index[name] else {
                throw table.error(row, "\"\(name)\" is not listed in files.tsv")
            }
            let onset = try table.seconds(row.fields[1], column: "onset", row: row)
            let offset = try table.seconds(row.fields[2], column: "offset", row: row)
            let label = row.fields[3]
            guard vocabulary.contains(label) else {
                throw table.error(row, "label \(TabSeparatedTable.show(label)) is not in corpus.json's labels (\(labels.joined(separator: ", ")))")
            }
            guard onset >= 0 else { throw table.error(row, "onset \(row.fields[1]) is negative") }
            guard onset < offset else {
                throw table.error(row, "onset \(row.fields[1]) is not before offset \(row.fields[2])")
            }
            let duration = listing.entries[position].duration
            guard offset <= duration + Corpus.durationTolerance else {
                throw table.error(row, "offset \(row.fields[2]) is past the end of \"\(name)\" (\(duration) s in files.tsv)")
            }
            let event = SoundEvent(label: label, onset: onset, offset: offset)
            let key = EventKey(file: name, event: event)
            if let earlier = lineOf[key] { throw table.error(row, "repeats the event on line \(earlier)") }
            lineOf[key] = row.line
            events[name, default: []].append(event)
        }
        return events
    }
}
