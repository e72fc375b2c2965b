import Foundation
import Testing
@testable import HearAlertKit

@Suite struct CorpusReaderTests {
    @Test func readsAValidCorpusWithItsExtras() throws {
        var layout = TemporaryCorpus()
        layout.clean = layout.audio
        let directory = try layout.write()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let corpus = try Corpus.load(directory: directory)
        #expect(corpus.sampleRate == 16000)
        #expect(corpus.labels == ["siren", "car_horn", "doorbell"])
        #expect(corpus.files.map(\.name) == ["a.wav", "b.wav", "c.wav"])
        #expect(corpus.files.map(\.duration) == [10, 4.5, 2])
        #expect(corpus.files[0].events == [SoundEvent(label: "siren", onset: 1, offset: 3.5),
                                           SoundEvent(label: "car_horn", onset: 2, offset: 10.005)])
        #expect(corpus.files[1].events.isEmpty)
        #expect(corpus.files[0].snr == RecordedSNR(alertDB: 3.5, speechDB: 10.25))
        #expect(corpus.files[1].snr == RecordedSNR(alertDB: nil, speechDB: -2))
        #expect(corpus.files[2].snr == RecordedSNR())
        #expect(corpus.hasCleanSpeech && !corpus.hasAlertStems)
        #expect(corpus.duration == 16.5)
        #expect(corpus.audioPath(of: corpus.files[0]) == directory + "/audio/a.wav")
    }

    @Test func toleratesACorpusWithoutSNRsOrTrailingNewline() throws {
        var layout = TemporaryCorpus()
        layout.description = #"{"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": ["siren"]}"#
        layout.annotations = "filename\tonset\toffset\tevent_label\na.wav\t1\t2\tsiren"
        let directory = try layout.write()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let corpus = try Corpus.load(directory: directory)
        #expect(corpus.files.allSatisfy { $0.snr == RecordedSNR() })
        #expect(corpus.files[0].events.count == 1)
    }

    /// One way to break the corpus, and where the error must point.
    struct Breakage: CustomTestStringConvertible, Sendable {
        let name: String
        let expected: String
        let edit: @Sendable (inout TemporaryCorpus) -> Void
        var testDescription: String { name }
    }

    static let breakages: [Breakage] = [
        Breakage(name: "wrong format", expected: "corpus.json: format is \"dcase\"") {
            $0.description = $0.description.replacingOccurrences(of: "hearalert-corpus", with: "dcase")
        },
        Breakage(name: "unlabelled set", expected: "corpus.json: marks an unlabelled set") {
            $0.description = $0.description.replacingOccurrences(of: "\"version\": 1", with: "\"version\": 1, \"unlabelled\": true")
        },
        Breakage(name: "unknown version", expected: "corpus.json: version 2 is not supported") {
            $0.description = $0.description.replacingOccurrences(of: "\"version\": 1", with: "\"version\": 2")
        },
        Breakage(name: "missing sample rate", expected: "corpus.json: missing \"sample_rate\"") {
            $0.description = $0.description.replacingOccurrences(of: "\"sample_rate\": 16000,", with: "")
        },
        Breakage(name: "labels not strings", expected: "corpus.json: \"labels.1\" must be String") {
            $0.description = $0.description.replacingOccurrences(of: "\"car_horn\"", with: "3")
        },
        Breakage(name: "duplicate label", expected: "corpus.json: label \"siren\" is listed twice") {
            $0.description = $0.description.replacingOccurrences(of: "\"doorbell\"", with: "\"siren\"")
        },
        Breakage(name: "not JSON", expected: "corpus.json: is not valid JSON") { $0.description = "{labels" },
        Breakage(name: "SNR not a number", expected: "corpus.json: \"files.a.wav.alert_snr_db\" must be Double") {
            $0.description = $0.description.replacingOccurrences(of: "3.5", with: "\"loud\"")
        },
        Breakage(name: "SNR for unlisted file", expected: "corpus.json: files entry \"b.wav\" is not listed") {
            $0.files = "filename\tduration\na.wav\t10.000\nc.wav\t2\n"
            $0.audio = ["a.wav", "c.wav"]
        },
        Breakage(name: "files header", expected: "files.tsv:1: header must be exactly \"filename<TAB>duration\"") {
            $0.files = $0.files.replacingOccurrences(of: "duration", with: "length")
        },
        Breakage(name: "files header with extra column", expected: "files.tsv:1: header") {
            $0.files = $0.files.replacingOccurrences(of: "duration\n", with: "duration\tsnr\n")
        },
        Breakage(name: "bad duration", expected: "files.tsv:3: duration \"4,5\" is not a decimal number") {
            $0.files = $0.files.replacingOccurrences(of: "4.5", with: "4,5")
        },
        Breakage(name: "nan duration", expected: "files.tsv:3: duration \"nan\" is not a decimal number") {
            $0.files = $0.files.replacingOccurrences(of: "4.5", with: "nan")
        },
        Breakage(name: "zero duration", expected: "files.tsv:4: duration must be positive") {
            $0.files = $0.files.replacingOccurrences(of: "c.wav\t2", with: "c.wav\t0")
        },
        Breakage(name: "missing field", expected: "files.tsv:3: expected 2 tab-separated fields") {
            $0.files = $0.files.replacingOccurrences(of: "b.wav\t4.5", with: "b.wav 4.5")
        },
        Breakage(name: "empty line", expected: "files.tsv:3: empty line") {
            $0.files = $0.files.replacingOccurrences(of: "b.wav\t4.5\n", with: "\nb.wav\t4.5\n")
        },
        Breakage(name: "no files", expected: "files.tsv: lists no files") {
            $0.files = "filename\tduration\n"
            $0.annotations = "filename\tonset\toffset\tevent_label\n"
            $0.description = #"{"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": ["siren"]}"#
        },
        Breakage(name: "Windows line ending", expected: "files.tsv:3: carriage return (CRLF line ending); use LF") {
            $0.files = $0.files.replacingOccurrences(of: "b.wav\t4.5\n", with: "b.wav\t4.5\r\n")
        },
        Breakage(name: "duplicate file", expected: "files.tsv:4: \"a.wav\" is already listed on line 2") {
            $0.files = $0.files.replacingOccurrences(of: "c.wav\t2", with: "a.wav\t2")
        },
        Breakage(name: "escaping path", expected: "files.tsv:4: filename \"../c.wav\" must be a relative path") {
            $0.files = $0.files.replacingOccurrences(of: "c.wav", with: "../c.wav")
        },
        Breakage(name: "missing audio", expected: "files.tsv:4: \"c.wav\" has no audio file") {
            $0.audio = ["a.wav", "b.wav"]
        },
        Breakage(name: "missing clean counterpart", expected: "files.tsv:3: \"b.wav\" has no audio file at") {
            $0.clean = ["a.wav", "c.wav"]
        },
        Breakage(name: "annotations header", expected: "annotations.tsv:1: header must be exactly") {
            $0.annotations = $0.annotations.replacingOccurrences(of: "event_label", with: "label")
        },
        Breakage(name: "unlisted file", expected: "annotations.tsv:3: \"z.wav\" is not listed in files.tsv") {
            $0.annotations = $0.annotations.replacingOccurrences(of: "a.wav\t2.0", with: "z.wav\t2.0")
        },
        Breakage(name: "unknown label", expected: "annotations.tsv:2: label \"dog_bark\" is not in corpus.json's labels") {
            $0.annotations = $0.annotations.replacingOccurrences(of: "siren", with: "dog_bark")
        },
        Breakage(name: "negative onset", expected: "annotations.tsv:2: onset -1.000 is negative") {
            $0.annotations = $0.annotations.replacingOccurrences(of: "1.000", with: "-1.000")
        },
        Breakage(name: "onset after offset", expected: "annotations.tsv:2: onset 4.0 is not before offset 3.500") {
            $0.annotations = $0.annotations.replacingOccurrences(of: "1.000", with: "4.0")
        },
        Breakage(name: "zero-length event", expected: "annotations.tsv:2: onset 3.500 is not before offset 3.500") {
            $0.annotations = $0.annotations.replacingOccurrences(of: "1.000", with: "3.500")
        },
        Breakage(name: "offset past the end", expected: "annotations.tsv:3: offset 10.02 is past the end of \"a.wav\"") {
            $0.annotations = $0.annotations.replacingOccurrences(of: "10.005", with: "10.02")
        },
        Breakage(name: "repeated event", expected: "annotations.tsv:3: repeats the event on line 2") {
            $0.annotations = "filename\tonset\toffset\tevent_label\na.wav\t1\t2\tsiren\na.wav\t1.0\t2.0\tsiren\n"
        },
        Breakage(name: "no annotations file", expected: "annotations.tsv: cannot be read") {
            $0.annotations = ""
        },
    ]

    @Test(arguments: breakages)
    func rejectsABrokenCorpusNamingFileAndLine(_ breakage: Breakage) throws {
        var layout = TemporaryCorpus()
        breakage.edit(&layout)
        let directory = try layout.write()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if layout.annotations.isEmpty { try FileManager.default.removeItem(atPath: directory + "/annotations.tsv") }
        do {
            _ = try Corpus.load(directory: directory)
            Issue.record("\(breakage.name): the corpus was accepted")
        } catch let error as TextFileError {
            #expect(error.description.hasPrefix(directory + "/"), "\(error)")
            #expect(error.description.contains(breakage.expected), "\(error)")
        }
    }
}
