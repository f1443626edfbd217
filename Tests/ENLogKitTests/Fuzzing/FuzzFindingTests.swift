import Foundation
import Testing
@testable import Fuzzing

/// The inputs the fuzzers found defects with stay harmless: each file of
/// Tests/Fixtures/fuzz/TARGET/ runs through the same target libFuzzer ran it through, in a child
/// process of its own under a CPU-time limit. A crash fails that input alone, and an input that
/// once made a target spin (a libFuzzer timeout) is stopped by the kernel's SIGXCPU instead of
/// hanging the test run: CPU time, not wall time, so a loaded machine does not fail it.
@Suite("fuzz findings, each in a child process")
struct FuzzFindingTests {
    struct Finding: CustomTestStringConvertible, Sendable {
        let target: String
        let path: String
        var testDescription: String { "\(target)/\((path as NSString).lastPathComponent)" }
    }

    static let findings: [Finding] = FuzzTarget.all.flatMap { target in
        ((try? FuzzRegressionTests.files(in: "Tests/Fixtures/fuzz/\(target.name)")) ?? []).map {
            Finding(target: target.name, path: $0.path)
        }
    }

    /// Far above what any finding takes (milliseconds), far below a hang's patience.
    static let cpuSeconds = 30

    @Test(arguments: findings)
    func runsCleanThroughItsTarget(_ finding: Finding) async {
        await #expect(processExitsWith: .success, "SIGXCPU (24): it spun for \(Self.cpuSeconds) CPU seconds") {
            [name = finding.target as String, path = finding.path as String, cpuSeconds = Self.cpuSeconds as Int] in
            guard lowerSoftLimit(RLIMIT_CORE, to: 0), lowerSoftLimit(RLIMIT_CPU, to: cpuSeconds),
                  let target = FuzzTarget.all.first(where: { $0.name == name }) else { exit(2) }
            do {
                try target.run([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            } catch {
                Issue.record("\(error)")
                exit(EXIT_FAILURE)
            }
        }
    }
}
