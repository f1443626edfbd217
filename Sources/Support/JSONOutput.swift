import Foundation

/// The one form every `--json` output takes: indented, keys sorted (stable for scripts and
/// diffs), dates in ISO 8601, slashes left alone.
package enum JSONOutput {
    package static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(InstantText.string(date))
        }
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
