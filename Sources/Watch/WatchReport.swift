import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary
import Sync

/// One thing `watch` says: a line on stderr, or with `--json` one JSON object per line.
package struct WatchReport: Sendable, Equatable {
    package enum Level: String, Sendable {
        /// Printed always.
        case event
        /// Printed with `-v` only.
        case detail
        /// A problem: printed always, as `enlog: …`.
        case problem
    }

    package enum Value: Sendable, Encodable, Equatable {
        case string(String), int(Int), double(Double), bool(Bool)

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .int(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            }
        }
    }

    package var level: Level
    /// A stable name scripts and tests match on: `started`, `gpsd-connected`, `gpsd-lost`,
    /// `fix`, `noted`, `network-change`, `reachability`, `synced`, `reloaded`, `stopped`…
    package var event: String
    package var message: String
    package var fields: [String: Value]
    package var time: Date

    package init(_ level: Level, _ event: String, _ message: String, _ fields: [String: Value] = [:], time: Date = Date()) {
        self.level = level
        self.event = event
        self.message = message
        self.fields = fields
        self.time = time
    }

    /// One line of JSON: `{"event":…,"level":…,"message":…,"time":…, fields…}`, keys sorted.
    package var json: String {
        var object = fields
        object["event"] = .string(event)
        object["level"] = .string(level.rawValue)
        object["message"] = .string(message)
        object["time"] = .string(InstantText.string(time))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(object), as: UTF8.self)) ?? #"{"event":"unencodable"}"#
    }

    /// The line for a person: `enlog: MESSAGE`.
    package var line: String { "enlog: " + message }
}
