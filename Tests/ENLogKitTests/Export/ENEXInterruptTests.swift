import Foundation
import XCTest

/// `export --enex` ended by a signal leaves no `.NAME.enlog-XXXXXX` temporary (they reach
/// hundreds of megabytes), and a later export to the same name removes those a `kill -9` left,
/// never one another export is writing, nor another name's.
final class ENEXInterruptTests: XCTestCase {
    private func temporaries(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(".all.enex.enlog-") }.sorted()
    }

    private func size(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int ?? 0
    }

    /// Starts the export and waits until its temporary holds bytes (the export under way).
    private func exportUnderWay(_ home: EnlogHome, into directory: String) throws -> ChildProcess {
        let child = try home.start(["export", "--enex", directory + "/all.enex", "-q"])
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline, child.isRunning {
            if let name = temporaries(in: directory).first, size(directory + "/" + name) > 0 { return child }
            usleep(2_000)
        }
        XCTFail("the export never got under way (or ended first): \(temporaries(in: directory))")
        return child
    }

    private func backdate(_ path: String) {
        var times = [timespec(tv_sec: time(nil) - 3600, tv_nsec: 0), timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
    }

    func testAnExportEndedBySIGINTSIGTERMOrSIGHUPLeavesNoTemporaryAndALaterOneRemovesWhatAKillLeft() async throws {
        let home = try EnlogHome()
        try await ENEXMemoryTests.fill(home.database, notes: 3000)
        let directory = home.directory.path("out")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            let child = try exportUnderWay(home, into: directory)
            kill(child.pid, signal)
            XCTAssertEqual(child.wait(), 128 + signal, "ended by the signal, as before")
            XCTAssertEqual(temporaries(in: directory), [], "signal \(signal)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/all.enex"))
        }

        // SIGKILL cannot be caught: its temporary stays until a later export finds it abandoned.
        let killed = try exportUnderWay(home, into: directory)
        kill(killed.pid, SIGKILL)
        killed.wait()
        let left = temporaries(in: directory)
        XCTAssertEqual(left.count, 1)
        for name in left { backdate(directory + "/" + name) }
        // One another export is writing (held under its lock), and another name's: both stay.
        let inUse = directory + "/.all.enex.enlog-InUse1", other = directory + "/.other.enex.enlog-Other1"
        for path in [inUse, other] { XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("x".utf8))) }
        let holder = open(inUse, O_RDONLY)
        defer { close(holder) }
        XCTAssertEqual(flock(holder, LOCK_EX), 0)
        backdate(inUse)
        backdate(other)

        let result = try home.run("export", "--enex", directory + "/all.enex", "-q")
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).sorted(),
                       [".all.enex.enlog-InUse1", ".other.enex.enlog-Other1", "all.enex"])
    }
}
