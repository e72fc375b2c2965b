import Foundation

/// Finds the bundled models (the detector, `default.safetensors`, and the enhancer's noise estimator,
/// `noise.safetensors`) without making people run `hearalert` from the repository root.
///
/// A listener starts `hearalert listen` from wherever their terminal is, and finds the binary through `PATH` or a
/// symbolic link; neither the working directory nor `argv[0]` (then just `hearalert`) says where the model is.
/// The executable's real path does (`/proc/self/exe`, every link resolved), and the places tried, in order, are:
/// 1. `models/<file>` in the working directory (a checkout you are working in);
/// 2. `<prefix>/share/hearalert/<file>` for an executable at `<prefix>/bin/hearalert`
///    (what `tools/install.sh --prefix <prefix>` lays out);
/// 3. `<checkout>/models/<file>` for an executable built inside `<checkout>/.build/`.
enum BundledModel {
    /// The alert detector's file name.
    static let detector = "default.safetensors"
    /// The learned noise estimator's file name.
    static let noiseEstimator = "noise.safetensors"

    /// The model's path inside a checkout, tried in the working directory first.
    static func relativePath(_ file: String) -> String { "models/\(file)" }
    /// The model's path under an install prefix (beside `<prefix>/bin/hearalert`).
    static func installedPath(_ file: String) -> String { "share/hearalert/\(file)" }

    /// The first place that holds `file`, or nil with every place tried (for the error).
    static func resolve(_ file: String = detector, executablePath: String? = executablePath())
        -> (path: String?, tried: [String]) {
        let tried = candidates(file, executablePath: executablePath)
        return (tried.first { FileManager.default.fileExists(atPath: $0) }, tried)
    }

    /// The places `resolve` tries, in order; without a known executable path, only the working directory.
    static func candidates(_ file: String, executablePath: String?) -> [String] {
        var found = [relativePath(file)]
        guard let executablePath else { return found }
        let folder = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        if folder.lastPathComponent == "bin" {
            found.append(folder.deletingLastPathComponent().appendingPathComponent(installedPath(file)).path)
        }
        // A build is .build/<configuration>/ or .build/<triple>/<configuration>/ below its checkout.
        let components = folder.pathComponents
        if let build = components.lastIndex(of: ".build"), build > 0 {
            let checkout = NSString.path(withComponents: Array(components[..<build]))
            found.append((checkout as NSString).appendingPathComponent(relativePath(file)))
        }
        return found
    }

    /// This process's executable with every symbolic link resolved: `/proc/self/exe` on Linux; where that is
    /// missing, `argv[0]` when it names a path, else the first match on `PATH`; nil when none is found.
    static func executablePath() -> String? {
        if let real = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return real
        }
        let invoked = CommandLine.arguments.first ?? ""
        if invoked.contains("/") { return invoked }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").map { "\($0)/\(invoked)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
}
