import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Capture
@testable import Watch

/// A system clock that disagrees with GPS time (issue 32, class 5): an RTC-less machine before
/// NTP has its clock behind, or at 1970. It is named as such, once, at default verbosity; fixes
/// with GPS time ahead of the clock are still recorded at their GPS time (`GPSClockCheck` says
/// why); `log --at` with the clock outside enlog's time limits blames the clock, not the
/// coordinates. The clock is moved for real: libfaketime (`faketime`) for one command, and
/// gpsfake replaying fixes stamped an hour ahead of it for `watch`.
final class WrongClockTests: XCTestCase {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static func fix(at seconds: TimeInterval, north: Double = 0) -> Fix {
        try! Fix(latitude: 48 + north / 111_195, longitude: 11, horizontalAccuracy: 5,
                 timestamp: now.addingTimeInterval(seconds), source: .gpsd)
    }

    func kinds(_ events: [GPSDStream.Event]) -> [String] {
        events.map {
            switch $0 {
            case .accepted: "accepted"
            case .rejected(_, let rejection): "rejected \(rejection)"
            case .clockBehind(let ahead): "clock behind \(Int(ahead))"
            case .clockAgrees: "clock agrees"
            case .connected, .lost: "other"
            }
        }
    }

    /// GPS time an hour ahead: said once, the fixes judged by GPS time (a stale one still
    /// refused); GPS time an hour behind: refused as too old, no correction; the clock set:
    /// said once, judged by the clock again.
    func testGPSTimeAheadCorrectsTheClockAndGPSTimeBehindDoesNot() {
        var check = GPSClockCheck()
        let filter = QualityFilter()
        XCTAssertEqual(kinds(check.judge(Self.fix(at: 3600.9), now: Self.now, filter: filter)), ["clock behind 3600", "accepted"])
        XCTAssertEqual(kinds(check.judge(Self.fix(at: 3602), now: Self.now.addingTimeInterval(1), filter: filter)), ["accepted"])
        // A fix 60 s older than GPS time now (by the fixes seen): stale, whatever the clock says.
        let stale = kinds(check.judge(Self.fix(at: 3543), now: Self.now.addingTimeInterval(2), filter: filter))
        XCTAssertEqual(stale.count, 1)
        XCTAssertTrue(stale[0].hasPrefix("rejected fix is 60.0 s old"), "\(stale)")
        // NTP sets the clock.
        XCTAssertEqual(kinds(check.judge(Self.fix(at: 3605), now: Self.now.addingTimeInterval(3605), filter: filter)), ["clock agrees", "accepted"])
        XCTAssertNil(check.clockBehind)

        var behind = GPSClockCheck()
        let refused = kinds(behind.judge(Self.fix(at: -3600), now: Self.now, filter: filter))
        XCTAssertEqual(refused, ["rejected fix is 3600.0 s old, limit 15.0 s"])
        XCTAssertNil(behind.clockBehind)
    }

    /// The state machine says each disagreement once, at default verbosity (a problem), keeps it
    /// in systemd's STATUS= until it ends, and says when it ends.
    func testWatchSaysAWrongClockOnceAndInItsStatus() {
        let driver = WatchStateMachineTests.Driver(WatchStateMachine(settings: WatchStateMachine.Settings()))
        _ = driver.start()
        let behind = driver.send(.gpsd(.clockBehind(by: 3600.9)))
        XCTAssertEqual(behind, ["report clock-behind", "notify STATUS=system clock 3601 s behind GPS time; last note none yet; 0 pending"])
        let said = driver.reports.filter { $0.event == "clock-behind" }
        XCTAssertEqual(said.map(\.level), [.problem])
        XCTAssertTrue(said.first?.message.contains("wait for NTP, or set the clock") == true, "\(said)")
        // Fixes go on being logged.
        let first = driver.send(.gpsd(.accepted(Self.fix(at: 3601))))
        XCTAssertTrue(first.contains("log note (first place)"), "\(first)")
        XCTAssertEqual(driver.send(.gpsd(.clockAgrees)).first, "report clock-set")
        XCTAssertFalse(driver.machine.status.contains("clock"), driver.machine.status)

        // GPS time behind the clock: nothing recorded, said once for a run of such fixes.
        for second in 0..<5 {
            _ = driver.send(.gpsd(.rejected(Self.fix(at: Double(second) - 7200), .tooOld(age: 7200, limit: 15))))
        }
        let ahead = driver.reports.filter { $0.event == "clock-ahead" }
        XCTAssertEqual(ahead.map(\.level), [.problem])
        XCTAssertTrue(ahead.first?.message.hasPrefix("GPS time is 2.0 h behind the system clock: no fix is recorded") == true, "\(ahead)")
        XCTAssertTrue(driver.machine.status.hasPrefix("STATUS=GPS time 2.0 h behind the system clock"), driver.machine.status)
        _ = driver.send(.gpsd(.accepted(Self.fix(at: 4000, north: 1))))
        XCTAssertEqual(driver.reports.filter { $0.event == "clock-set" }.count, 2)
        XCTAssertFalse(driver.machine.status.contains("clock"), driver.machine.status)
    }

