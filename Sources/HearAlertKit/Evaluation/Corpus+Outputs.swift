import Foundation

extension Corpus {
    /// The files every corpus has (shared/docs/CORPUS.md).
    static let metadataFiles = ["corpus.json", "files.tsv", "annotations.tsv"]
    /// The folders of audio a corpus may have.
    static let audioFolders = ["audio", "clean", "alerts"]

    /// Refuses `path` as an output when writing it would change this corpus: one of its own files under any name
    /// (a symlink, a hard link), or any new file in one of its audio folders. The next run would fail on, or
    /// silently score, a different corpus than the one described.
    public func checkNotOwnFile(_ path: String) throws(OutputFileError) {
        let audio = files.flatMap { file in
            Self.audioFolders.map { "\($0)/\(file.name)" }.filter { FileManager.default.fileExists(atPath: self.path($0)) }
        }
        let own = (Self.metadataFiles + audio).map { CommandInput(role: $0, path: self.path($0)) }
        if let hit = CommandInput.overwritten(by: path, among: own) {
            throw .insideCorpus(path: path, corpus: directory, entry: hit.role)
        }
        // A file that does not exist yet, by where it would land.
        guard let landing = Self.resolvedLocation(of: path) else { return }
        for entry in Self.metadataFiles + Self.audioFolders {
            guard let resolved = resolvingSymlinks(self.path(entry)) else { continue }
            if landing == resolved || landing.hasPrefix(resolved + "/") {
                throw .insideCorpus(path: path, corpus: directory,
                                    entry: Self.audioFolders.contains(entry) ? entry + "/" : entry)
            }
        }
    }

    /// Where a file at `path` would be: its folder with symlinks resolved, and its own name.
    private static func resolvedLocation(of path: String) -> String? {
        let folder = (path as NSString).deletingLastPathComponent
        return resolvingSymlinks(folder.isEmpty ? "." : folder).map { ($0 as NSString).appendingPathComponent(
            (path as NSString).lastPathComponent) }
    }
}
