import CLibXML2
import Foundation

/// libxml2's error text made fit for a user: one line, and its limits stated as limits, not as
/// advice to turn them off ("Excessive depth in document: 256 use XML_PARSE_HUGE option"), which
/// a user cannot act on and enlog deliberately never does, nor in libxml2's internal words
/// ("internal error: Huge input lookup" for a tag with a million attributes, which reads as a bug
/// in enlog). Every reader of libxml2's errors (the ENML validator, the GPX and KML readers) goes
/// through here.
package enum LibXMLMessage {
    /// libxml2's limit on one piece of a document (a tag with its attributes, a text, a name)
    /// without XML_PARSE_HUGE: XML_MAX_TEXT_LENGTH, and the lookahead of its input buffer.
    package static let pieceLimit = "10,000,000"

    package static func text(of error: xmlError) -> String {
        let raw = error.message.map { String(cString: $0) } ?? "libxml2 error \(error.code)"
        return text(raw)
    }

    package static func text(_ raw: String) -> String {
        var message = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        let hinted = message.range(of: "use XML_PARSE_HUGE option", options: .caseInsensitive)
        if let hinted {
            message.removeSubrange(hinted)
            message = message.trimmingCharacters(in: CharacterSet(charactersIn: " ,;:"))
        }
        if let depth = message.range(of: "Excessive depth in document: ") {
            return "elements nested more than \(message[depth.upperBound...]) deep (libxml2's limit)"
        }
        // The limits libxml2 words as an internal error or a failed allocation.
        let lowered = message.lowercased()
        if lowered.contains("huge input lookup") {
            return "a tag, text or attribute longer than libxml2's limit of \(pieceLimit) bytes (a tag with too many attributes?)"
        }
        if lowered.contains("huge text node") {
            return "a text longer than libxml2's limit of \(pieceLimit) bytes"
        }
        // Whatever else libxml2 calls internal: its own words, not enlog's "internal error"
        // (which means a bug in enlog, exit 70).
        for prefix in ["internal error: ", "internal error : "] where lowered.hasPrefix(prefix) {
            message = "libxml2 could not go on: " + message.dropFirst(prefix.count)
        }
        if hinted != nil || ["too long", "too big", "too large", "too many"].contains(where: { lowered.contains($0) }) {
            return message + " (over libxml2's limit)"
        }
        return message
    }
}
