import Foundation

/// What tests of the commands' outputs need of a scratch folder: copies of fixtures, the other names (symlinks,
/// hard links) a person might give for one of them, and a look at everything left in it.
extension ScratchFolder {
    /// Copies `source` into the folder as `name` and returns the copy's path.
    @discardableResult
    func copy(_ source: String, as name: String) throws -> String {
        try FileManager.default.copyItem(atPath: source, toPath: path(name))
        return path(name)
    }

    /// Another way to name the file at `target`, as `name` in this folder where a new entry is needed.
    enum Alias: String, CaseIterable, Sendable {
        /// The same path, spelled differently (`folder/./name`).
        case samePath
        case symlink
        case hardLink
    }

    func alias(_ kind: Alias, of target: String, as name: String) throws -> String {
        switch kind {
        case .samePath:
            let url = URL(fileURLWithPath: target)
            return url.deletingLastPathComponent().path + "/./" + url.lastPathComponent
        case .symlink:
            try FileManager.default.createSymbolicLink(atPath: path(name), withDestinationPath: target)
        case .hardLink:
            try FileManager.default.linkItem(atPath: target, toPath: path(name))
        }
        return path(name)
    }

    /// The folder's entries, hidden ones included: nothing half-written may be left behind.
    var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    /// Removes the folder now (its `deinit` would too, but a `defer` that calls this also keeps it alive until
    /// the end of the test's scope).
    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
