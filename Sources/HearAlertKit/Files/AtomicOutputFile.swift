import Foundation

/// One result file, written whole or not at all: the one way every command writes its outputs (WAV, .npy, JSON,
/// TSV).
///
/// It is written under a temporary name in the destination's own folder (`.NAME.partial-XXXXXX`) and renamed
/// onto the destination by `commit()`. A rename within one file system is atomic, so whoever reads the
/// destination finds the previous file or the complete new one — never a truncated file, not when the disk fills,
/// the command fails half-way or is stopped by a signal. `discard()` (or releasing an uncommitted file) removes the
/// temporary file, and so does SIGINT, SIGTERM or SIGHUP while it is open (`TemporaryFileCleanup`).
///
/// Opening one is also the check that the destination can be written at all, so a command opens its outputs
/// before its work and fails in one line, not after an hour of evaluation. A destination that is a device or a
/// FIFO (`/dev/null`, a pipe someone reads) is written in place: it cannot be replaced, and it keeps nothing.
/// Not for concurrent use; it may be handed between threads.
public final class AtomicOutputFile {
    /// The destination, as given: what messages name.
    public let path: String
    /// The open file to write through (the temporary file, or the device itself); owned by this object.
    public let descriptor: Int32
    /// The temporary file, or nil when writing a device in place.
    private let temporaryPath: String?
    /// What `commit()` replaces: the destination with symlinks resolved, so that a link keeps pointing at the
    /// new file instead of being replaced by it.
    private let destination: String
    private var isOpen = true

    /// Opens the output at `path`, refusing one that would overwrite any of `inputs` (under any name).
    public init(path: String, protecting inputs: [CommandInput] = []) throws(OutputFileError) {
        try OutputFileError.checkNotInput(path, inputs: inputs)
        self.path = path
        var status = stat()
        let exists = stat(path, &status) == 0
        let kind = status.st_mode & S_IFMT
        if exists && kind == S_IFDIR { throw .isFolder(path: path) }
        if exists && kind != S_IFREG {
            let opened = open(path, O_WRONLY | O_CLOEXEC)
            guard opened >= 0 else { throw .system(errno, path: path) }
            descriptor = opened
            temporaryPath = nil
            destination = path
            return
        }
        destination = exists ? resolvingSymlinks(path) ?? path : path
        let (opened, temporary) = try Self.createTemporary(beside: destination, naming: path)
        // A replaced file keeps its permissions, as it would have if it had been written in place.
        if exists { _ = fchmod(opened, status.st_mode & 0o7777) }
        descriptor = opened
        temporaryPath = temporary
        TemporaryFileCleanup.shared.register(temporary)
    }

    deinit { discard() }

    /// Writes all of `data` at the current position.
    public func write(_ data: Data) throws(OutputFileError) {
        let failure: Int32? = data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        if let failure { throw .system(failure, path: path) }
    }

    /// Puts the finished file in place of the destination (on disk before the call returns); later calls do
    /// nothing. On failure the temporary file is removed and the destination is as it was.
    public func commit() throws(OutputFileError) {
        guard isOpen else { return }
        isOpen = false
        guard let temporaryPath else {
            if close(descriptor) != 0 && errno != EINTR { throw .system(errno, path: path) }
            return
        }
        defer { TemporaryFileCleanup.shared.unregister(temporaryPath) }
        // fsync first: after a crash, the renamed file must not turn out empty (delayed allocation).
        var failure: Int32?
        if fsync(descriptor) != 0 { failure = errno }
        if close(descriptor) != 0 && failure == nil && errno != EINTR { failure = errno }
        if failure == nil && rename(temporaryPath, destination) != 0 { failure = errno }
        if let failure {
            unlink(temporaryPath)
            throw .system(failure, path: path)
        }
        let folder = open(Self.folder(of: destination), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }

    /// Abandons the output: the temporary file is removed and the destination left as it was. Later calls (and
    /// `commit()`) do nothing.
    public func discard() {
        guard isOpen else { return }
        isOpen = false
        close(descriptor)
        if let temporaryPath {
            unlink(temporaryPath)
            TemporaryFileCleanup.shared.unregister(temporaryPath)
        }
    }

    /// Writes `data` as the whole file at `path`, atomically.
    public static func write(_ data: Data, to path: String, protecting inputs: [CommandInput] = []) throws(OutputFileError) {
        let output = try AtomicOutputFile(path: path, protecting: inputs)
        try output.write(data)
        try output.commit()
    }

    /// Opens `.NAME.partial-XXXXXX` beside `destination`, new (O_EXCL), with the permissions a new file gets.
    private static func createTemporary(beside destination: String, naming path: String) throws(OutputFileError)
        -> (Int32, String) {
        // The name stays within NAME_MAX (255 bytes) however long the destination's is.
        let name = String((destination as NSString).lastPathComponent.utf8.prefix(200)) ?? "output"
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        for _ in 0..<100 {
            let suffix = String((0..<6).map { _ in letters.randomElement()! })
            let temporary = (folder(of: destination) as NSString).appendingPathComponent(".\(name).partial-\(suffix)")
            let opened = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if opened >= 0 { return (opened, temporary) }
            if errno != EEXIST { throw .system(errno, path: path) }
        }
        throw .system(EEXIST, path: path)
    }

    private static func folder(of path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }
}
