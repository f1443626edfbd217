import Foundation
import Support
import Configuration
import Network

/// One format `enlog import` can read: its reader's type (for `recognizes`) and how to start a
/// reader for one file.
package struct HistoryReaderKind: Sendable {
    package let format: HistoryFormat
    package let recognizes: @Sendable (ArraySlice<UInt8>) -> Bool
    /// A reader for the file named (as errors name it).
    package let make: @Sendable (_ path: String) -> any HistoryReader

    package static func of<Reader: HistoryReader & SendableMetatype>(_ make: @escaping @Sendable () -> Reader) -> HistoryReaderKind {
        HistoryReaderKind(format: Reader.format, recognizes: { Reader.recognizes(prefix: $0) }, make: { _ in make() })
    }

    /// A reader whose errors name the file themselves (the NMEA reader shares `log --nmea`'s).
    package static func of<Reader: HistoryReader & SendableMetatype>(named make: @escaping @Sendable (String) -> Reader) -> HistoryReaderKind {
        HistoryReaderKind(format: Reader.format, recognizes: { Reader.recognizes(prefix: $0) }, make: make)
    }
}

/// Every reader `enlog import` has, asked in this order whether a file's first bytes are theirs;
/// the first that says yes reads the file. Specific before general: formats with a telling key
/// or element come first, NMEA (which accepts a log starting with anything) and CSV (a header
/// line) last.
package enum HistoryReaders {
    package static let all: [HistoryReaderKind] = [
        // JSON: one sniffer (JSONHistorySniffer) decides among them, so at most one says yes.
        .of { GoogleRecordsReader() },
        .of { GoogleSemanticReader() },
        .of { AndroidTimelineReader() },
        .of { IOSTimelineReader() },
        .of { TimelineEditsReader() },
        .of { OwnTracksJSONReader() },
        .of { GeoJSONReader() },
        .of { GPXHistoryReader() },
        .of { KMLHistoryReader() },
        .of { TCXHistoryReader() },
        .of { OwnTracksRecordsReader() },
        .of { CSVHistoryReader() },
        .of(named: { NMEAHistoryReader(path: $0) }),
    ]

    /// How many bytes of a file decide its format.
    package static let prefixLength = 64 << 10

    /// The kind whose reader recognizes `prefix` (BOM already removed), in the order of `all`.
    package static func kind(for prefix: ArraySlice<UInt8>) -> HistoryReaderKind? {
        all.first { $0.recognizes(prefix) }
    }

    /// `bytes` without a leading UTF-8 byte order mark.
    package static func withoutByteOrderMark(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes
    }
}
