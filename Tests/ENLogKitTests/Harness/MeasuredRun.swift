import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a program used, as the kernel counted it for that program alone.
struct ChildUsage: Equatable {
    /// The wait status as `wait4` gave it (exit status or signal).
    var rawStatus: Int32
    /// The peak resident set (`ru_maxrss`), KiB.
    var peakKilobytes: Int
    /// User plus system CPU time.
    var cpuSeconds: Double
    /// What the program's `ru_maxrss` would have started from had the test process started it
    /// itself (the test process's peak, KiB): the figure the launcher keeps out of `peakKilobytes`.
    var inheritedKilobytes: Int
}

/// The one way tests measure a program's peak memory and CPU: it runs as the child of
/// Tests/support/measured_run.c, a C program of about 1 MB, which reports `wait4`'s figures in a
/// file and then ends as the program did.
///
/// Not measured from this process: a child's `ru_maxrss` starts from the memory map it had before
/// its exec, and posix_spawn (glibc runs the child on this process's map until the exec) and fork
/// (which copies this process's resident-page count) both start it from the test process, whose
/// own peak (hundreds of MB after some tests) then stood in for the program's.
enum MeasuredRun {
    /// The launcher, compiled once per source text into the build directory beside `enlog`
    /// (with the C compiler on PATH: `cc`, else the Swift toolchain's `clang`).
    static func launcher() throws -> String { try compiled.get() }

    private static let compiled: Result<String, LauncherError> = {
        let source = Fixtures.support.appendingPathComponent("measured_run.c")
        guard let text = try? Data(contentsOf: source) else { return .failure(LauncherError("cannot read \(source.path)")) }
        // FNV-1a of the source: an edited launcher is a new file, never a stale binary.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let directory = Subprocess.enlog.deletingLastPathComponent().appendingPathComponent("test-support")
        let binary = directory.appendingPathComponent("measured_run-\(String(hash, radix: 16))").path
        if FileManager.default.isExecutableFile(atPath: binary) { return .success(binary) }
        guard let compiler = ["cc", "clang", "gcc"].lazy.compactMap({ Subprocess.which($0) }).first else {
            return .failure(LauncherError("no C compiler (cc, clang or gcc) on PATH to build \(source.path)"))
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            // Built under a name of its own and renamed: another test process may build it at the same time.
            let scratch = "\(binary).\(getpid()).tmp"
            let result = try Subprocess.run(compiler, ["-O2", "-Wall", "-Werror", "-o", scratch, source.path])
            guard result.status == 0 else {
                return .failure(LauncherError("\(compiler.path) failed on \(source.path): \(result.standardError)"))
            }
            guard rename(scratch, binary) == 0 else { return .failure(LauncherError("cannot rename \(scratch): errno \(errno)")) }
            return .success(binary)
        } catch {
            return .failure(LauncherError("cannot build \(source.path): \(error)"))
        }
    }()

    struct LauncherError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The launcher's command line (its path first) that runs `executable` with `arguments` and
    /// reports into `report`; `dataLimit` (bytes, RLIMIT_DATA as `ulimit -d`) and `cpuSeconds`
    /// (RLIMIT_CPU as `ulimit -t`) apply to the program alone.
    static func commandLine(report: String, _ executable: String, _ arguments: [String],
                            dataLimit: Int? = nil, cpuSeconds: Int? = nil) throws -> [String] {
        let limits = (dataLimit.map { ["-d", "\($0 / 1024)"] } ?? []) + (cpuSeconds.map { ["-t", "\($0)"] } ?? [])
        return [try launcher(), report] + limits + ["--", executable] + arguments
    }

    /// The figures the launcher wrote; nil when it wrote none (it was killed, or could not fork).
    static func usage(report: String) -> ChildUsage? {
        guard let line = try? String(contentsOfFile: report, encoding: .utf8) else { return nil }
        let fields = line.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard fields.count == 5 else { return nil }
        return ChildUsage(rawStatus: Int32(truncatingIfNeeded: fields[0]), peakKilobytes: fields[1],
                          cpuSeconds: Double(fields[2] + fields[3]) / 1e6, inheritedKilobytes: fields[4])
    }
}
