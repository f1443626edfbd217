import Foundation
import Support
import Configuration
import Network

/// A track file given to `enlog import`: GPX or an NMEA 0183 log, told apart by its first
/// characters, read whole and checked before anything is stored.
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
    public static let maximumBytes = 64 << 20

    public let path: String

    public init(path: String) {
        self.path = path
    }

    public func read() throws(TrackError) -> Contents {
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) > Self.maximumBytes {
            throw .tooLarge(path: path, bytes: Int(info.st_size), limit: Self.maximumBytes)
        }
        let bytes: [UInt8]
        do {
            bytes = try FileBytes.read(path)
        } catch {
            throw .unreadable(path: path, detail: (error as? FileBytes.ReadError)?.reason ?? "\(error)")
        }
        // A pipe or a file that grew after the check above.
        if bytes.count > Self.maximumBytes { throw .tooLarge(path: path, bytes: bytes.count, limit: Self.maximumBytes) }
        return try contents(of: bytes)
    }

    /// What `bytes`, the file's contents, hold.
    package func contents(of bytes: [UInt8]) throws(TrackError) -> Contents {
        let kind = try Self.kind(of: bytes, path: path)
        var fixes: [Fix]
        var untimed = 0
        switch kind {
        case .gpx:
            let result = try GPXReader(path: path).read(bytes)
            fixes = result.fixes
            untimed = result.untimedSkipped
        case .nmea:
            do {
                fixes = try NMEALogLocation(path: path).fixes(in: Data(bytes))
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

    /// `<` (after an optional UTF-8 byte order mark and white space): XML; `$` or `!`: NMEA.
    static func kind(of bytes: [UInt8], path: String) throws(TrackError) -> Kind {
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        guard index < bytes.count else { throw .unknownFormat(path: path) }
        switch bytes[index] {
        case UInt8(ascii: "<"): return .gpx
        case UInt8(ascii: "$"), UInt8(ascii: "!"): return .nmea
        default: throw .unknownFormat(path: path)
        }
    }
}
