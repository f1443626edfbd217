import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Support
import Configuration
import Network

/// The last valid fix in an NMEA 0183 log file, or standard input when the path is `-`.
///
/// Lines are read by `NMEAFixReader` (GGA, RMC, GLL, GNS of any talker, with GSA, GST and ZDA when
/// present): sentences with a bad or missing checksum or impossible values are skipped, never
/// trusted, and the fix is the last epoch the receiver called valid.
package struct NMEALogLocation: LocationSource {
    package let path: String

    /// Metres of horizontal error per unit of HDOP when no GST sentence gives a measured error.
    /// 19 m is what gpsd 3.22 reports as `eph` for the same sentences, so a log read here and the
    /// same log replayed through gpsd meet the quality filter alike.
    package static let metresPerHDOP = 19.0

    /// The path that means standard input.
    package static let standardInputPath = "-"

    package init(path: String) {
        self.path = path
    }

    /// How errors name the input.
    var inputName: String { path == Self.standardInputPath ? "standard input" : path }

    package func currentFix() async throws -> Fix {
        let path = self.path
        // File reading blocks; keep it off the cooperative pool.
        return try await BlockingCall.run("enlog.nmea", onCancel: .wake {}) { _ in
            try NMEALogLocation(path: path).lastFix()
        }
    }

    package func lastFix() throws(LocationError) -> Fix {
        let (fixes, reader) = try readAll()
        guard let last = fixes.last else { throw noFixError(reader) }
        return last
    }

    /// Every valid fix in the log, in the log's order.
    package func fixes() throws(LocationError) -> [Fix] {
        let (fixes, reader) = try readAll()
        guard !fixes.isEmpty else { throw noFixError(reader) }
        return fixes
    }

    /// Every valid fix in `data`, an NMEA log already read (`enlog import`); errors name `path`.
    package func fixes(in data: some ContiguousBytes) throws(LocationError) -> [Fix] {
        let (fixes, reader) = Self.parse(data)
        guard !fixes.isEmpty else { throw noFixError(reader) }
        return fixes
    }

    func readAll() throws(LocationError) -> ([Fix], NMEAFixReader) {
        Self.parse(try readLog())
    }

    static func parse(_ data: some ContiguousBytes) -> ([Fix], NMEAFixReader) {
        var reader = NMEAFixReader()
        var fixes: [Fix] = []
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var lineStart = 0
            // LF, CR LF, and CR alone (old Macs, some receivers' logs) each end one line.
            for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") || bytes[index] == UInt8(ascii: "\r") {
                if bytes[index] == UInt8(ascii: "\n"), index > 0, bytes[index - 1] == UInt8(ascii: "\r") {
                    lineStart = index + 1
                    continue
                }
                fixes += reader.read(line: bytes[lineStart..<index])
                lineStart = index + 1
            }
            if lineStart < bytes.count { fixes += reader.read(line: bytes[lineStart...]) }
        }
        fixes += reader.finish()
        return (fixes, reader)
    }

    /// The most specific truthful reason a log gave no fix.
    func noFixError(_ reader: NMEAFixReader) -> LocationError {
        let seen = reader.statistics
        if seen.validEpochs > seen.refusedFixes { return .nmeaLogHasNoDate(path: inputName) }
        if seen.sentences == 0 {
            guard let line = seen.firstBadChecksumLine else { return .nmeaLogHasNoSentences(path: inputName) }
            return .nmeaLogHasNoCheckedSentence(path: inputName, badChecksums: seen.badChecksums, firstBadLine: line)
        }
        if let invalid = seen.firstInvalidSentence {
            return .nmeaLogHasOnlyInvalidPositions(path: inputName, line: invalid.line, problem: invalid.problem,
                                                   invalidSentences: seen.invalidSentences)
        }
        if seen.positionSentences == 0 {
            return .nmeaLogHasNoPositionSentences(path: inputName, sentences: seen.sentences,
                                                  kinds: seen.unreadSummary, badChecksums: seen.badChecksums)
        }
        return .nmeaLogHasNoValidFix(path: inputName, sentences: seen.sentences, badChecksums: seen.badChecksums)
    }

    private func readLog() throws(LocationError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = path == Self.standardInputPath ? try FileBytes.readStandardInput(limit: .track)
                                                   : try FileBytes.read(path, limit: .track)
        } catch {
            throw .nmeaLogUnreadable(path: inputName, detail: error.reason)
        }
        if bytes.isEmpty { throw .nmeaLogEmpty(path: inputName) }
        return bytes
    }
}
