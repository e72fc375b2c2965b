import CSndfile
import Foundation

/// The one owner of a libsndfile handle: opens, reports errors as `AudioFileError`, closes on deinit.
final class SoundFile {
    let path: String
    let info: SF_INFO
    private var handle: OpaquePointer?

    /// Opens for reading, checking first what libsndfile would only report vaguely (missing, directory).
    init(readingFrom path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw AudioFileError.notFound(path: path)
        }
        if isDirectory.boolValue { throw AudioFileError.isDirectory(path: path) }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw AudioFileError.unreadable(path: path, reason: "permission denied")
        }
        var info = SF_INFO()
        guard let opened = sf_open(path, Int32(SFM_READ), &info) else {
            let message = Self.message(sf_strerror(nil))
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
            if size == 0 { throw AudioFileError.empty(path: path) }
            throw AudioFileError.unsupported(path: path, reason: message)
        }
        self.path = path
        self.info = info
        self.handle = opened
        guard info.channels >= 1, info.samplerate >= 1 else {
            throw AudioFileError.unsupported(path: path, reason: "\(info.channels) channels at \(info.samplerate) Hz")
        }
        if let problem = Self.truncation(inLog: Self.log(of: opened)) {
            throw AudioFileError.truncated(path: path, reason: problem)
        }
        if info.frames <= 0 { throw AudioFileError.empty(path: path) }
    }

    /// Frames the header promises, or nil when the format does not say (`SF_COUNT_MAX`, e.g. a streamed OGG).
    var promisedFrames: Int? { info.frames == sf_count_t.max ? nil : Int(info.frames) }

    /// libsndfile opens a cut-off file without an error and only notes it in its log (a WAV/AIFF data chunk
    /// "(should be" shorter, an Ogg stream without its end marker), then returns fewer frames than promised.
    /// A header length of 0 or 0x7FFFFFFF/0xFFFFFFFF is the sentinel tools write when streaming to a pipe
    /// (arecord, sox -), not a truncation, so those files are accepted.
    static func truncation(inLog log: String) -> String? {
        for line in log.split(whereSeparator: \.isNewline) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.contains("ended unexpectedly") { return "the stream ends before its end-of-stream marker" }
            guard text.hasPrefix("data") || text.hasPrefix("SSND"), text.contains("(should be") else { continue }
            let numbers = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            guard numbers.count >= 2 else { continue }
            let (claimed, present) = (numbers[0], numbers[1])
            let streamingSentinels = [0, 0x7FFF_FFFF, 0xFFFF_FFFF, 0x7FFF_F000, 0xFFFF_FFFF - 8]
            if claimed > present && !streamingSentinels.contains(claimed) {
                return "the header promises \(claimed) bytes of audio, the file holds \(present)"
            }
        }
        return nil
    }

    /// libsndfile's message as one line (some of its messages span several); a system error is the system's
    /// own words ("System error : File too large." reads "File too large").
    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown libsndfile error" }
        let line = AudioFileError.oneLine(String(cString: text))
        let system = "System error : "
        guard line.hasPrefix(system) else { return line }
        let reason = line.dropFirst(system.count)
        return String(reason.hasSuffix(".") ? reason.dropLast() : reason)
    }

    private static func log(of handle: OpaquePointer) -> String {
        var text = [CChar](repeating: 0, count: 8_192)
        let length = text.withUnsafeMutableBufferPointer {
            sf_command(handle, Int32(SFC_GET_LOG_INFO), $0.baseAddress, Int32($0.count))
        }
        return length > 0 ? String(decoding: text.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }

    /// Writes a mono file in the given libsndfile format through `descriptor`, which stays the caller's to close;
    /// `path` names the file in errors.
    init(writingTo descriptor: Int32, path: String, sampleRate: Int, format: Int32) throws {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = 1
        info.format = format
        guard let opened = sf_open_fd(descriptor, Int32(SFM_WRITE), &info, Int32(SF_FALSE)) else {
            throw AudioFileError.cannotWrite(path: path, reason: Self.message(sf_strerror(nil)))
        }
        self.path = path
        self.info = info
        self.handle = opened
        // Float samples beyond ±1 clip instead of wrapping around when stored as integers.
        sf_command(opened, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        // No PEAK chunk in float files: it stamps the time of writing, so the same samples written twice made
        // different bytes, and a file's checksum said nothing about its audio.
        sf_command(opened, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
    }

    deinit { _ = try? close() }

    /// Reads up to `frames` interleaved frames; 0 at the end. A libsndfile decoding error is `truncated`.
    func readFrames(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws -> Int {
        guard let handle else { return 0 }
        let count = Int(sf_readf_float(handle, buffer, sf_count_t(frames)))
        let status = sf_error(handle)
        if status != 0 {
            throw AudioFileError.truncated(path: path, reason: Self.message(sf_strerror(handle)))
        }
        return max(count, 0)
    }

    func writeFrames(_ buffer: UnsafePointer<Float>, frames: Int) throws {
        guard let handle else { throw AudioFileError.cannotWrite(path: path, reason: "already closed") }
        let written = Int(sf_writef_float(handle, buffer, sf_count_t(frames)))
        if written != frames {
            throw AudioFileError.cannotWrite(path: path, reason: Self.message(sf_strerror(handle)))
        }
    }

    /// Closes once; later calls do nothing. A failure to flush is an error (the file may be incomplete).
    func close() throws {
        guard let handle else { return }
        self.handle = nil
        let status = sf_close(handle)
        if status != 0 {
            throw AudioFileError.cannotWrite(path: path, reason: Self.message(sf_error_number(status)))
        }
    }
}
