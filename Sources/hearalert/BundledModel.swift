import Foundation

/// Finds the default model without making people run `hearalert` from the repository root.
///
/// A listener starts `hearalert listen` from wherever their terminal is; a relative `models/default.safetensors`
/// would then find nothing. The places tried, in order: the working directory's `models/` (a checkout), the
/// checkout the executable was built in (`.build/<triple>/release/hearalert` lies three levels below it), and
/// an installed layout (`<prefix>/bin/hearalert` beside `<prefix>/share/hearalert/default.safetensors`).
enum BundledModel {
    /// The path shown in `--help` and used when no candidate exists (so the error names what was expected).
    static let relativePath = "models/default.safetensors"

    /// The first candidate that exists, else `relativePath`.
    static func resolve(executablePath: String = CommandLine.arguments[0]) -> String {
        candidates(executablePath: executablePath).first { FileManager.default.fileExists(atPath: $0) }
            ?? relativePath
    }

    static func candidates(executablePath: String) -> [String] {
        let executable = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        var found = [relativePath]
        // The build directory sits at most a few levels below the checkout: .build/<triple>/<configuration>/.
        for _ in 0..<4 {
            found.append(directory.appendingPathComponent(relativePath).path)
            directory = directory.deletingLastPathComponent()
        }
        let prefix = executable.deletingLastPathComponent().deletingLastPathComponent()
        found.append(prefix.appendingPathComponent("share/hearalert/default.safetensors").path)
        return found
    }
}
