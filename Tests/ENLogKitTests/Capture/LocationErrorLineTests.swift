import Foundation
import Testing
@testable import Capture
@testable import Diary

/// A location error is one line whatever it quotes: an NMEA sentence's field holding carriage
/// returns (the track fuzzer's find, Tests/Fixtures/fuzz/track/: "time '235959.00\r\r…' is not
/// hhmmss"), a line or paragraph separator or NEL, read by `log --nmea` or by `import`, and
/// `--location` text.
@Suite("location errors quoting line breaks")
struct LocationErrorLineTests {
    /// One GGA whose time field ends in `breaks`, with its checksum.
    static func log(timeEndingIn breaks: String) -> [UInt8] {
        let body = "GPGGA,235959.00\(breaks),3352.1280,S,15112.5060,E,2,14,0.9,39.0,M,22.1,M,,0000"
        let checksum = body.utf8.reduce(UInt8(0), ^)
        return Array("$\(body)*\(String(format: "%02X", checksum))\r\n".utf8)
    }

    static func isOneLine(_ reason: String) -> Bool { reason.split(whereSeparator: \.isNewline).count == 1 }

    @Test(arguments: ["\r", "\r\r\r", "\u{2028}", "\u{2029}", "\u{85}", "\u{0B}"])
    func anNMEAFieldStaysOnTheLine(_ breaks: String) throws {
        let bytes = Self.log(timeEndingIn: breaks)
        #expect(throws: LocationError.self) { _ = try NMEALogLocation(path: "walk.nmea").fixes(in: Data(bytes)) }
        do {
            _ = try NMEALogLocation(path: "walk.nmea").fixes(in: Data(bytes))
        } catch {
            #expect(Self.isOneLine(error.reason), "\(error.reason)")
        }
        var reader = try #require(HistoryReaders.kind(for: bytes[...])).make("walk.nmea")
        do {
            try reader.feed(bytes[...]) { _ in }
            try reader.finish { _ in }
            Issue.record("imported")
        } catch let error as HistoryFileError {
            let reason = HistoryImportError.badFile(path: "walk.nmea", format: .nmea, error: error).reason
            #expect(Self.isOneLine(reason), "\(reason)")
        }
    }

    @Test func manualLocationTextStaysOnTheLine() {
        let reason = LocationError.malformedManualLocation(input: "48.85\n2.29", problem: "no comma").reason
        #expect(reason == "location '48.85\\x0A2.29' is not LAT,LON[,ALT]: no comma")
    }
}
