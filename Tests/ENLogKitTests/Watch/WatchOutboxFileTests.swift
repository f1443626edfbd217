import Foundation
import XCTest

/// The outbox file deleted or replaced under a running `watch` fed by gpsd (gpsfake): the notes
/// are never written into a file no one can open again.
extension WatchGPSDTests {
    /// Stop A 150 s, 2 km at 80 m/s, stop B 60 s, 3 km at 120 m/s, stop C 60 s: five notes.
    private func drive() -> GeneratedTrack {
        let legs: [GeneratedTrack.Leg] = [.stop(seconds: 150), .drive(metres: 2000, speed: 80), .stop(seconds: 60),
                                          .drive(metres: 3000, speed: 120), .stop(seconds: 60)]
        return GeneratedTrack(start: Date().addingTimeInterval(-Double(150 + 25 + 60 + 25 + 60) - 60), legs: legs)
    }

    /// watch following gpsfake's drive, once it has logged its first note.
    private func watchingADrive() throws -> (EnlogHome, WatchProcess) {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let port = try freeLoopbackPort()
        _ = try gpsfake(drive(), port: port, in: home.directory, name: "drive.nmea")
        let watch = try WatchProcess(home: home, environment: environment(port: port))
        XCTAssertTrue(watch.waitFor(1, "noted", seconds: 120), watch.child.output)
        return (home, watch)
    }

    /// The notes watch said it logged (three at least) are the outbox's notes at the path, and the
    /// file is whole.
    private func assertEveryNotedNoteIsThere(_ home: EnlogHome, _ output: String, _ message: String,
                                             file: StaticString = #filePath, line: UInt = #line) {
        let noted = notedIds(output)
        XCTAssertGreaterThanOrEqual(noted.count, 3, file: file, line: line)
        XCTAssertEqual(try noteIds(home, db: home.database), noted, message, file: file, line: line)
        XCTAssertEqual(try home.counts().integrity, "ok", file: file, line: line)
    }

    private func notedIds(_ output: String) -> [Int] {
        WatchProcess.events(output).filter { $0["event"] as? String == "noted" }.compactMap { $0["id"] as? Int }
    }

    private func noteIds(_ home: EnlogHome, db: String) throws -> [Int] {
        let listed = try home.run("queue", "list", "--json", "--db", db)
        XCTAssertEqual(listed.status, 0, listed.standardError)
        let notes = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]] ?? []
        return notes.compactMap { $0["id"] as? Int }
    }

    /// `rm enlog.sqlite`: the outbox is put back at its path with every note, said once, and
    /// watch goes on writing there.
    func testAnOutboxDeletedUnderWatchIsPutBackAndFollowed() throws {
        let (home, watch) = try watchingADrive()
        XCTAssertEqual(unlink(home.database), 0)
        XCTAssertTrue(watch.waitFor("outbox-restored", seconds: 120), "never noticed: \(watch.child.output.suffix(3000))")
        XCTAssertTrue(watch.waitFor(3, "noted", seconds: 120), "stopped noting: \(watch.child.output.suffix(3000))")
        let end = watch.terminate()
        XCTAssertEqual(end.status, 0, end.output.suffix(3000).description)
        let restored = end.events.filter { $0["event"] as? String == "outbox-restored" }
        XCTAssertEqual(restored.count, 1, "said once")
        XCTAssertEqual(restored.first?["message"] as? String,
                       "outbox \(home.database) was deleted while enlog was writing to it; it is back there with every note, the last one included")
        assertEveryNotedNoteIsThere(home, end.output, "every note watch logged is in the outbox at the path")
        XCTAssertEqual(try home.counts().notesWithoutFix, 0)
    }

    /// Another outbox moved onto the path: the notes of the one watch had open (the one in hand
    /// included) go beside it, and watch stops with exit 73 saying where; the new one is untouched.
    func testAnOutboxReplacedUnderWatchIsKeptBesideAndWatchStops() throws {
        let (home, watch) = try watchingADrive()
        let other = home.directory.path("data/other.sqlite")
        XCTAssertEqual(try home.run("log", "--at", "1,1", "--no-sync", "--no-geocode", "--db", other).status, 0)
        XCTAssertEqual(rename(other, home.database), 0)
        guard watch.child.waitForOutput(containing: "enlog: error: ", within: .seconds(120)) else {
            let end = watch.terminate()
            return XCTFail("never noticed: \(end.output.suffix(3000))")
        }
        let result = watch.child.finish()
        XCTAssertEqual(result.status, 73, result.output.suffix(3000).description)
        let errors = result.output.split(separator: "\n").filter { $0.hasPrefix("enlog: error: ") }
        XCTAssertEqual(errors.count, 1, result.output)
        let prefix = "enlog: error: outbox \(home.database) was replaced by another file while enlog was writing to it; "
            + "the notes of the one enlog had open, the last one included, are in "
        XCTAssertTrue(errors.first?.hasPrefix(prefix) == true, "\(errors)")
        let kept = errors.first.map { String($0.dropFirst(prefix.count).prefix { $0 != " " }) } ?? ""
        XCTAssertTrue(kept.hasPrefix(home.database + ".rescued-"), kept)
        XCTAssertEqual(try noteIds(home, db: kept), notedIds(result.output), "every note watch logged is kept")
        XCTAssertEqual(try noteIds(home, db: home.database), [1], "the outbox moved onto the path is left as it was")
    }

    /// `rm enlog.sqlite-wal` under watch, then `kill -9`: the notes watch reported logged were
    /// only in the deleted log; watch puts them into the outbox at its next event, said once,
    /// and every note it reported is there after the kill.
    func testAWriteAheadLogDeletedUnderWatchLosesNoReportedNoteToAKill() throws {
        let (home, watch) = try watchingADrive()
        XCTAssertEqual(unlink(home.database + "-wal"), 0)
        XCTAssertTrue(watch.waitFor(3, "noted", seconds: 120), "stopped noting: \(watch.child.output.suffix(3000))")
        let end = watch.terminate(SIGKILL)
        XCTAssertEqual(end.status, 128 + SIGKILL)
        let restored = end.events.filter { $0["event"] as? String == "outbox-log-restored" }
        XCTAssertEqual(restored.count, 1, "said once: \(end.output.suffix(3000))")
        XCTAssertEqual(restored.first?["message"] as? String,
                       "the write-ahead log of outbox \(home.database) (\(home.database)-wal) was deleted while enlog was writing to it; "
                       + "every note in it, the last one included, is now in the outbox")
        assertEveryNotedNoteIsThere(home, end.output, "every note watch reported logged survives the kill")
        XCTAssertEqual(try home.counts().notesWithoutFix, 0)
    }

    /// Both the -wal and the -shm deleted (`rm enlog.sqlite-*`) under watch, then `kill -9`.
    func testTheLogAndItsIndexDeletedUnderWatchLoseNoReportedNoteToAKill() throws {
        let (home, watch) = try watchingADrive()
        XCTAssertEqual(unlink(home.database + "-wal"), 0)
        XCTAssertEqual(unlink(home.database + "-shm"), 0)
        XCTAssertTrue(watch.waitFor(3, "noted", seconds: 120), "stopped noting: \(watch.child.output.suffix(3000))")
        let end = watch.terminate(SIGKILL)
        assertEveryNotedNoteIsThere(home, end.output, "every note watch reported logged survives the kill")
    }
}
