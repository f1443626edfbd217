import CLibXML2
import Foundation

/// libxml2's error text made fit for a user: one line, and its limits stated as limits, not as
/// advice to turn them off ("Excessive depth in document: 256 use XML_PARSE_HUGE option"), which
/// a user cannot act on and enlog deliberately never does. Every reader of libxml2's errors (the
/// ENML validator, the GPX reader) goes through here.
package enum LibXMLMessage {
    package static func text(of error: xmlError) -> String {
        let raw = error.message.map { String(cString: $0) } ?? "libxml2 error \(error.code)"
        return text(raw)
    }

    package static func text(_ raw: String) -> String {
        var message = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let hint = message.range(of: "use XML_PARSE_HUGE option", options: .caseInsensitive) else { return message }
        message.removeSubrange(hint)
        message = message.trimmingCharacters(in: CharacterSet(charactersIn: " ,;:"))
        if let depth = message.range(of: "Excessive depth in document: ") {
            return "elements nested more than \(message[depth.upperBound...]) deep (libxml2's limit)"
        }
        return message + " (over libxml2's limit)"
    }
}