    /// The clock at 1970 (and past 2099): `log --at 1,1` says the clock is wrong, exit 75, and
    /// stores nothing; the coordinates are not blamed.
    func testLogAtWithTheClockOutsideEnlogsTimeLimitsBlamesTheClock() throws {
        guard let faketime = Subprocess.which("faketime") else {
            throw XCTSkip("faketime is not installed (apt-get install -y faketime)")
        }
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        for (clock, shown) in [("1970-01-02 00:00:00", "1970-01-02T00:00"), ("1979-12-31 23:00:00", "1979-12-31T23:00"),
                               ("2100-03-01 12:00:00", "2100-03-01T12:00")] {
            let result = try Subprocess.run(faketime, ["-f", "@" + clock, Subprocess.enlog.path, "log", "--at", "1,1", "--no-sync"],
                                            environment: home.environment)
            XCTAssertEqual(result.status, 75, "\(clock): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
            XCTAssertTrue(result.standardError.contains("the system clock is wrong: it says \(shown)"), "\(clock): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains("set the clock"), result.standardError)
            XCTAssertFalse(result.standardError.contains("1,1") || result.standardError.contains("latitude"), result.standardError)
        }
        let right = try home.run("log", "--at", "1,1", "--no-sync")
        XCTAssertEqual(right.status, 0, right.standardError)
        XCTAssertEqual(try home.notes().count, 1, "only the run with a right clock stored a note")
    }
}

/// gpsd (gpsfake) with the system clock an hour behind GPS time: watch says so once and still
/// logs the drive's notes, at GPS time; with the clock an hour ahead it says so once and logs
/// nothing.
extension WatchGPSDTests {
    func testAClockAnHourBehindGPSTimeIsSaidOnceAndTheDriveIsStillLogged() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let notify = try NotifySocketListener(directory: home.directory)
        let legs: [GeneratedTrack.Leg] = [.stop(seconds: 60), .drive(metres: 2000, speed: 80), .stop(seconds: 60)]
        let track = GeneratedTrack(start: Date().addingTimeInterval(3600), legs: legs)
        let port = try freeLoopbackPort()
        _ = try gpsfake(track, port: port, in: home.directory, name: "ahead.nmea")
        // The default age limit (15 s): only a correction by GPS time lets these fixes through.
        let watch = try WatchProcess(home: home, environment: [
            "ENLOG_LOCATION_GPSD": "127.0.0.1:\(port)", "ENLOG_WATCH_MIN_INTERVAL": "30", "NOTIFY_SOCKET": notify.path])
        XCTAssertTrue(watch.waitFor("clock-behind"), "watch never named the clock")
        let status = notify.messages(until: "STATUS=system clock", seconds: 60)
        watch.waitFor(3, "noted", seconds: 120)
        let end = watch.terminate()
        XCTAssertEqual(end.status, 0, end.output)
        XCTAssertNotNil(status, "no STATUS= naming the clock")
        let said = end.events.filter { $0["event"] as? String == "clock-behind" }
        XCTAssertEqual(said.count, 1, "once, not per fix: \(end.output.suffix(2000))")
        XCTAssertEqual(said.first?["level"] as? String, "problem")
        let notes = try home.notes()
        XCTAssertEqual(notes.count, 3, "stop A, leaving A, stop B: \(end.output.suffix(3000))")
        XCTAssertEqual(try home.counts().notesWithoutFix, 0)
    }

    func testAClockAnHourAheadOfGPSTimeIsSaidOnceAndNothingIsLogged() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let track = GeneratedTrack(start: Date().addingTimeInterval(-3600), legs: [.stop(seconds: 30), .drive(metres: 1000, speed: 50)])
        let port = try freeLoopbackPort()
        _ = try gpsfake(track, port: port, in: home.directory, name: "behind.nmea")
        let watch = try WatchProcess(home: home, environment: ["ENLOG_LOCATION_GPSD": "127.0.0.1:\(port)"])
        XCTAssertTrue(watch.waitFor("clock-ahead"), "watch never named the clocks' disagreement")
        watch.waitFor(20, "fix-rejected", seconds: 60)
        let end = watch.terminate()
        XCTAssertEqual(end.events.filter { $0["event"] as? String == "clock-ahead" }.count, 1, end.output.suffix(2000).description)
        XCTAssertTrue(try home.notes().isEmpty)
    }
}
