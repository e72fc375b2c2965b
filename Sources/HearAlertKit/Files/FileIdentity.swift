import Foundation

/// A file as the system knows it, whatever it is called: `stat`'s device and inode numbers. Two paths with the
/// same identity are one file — the same path spelled differently, a symlink to it, or a hard link — which a
/// comparison of path strings cannot tell.
public struct FileIdentity: Hashable, Sendable {
    /// `st_dev`: the file system.
    public let device: UInt64
    /// `st_ino`: the file within it.
    public let inode: UInt64

    /// The identity of what `path` names, following symlinks; nil when nothing is there (yet).
    public init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}

/// A file a command reads, with the words a message uses for it ("input file", "model file"): an output must
/// never be one of these under any name.
public struct CommandInput: Sendable, Equatable {
    /// How a message names the input's role, e.g. "--alert-intervals file".
    public let role: String
    /// The path as the person gave it.
    public let path: String

    public init(role: String, path: String) {
        self.role = role
        self.path = path
    }

    /// The first of `inputs` that `output` would overwrite (the same file by identity), if any.
    public static func overwritten(by output: String, among inputs: [CommandInput]) -> CommandInput? {
        guard let target = FileIdentity(path: output) else { return nil }
        return inputs.first { FileIdentity(path: $0.path) == target }
    }
}

/// `path` with every symlink and `.`/`..` resolved (`realpath`), or nil when it does not exist.
func resolvingSymlinks(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}
