import Foundation
import HearAlertKit

/// A small corpus written to a fresh temporary directory, edited per test to be valid or broken in one way.
/// Audio files are empty placeholders (the corpus reader only checks they exist) unless `signal` gives samples,
/// which are written as 16 kHz 16-bit WAV.
struct TemporaryCorpus {
    var description = """
        {"format": "hearalert-corpus", "version": 1, "sample_rate": 16000,
         "labels": ["siren", "car_horn", "doorbell"], "generator": "test", "seed": 7,
         "files": {"a.wav": {"alert_snr_db": 3.5, "speech_snr_db": 10.25, "room": null},
                   "b.wav": {"alert_snr_db": null, "speech_snr_db": -2.0}}}
        """
    var files = "filename\tduration\na.wav\t10.000\nb.wav\t4.5\nc.wav\t2\n"
    var annotations = "filename\tonset\toffset\tevent_label\na.wav\t1.000\t3.500\tsiren\na.wav\t2.0\t10.005\tcar_horn\n"
    var audio = ["a.wav", "b.wav", "c.wav"]
    var clean: [String]? = nil
    var alerts: [String]? = nil
    /// Samples for (folder, file name), or nil for an empty placeholder.
    var signal: (_ folder: String, _ name: String) -> [Float]? = { _, _ in nil }

    /// Writes the corpus and returns its directory.
    func write() throws -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("hearalert-corpus-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try description.write(toFile: directory + "/corpus.json", atomically: true, encoding: .utf8)
        try files.write(toFile: directory + "/files.tsv", atomically: true, encoding: .utf8)
        try annotations.write(toFile: directory + "/annotations.tsv", atomically: true, encoding: .utf8)
        for (folder, names) in [("audio", audio), ("clean", clean), ("alerts", alerts)] {
            guard let names else { continue }
            try FileManager.default.createDirectory(atPath: directory + "/" + folder, withIntermediateDirectories: true)
            for name in names {
                let path = directory + "/\(folder)/" + name
                if let samples = signal(folder, name) {
                    let writer = try AudioFileWriter(path: path, sampleRate: 16000)
                    try samples.withUnsafeBufferPointer { try writer.write($0) }
                    try writer.close()
                } else {
                    _ = FileManager.default.createFile(atPath: path, contents: Data())
                }
            }
        }
        return directory
    }
}
