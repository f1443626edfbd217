import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The memory bounds of enlog's tests measure enlog, not the test process that starts it
/// (`MeasuredRun`), and the launcher in between keeps what the tests see of the program: its
/// streams, exit status, signals, and its end when the test kills it.
@Suite("measured runs: a program's own peak")
struct MeasuredRunTests {
    /// With 256 MiB touched in this process, /bin/true started directly would report at least that
    /// (the launcher sees it as what it inherited); through the launcher it reports its own 1 MB or so.
    @Test func aProgramsPeakIsItsOwnNotTheTestProcesses() throws {
        let size = 256 << 20
        let ballast = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096)
        defer { ballast.deallocate() }
        memset(ballast, 1, size)
        let result = try RedirectedRun.run(URL(fileURLWithPath: "/bin/true"), [], environment: [:])
        let usage = try #require(result.usage)
        #expect(result.status == 0)
        #expect(usage.inheritedKilobytes >= size / 1024, "the test process's peak, \(usage.inheritedKilobytes) KiB")
        #expect(usage.peakKilobytes < 16 * 1024, "/bin/true: \(usage.peakKilobytes) KiB")
    }

    /// What the program itself takes is counted: 96 MiB written by Python.
    @Test func whatTheProgramTouchesIsCounted() throws {
        let python = try #require(Subprocess.which("python3"))
        let result = try RedirectedRun.run(python, ["-c", "import sys; b = b'x' * (96 << 20); sys.exit(len(b) != 96 << 20)"],
                                           environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.peakKilobytes > 96 * 1024 && result.peakKilobytes < 200 * 1024, "\(result.peakKilobytes) KiB")
        #expect((result.usage?.cpuSeconds ?? -1) >= 0)
    }

    /// Exit status, standard streams and a memory limit reach the program and come back.
    @Test func statusStreamsAndLimitsAreThePrograms() throws {
        let run = try RedirectedRun.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "echo out; echo err >&2; ulimit -d; exit 3"],
                                        environment: ["PATH": "/usr/bin:/bin"], memoryLimit: 512 << 20)
        #expect(run.status == 3 && run.signal == nil)
        #expect(run.standardOutput == "out\n524288\n")
        #expect(run.standardError == "err\n")

        let child = try ChildProcess("/bin/sh", ["-c", "read line; echo \"got $line\"; exit 4"],
                                     environment: ChildProcess.cleanEnvironment, standardInputPipe: true, measuringUsage: true)
        try child.writeStandardInput(Data("hello\n".utf8))
        child.closeStandardInput()
        let (status, output, usage) = child.finishWithUsage()
        #expect(status == 4 && output == "got hello\n")
        #expect(usage?.rawStatus == 4 << 8)
    }

    /// SIGTERM reaches the program and the test sees it end by it; a launcher killed outright
    /// (a test's deadline) takes the program with it.
    @Test func signalsReachTheProgramAndItEndsWithTheLauncher() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "echo $$; exec sleep 600"], environment: ChildProcess.cleanEnvironment,
                                     measuringUsage: true)
        #expect(child.waitForOutput(containing: "\n"))
        child.stop(SIGTERM, grace: .seconds(60))
        #expect(child.terminatingSignal == SIGTERM)

        let doomed = try ChildProcess("/bin/sh", ["-c", "echo $$; exec sleep 600"], environment: ChildProcess.cleanEnvironment,
                                      measuringUsage: true)
        #expect(doomed.waitForOutput(containing: "\n"))
        let program = try #require(pid_t(doomed.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        doomed.kill()
        #expect(doomed.terminatingSignal == SIGKILL)
        // Gone, or a zombie waiting for a reaper: no longer sleeping. (Killed here if not, before
        // the test reads the output to its end, which the program holds open.)
        do {
            try blockUntil("the program \(program) ends with its launcher") {
                guard let stat = try? String(contentsOfFile: "/proc/\(program)/stat", encoding: .utf8) else { return true }
                return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
            }
        } catch {
            Glibc.kill(program, SIGKILL)
            throw error
        }
        let (_, _, usage) = doomed.finishWithUsage()
        #expect(usage == nil, "a killed launcher reports nothing")
    }
}
