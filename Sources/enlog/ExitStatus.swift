import ArgumentParser

/// Every exit code enlog uses, in one place; README.md's table mirrors this.
enum ExitStatus: Int32 {
    case success = 0
    /// Some input was checked and found wrong (an invalid ENML document).
    case invalidInput = 1
    /// Bad command line, or a named file that cannot be read.
    case usage = 2

    var exitCode: ExitCode { ExitCode(rawValue) }
}
