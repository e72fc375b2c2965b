import ArgumentParser
import HearAlertKit

/// Refuses, while the command line is parsed, an output that would overwrite one of the command's inputs (the
/// same path, a symlink or a hard link to it): a usage error, before anything is read or written. `option` is how
/// the output was named (`-o`, `--json`), nil for a positional argument. Opening the output checks again
/// (`AtomicOutputFile`), for a file that changed in between.
func validateOutput(_ output: String, option: String? = nil, inputs: [CommandInput]) throws {
    do {
        try OutputFileError.checkNotInput(output, inputs: inputs)
    } catch {
        throw ValidationError((option.map { "\($0) " } ?? "") + error.description)
    }
}
