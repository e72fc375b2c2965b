import Foundation
import Testing
@testable import HearAlertKit

/// Command lines a new user or a hostile tester types, each refused in one plain line (with the usage for a
/// usage error) and a non-zero exit, before any work starts and without a crash.
@Suite struct CommandLineRefusalTests {
    static let clip = DetectCommandTests.clip
    static let model = ListenEndToEndTests.model

    @Test(arguments: ["inf", "1e15", "nan", "0", "-1"])
    func aListenDurationOutOfRangeIsAUsageError(duration: String) throws {
        let result = try ListenEndToEndTests.failingListen(["--device", "null", "--duration", duration])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: --duration must be a positive number of seconds up to 1000000000 "
                                        + "(leave it out to listen until stopped); got "), "\(result.stderr)")
    }

    @Test func theSampleLimitNeverTraps() {
        let rate = 16_000
        #expect(ListenConfiguration(maxDuration: 2.5).sampleLimit(sampleRate: rate) == 40_000)
        #expect(ListenConfiguration(maxDuration: nil).sampleLimit(sampleRate: rate) == .max)
        for beyond in [Double.infinity, 1e15, .nan, .greatestFiniteMagnitude] {
            #expect(ListenConfiguration(maxDuration: beyond).sampleLimit(sampleRate: rate) == .max)
        }
        #expect(ListenConfiguration(maxDuration: ListenConfiguration.longestDuration).sampleLimit(sampleRate: 96_000)
            == 96_000_000_000_000)
    }

    @Test func aHookThatIsADirectoryIsRefusedBeforeListening() throws {
        let folder = FileManager.default.temporaryDirectory.path
        #expect(!ProgramLauncher.canRun(folder))
        #expect(ProgramLauncher.canRun("/bin/sh") && ProgramLauncher.canRun("sh"))
        // With a duration, a listener that wrongly started still ends (and fails the test) instead of hanging it.
        let result = try ListenEndToEndTests.failingListen(["--device", "null", "--duration", "1", "--hook", folder])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: --hook: cannot run '\(folder)': no such executable file"),
                "\(result.stderr)")
    }

    @Test func hookOnWithoutAHookIsAUsageError() throws {
        let result = try ListenEndToEndTests.failingListen(["--device", "null", "--duration", "1", "--hook-on", "both"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: --hook-on needs a --hook to run\n"), "\(result.stderr)")
    }

    /// No such card: libasound's own complaint is dropped, and shown, as one of HearAlert's lines, with --verbose.
    @Test func withoutTheSoundCardListenSaysOneLine() throws {
        let device = "hw:CARD=hearalert_no_such_card"
        let quiet = try ListenEndToEndTests.failingListen(["--device", device])
        #expect(quiet.status == 1)
        #expect(quiet.stderr.hasPrefix("Error: cannot open audio device '\(device)' for capture: "), "\(quiet.stderr)")
        #expect(quiet.stderr.split(separator: "\n").count == 1, "\(quiet.stderr)")
        let verbose = try ListenEndToEndTests.failingListen(["--device", device, "--verbose"])
        #expect(verbose.status == 1)
        #expect(verbose.stderr.contains("hearalert: ALSA: ") && verbose.stderr.contains("hearalert_no_such_card\n"),
                "\(verbose.stderr)")
        #expect(!verbose.stderr.contains("ALSA lib"), "\(verbose.stderr)")
    }

    @Test func anEmptyHEARALERTMODELSaysSo() throws {
        let result = try runHearAlert(["HEARALERT_MODEL=", ListenEndToEndTests.binary, "detect", Self.clip],
                                      binary: "/usr/bin/env")
        #expect(result.status == 1)
        #expect(result.stderr == "Error: HEARALERT_MODEL is set but empty; set it to a model file, or unset it to "
            + "use the bundled model\n")
        let option = try runHearAlert(["detect", Self.clip, "--model", ""])
        #expect(option.status == 1)
        #expect(option.stderr == "Error: --model is empty; name a model file\n")
    }

    @Test func aNegativeThresholdIsRefusedForWhatItIs() throws {
        let result = try DetectCommandTests.detect([Self.clip, "--threshold", "-0.5"])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: invalid event-tracking setting: threshold -0.5 for siren is not between 0 "
            + "and 1\n", "\(result.stderr)")
        let labelled = try DetectCommandTests.detect([Self.clip, "--threshold", "-0.5", "--threshold", "siren=0.6"])
        #expect(labelled.stderr.contains("threshold -0.5 for smoke_alarm"), "\(labelled.stderr)")
    }

    /// A file name in Latin-1 (`\xff.wav`) cannot become a Swift String: it is named as what it is, not "missing".
    @Test func aFileNameThatIsNotUTF8IsNamedAsSuch() throws {
        let result = try runHearAlert(
            ["-c", #"exec "$0" detect "$1" "$(printf '\377.wav')""#, ListenEndToEndTests.binary, Self.clip],
            binary: "/bin/sh")
        #expect(result.status == 1)
        #expect(result.stderr == #"Error: argument 3 (\xff.wav) is not UTF-8 text; HearAlert can only name files "#
            + "whose names are UTF-8: rename it (e.g. convmv -f latin1 -t utf8)\n", "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// Every failure line starts as ArgumentParser's do, also for one input of several and for `model check`.
    @Test func errorLinesShareOnePrefix() throws {
        let detect = try DetectCommandTests.detect(["/nonexistent/missing.wav", Self.clip, "--format", "tsv"])
        #expect(detect.status == 1)
        #expect(detect.stderr.hasPrefix("Error: /nonexistent/missing.wav: "), "\(detect.stderr)")
        #expect(detect.stdout.contains("alerts_clip.wav\t"))
        let check = try runHearAlert(["model", "check", Self.clip])
        #expect(check.status == 1)
        #expect(check.stderr.hasPrefix("Error: \(Self.clip): not a safetensors model file"), "\(check.stderr)")
    }

    /// A one-file corpus of two seconds of silence, for `evaluate`.
    static func corpus() throws -> String {
        var layout = TemporaryCorpus()
        layout.description = #"{"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": ["siren"]}"#
        layout.files = "filename\tduration\nquiet.wav\t2.0\n"
        layout.annotations = "filename\tonset\toffset\tevent_label\n"
        layout.audio = ["quiet.wav"]
        layout.signal = { _, _ in [Float](repeating: 0, count: 32_000) }
        return try layout.write()
    }

    @Test func modelAndCompareTogetherAreAUsageError() throws {
        let corpus = try Self.corpus()
        defer { try? FileManager.default.removeItem(atPath: corpus) }
        let result = try runHearAlert(["evaluate", "--corpus", corpus, "--model", Self.model,
                                       "--compare", Self.model, Self.model])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: --model and --compare exclude each other: --compare names both "
                                        + "models\n"), "\(result.stderr)")
    }

    /// The second model is broken: the run fails at once with its reason, before the first is evaluated (which
    /// would print its progress on stderr).
    @Test func compareLoadsBothModelsBeforeEvaluatingEither() throws {
        let corpus = try Self.corpus()
        defer { try? FileManager.default.removeItem(atPath: corpus) }
        let result = try runHearAlert(["evaluate", "--corpus", corpus, "--compare", Self.model, Self.clip])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: \(Self.clip): not a safetensors model file"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
