import Foundation
import Support
import Configuration
import Network

/// A track file given to `enlog import`: GPX or an NMEA 0183 log, read whole and checked before
/// anything is stored. XML starts with `<`; anything else is read as `log --nmea` reads a log
/// (the same reader: comment lines, a first line cut mid-sentence and bad checksums are skipped),
/// and is neither when that reader finds no sentence at all.
public struct TrackFile: Sendable {
    public enum Kind: String, Sendable { case gpx, nmea }

    public struct Contents: Sendable, Equatable {
        public var kind: Kind
        /// In time order; the same time twice keeps the first point read.
        public var fixes: [Fix]
        /// Route points and waypoints without a time, left out.
        public var untimedSkipped: Int
        /// Points dropped for repeating a time already in the file.
        public var repeatedTimes: Int
    }

    /// 64 MiB: a day at 1 Hz is about 10 MB of GPX; a larger file is refused before parsing.
    public static let maximumBytes = InputLimit.track.maximumBytes

    public let path: String

    public init(path: String) {
        self.path = path
    }

    public func read() throws(TrackError) -> Contents {
        let bytes: [UInt8]
        do {
            bytes = try FileBytes.read(path, limit: .track)
        } catch .tooLarge(let size, let limit) {
            throw .tooLarge(path: path, bytes: size, limit: limit)
        } catch {
            throw .unreadable(path: path, detail: error.reason)
        }
        return try contents(of: bytes)
    }

    /// What `bytes`, the file's contents, hold.
    package func contents(of bytes: [UInt8]) throws(TrackError) -> Contents {
        let kind = Self.kind(of: bytes)
        var fixes: [Fix]
        var untimed = 0
        switch kind {
        case .gpx:
            let result = try GPXReader(path: path).read(bytes)
            fixes = result.fixes
            untimed = result.untimedSkipped
        case .nmea:
            do {
                fixes = try NMEALogLocation(path: path).fixes(in: bytes)
            } catch .nmeaLogHasNoSentences {
                throw .unknownFormat(path: path)
            } catch {
                throw .nmea(error)
            }
        }
        // Stable: points with the same time keep the order they were read in, and the first wins.
        let sorted = fixes.enumerated().sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }.map(\.element)
        var unique: [Fix] = []
        for fix in sorted where unique.last.map({ Self.sameTime($0.timestamp, fix.timestamp) }) != true { unique.append(fix) }
        return Contents(kind: kind, fixes: unique, untimedSkipped: untimed, repeatedTimes: sorted.count - unique.count)
    }

    /// The history keeps times to the millisecond: two points in the same millisecond are one time.
    static func sameTime(_ a: Date, _ b: Date) -> Bool {
        (a.timeIntervalSince1970 * 1000).rounded() == (b.timeIntervalSince1970 * 1000).rounded()
    }

    /// `<` (after an optional UTF-8 byte order mark and white space): XML. Anything else is for
    /// the NMEA reader to judge: a real log may begin with `# comments` or half a sentence.
    static func kind(of bytes: [UInt8]) -> Kind {
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index < bytes.count && bytes[index] == UInt8(ascii: "<") ? .gpx : .nmea
    }
}
