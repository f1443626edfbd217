import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The last valid fix in an NMEA 0183 log file, or standard input when the path is `-`.
///
/// Lines are read by `NMEAFixReader` (GGA, RMC, GLL, GNS of any talker, with GSA, GST and ZDA when
/// present): sentences with a bad or missing checksum or impossible values are skipped, never
/// trusted, and the fix is the last epoch the receiver called valid.
public struct NMEALogLocation: LocationSource {
    public let path: String

    /// Metres of horizontal error per unit of HDOP when no GST sentence gives a measured error.
    /// 19 m is what gpsd 3.22 reports as `eph` for the same sentences, so a log read here and the
    /// same log replayed through gpsd meet the quality filter alike.
    public static let metresPerHDOP = 19.0

    /// The path that means standard input.
    public static let standardInputPath = "-"

    public init(path: String) {
        self.path = path
    }

    /// How errors name the input.
    var inputName: String { path == Self.standardInputPath ? "standard input" : path }

    public func currentFix() async throws -> Fix {
        let path = self.path
        // File reading blocks; keep it off the cooperative pool.
        return try await BlockingCall.run("enlog.nmea", onCancel: .wake {}) { _ in
            try NMEALogLocation(path: path).lastFix()
        }
    }

    public func lastFix() throws(LocationError) -> Fix {
        let (fixes, reader) = try readAll()
        guard let last = fixes.last else { throw noFixError(reader) }
        return last
    }

    /// Every valid fix in the log, in the log's order.
    public func fixes() throws(LocationError) -> [Fix] {
        let (fixes, reader) = try readAll()
        guard !fixes.isEmpty else { throw noFixError(reader) }
        return fixes
    }

    /// Every valid fix in `data`, an NMEA log already read (`enlog import`); errors name `path`.
    public func fixes(in data: Data) throws(LocationError) -> [Fix] {
        let (fixes, reader) = Self.parse(data)
        guard !fixes.isEmpty else { throw noFixError(reader) }
        return fixes
    }

    func readAll() throws(LocationError) -> ([Fix], NMEAFixReader) {
        Self.parse(try readLog())
    }

    static func parse(_ data: Data) -> ([Fix], NMEAFixReader) {
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

    private func readLog() throws(LocationError) -> Data {
        let path = inputName
        let fd = self.path == Self.standardInputPath ? STDIN_FILENO : open(self.path, O_RDONLY)
        guard fd >= 0 else { throw .nmeaLogUnreadable(path: path, detail: String(cString: strerror(errno))) }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var info = stat()
        if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            throw .nmeaLogUnreadable(path: path, detail: "it is a directory")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .nmeaLogUnreadable(path: path, detail: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        if data.isEmpty { throw .nmeaLogEmpty(path: path) }
        return data
    }
}
