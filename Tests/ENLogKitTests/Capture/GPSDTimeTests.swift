import Foundation
import Testing
@testable import Capture

/// gpsd's report times are read as track files' are: ISO8601DateFormatter's ICU divided by zero
/// (SIGFPE, ending `enlog log` or `watch`) on a time with 35 or more fractional digits (the gpsd
/// fuzzer's find, Tests/Fixtures/fuzz/gpsd/). Run in a child process, which that signal ends.
@Suite("gpsd report times")
struct GPSDTimeTests {
    static let cases: [(time: String, milliseconds: Int64?)] = [
        ("2026-11-24T08:00:01.000Z", 1_795_507_201_000),
        ("2026-11-24T08:00:01Z", 1_795_507_201_000),
        ("2026-11-24T09:00:01.5+01:00", 1_795_507_201_500),
        ("2026-11-24T08:00:01." + String(repeating: "9", count: 40) + "Z", 1_795_507_201_999),
        ("2026-11-24T08:00:01." + String(repeating: "1", count: 400) + "Z", 1_795_507_201_111),
        ("2026-11-24 08:00:01Z", nil),
        ("2026-11-24T08:00:01.Z", nil),
        ("Tue Nov 24 08:00:01 2026", nil),
    ]

    @Test func everyTimeIsReadToTheMillisecondOrRefused() async {
        await #expect(processExitsWith: .success, "SIGFPE (8): the time parser divided by zero") {
            var wrong: [String] = []
            for (time, milliseconds) in GPSDTimeTests.cases {
                let line = #"{"class":"TPV","mode":3,"time":"\#(time)","lat":48.8584,"lon":2.2945,"eph":4.0}"#
                let fix: Fix?
                if case .report(let reported) = GPSDSession.decode(line: Data(line.utf8), needsTime: true) { fix = reported } else { fix = nil }
                let read = fix.map { Int64(($0.timestamp.timeIntervalSince1970 * 1000).rounded()) }
                if read != milliseconds { wrong.append("\(time): \(read.map(String.init) ?? "no fix")") }
            }
            if !wrong.isEmpty {
                Issue.record(Comment(rawValue: wrong.joined(separator: "\n")))
                exit(EXIT_FAILURE)
            }
        }
    }
}
