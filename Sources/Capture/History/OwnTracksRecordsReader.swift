import Foundation
import Support
import Configuration
import Network

/// The OwnTracks recorder's `.rec` files: per line an ISO time, a tab or spaces, `*` or `-` (the
/// topic's marker), then the message as one JSON object. Location messages (`_type: location`)
/// become points at their own `tst` (the line's time is when the recorder got it, sometimes
/// much later), the device being the message's `tid`; other messages (lwt, transition, card)
/// are counted as records that are not points. `vel` is km/h; `-1` means unknown.
package struct OwnTracksRecordsReader: HistoryReader {
    package static let format = HistoryFormat.ownTracksRecords

    private var lines = HistoryLines()

    package init() {}

    package static func recognizes(prefix: ArraySlice<UInt8>) -> Bool {
        guard let line = HistoryLines.firstLine(prefix), let brace = line.firstIndex(of: "{") else { return false }
        let head = line[..<brace].split(whereSeparator: { $0 == " " || $0 == "\t" })
        return head.count == 2 && (head[1] == "*" || head[1] == "-") && HistoryTimes.parse(String(head[0])) != nil
    }

    package mutating func feed(_ chunk: ArraySlice<UInt8>, emit: (HistoryItem) throws -> Void) throws {
        try lines.feed(chunk) { line, number in try Self.read(line, number, emit) }
    }

    package mutating func finish(emit: (HistoryItem) throws -> Void) throws {
        try lines.finish { line, number in try Self.read(line, number, emit) }
    }

    private static func read(_ line: ArraySlice<UInt8>, _ number: Int, _ emit: (HistoryItem) throws -> Void) throws {
        guard line.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { return }
        guard let brace = line.firstIndex(of: UInt8(ascii: "{")) else {
            throw HistoryFileError("not an OwnTracks record (time, `*` or `-`, a JSON message)", at: .line(number))
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(line[brace...]))
        } catch {
            throw HistoryFileError("the message is not JSON (cut short?)", at: .line(number))
        }
        guard let message = object as? [String: Any] else {
            throw HistoryFileError("the message is not a JSON object", at: .line(number))
        }
        try emit(location(message, lineTime: line[..<brace]))
    }

    /// One OwnTracks message as a point (also what the OwnTracks JSON exports hold).
    package static func location(_ message: [String: Any], lineTime: ArraySlice<UInt8>? = nil) -> HistoryItem {
        guard (message["_type"] as? String) == "location" else { return .skipped(.notAPoint) }
        func number(_ key: String) -> Double? {
            switch message[key] {
            case let value as NSNumber: return value.doubleValue
            case let value as String: return HistoryPoints.number(value)
            default: return nil
            }
        }
        var time = number("tst").map { Date(timeIntervalSince1970: $0) }
        if time == nil, let lineTime, let text = String(decoding: lineTime, as: UTF8.self).split(whereSeparator: \.isWhitespace).first {
            time = HistoryTimes.parse(String(text))
        }
        return HistoryPoints.item(latitude: number("lat"), longitude: number("lon"), altitude: number("alt"),
                                  accuracy: number("acc"), speed: number("vel").map { $0 / 3.6 }, course: number("cog"),
                                  time: time, timeGiven: message["tst"] != nil || lineTime != nil, device: message["tid"] as? String)
    }
}
