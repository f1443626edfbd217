import Support
import EvernoteAPI
import Configuration
import Network
import Capture
/// One problem found in an ENML document, positioned like a compiler diagnostic.
package struct ENMLDiagnostic: Sendable, Equatable, Codable {
    package enum Severity: String, Sendable, Codable {
        case error
        case warning
    }

    /// Stable identifiers for each kind of problem, usable by scripts (`--json`) and tests.
    package enum Code: String, Sendable, Codable, CaseIterable {
        /// The document is not well-formed XML (libxml2 parser error).
        case xmlSyntax = "xml-syntax"
        /// The document breaks the ENML 2 DTD (libxml2 validity error).
        case dtdValidity = "dtd-validity"
        case missingDoctype = "missing-doctype"
        case wrongDoctype = "wrong-doctype"
        case internalSubset = "internal-subset"
        case invalidUTF8 = "invalid-utf8"
        case notUTF8Encoding = "encoding"
        case controlCharacter = "control-character"
        case contentTooLong = "content-too-long"
        case prohibitedAttribute = "prohibited-attribute"
        case unsafeURL = "unsafe-url"
        case malformedURL = "malformed-url"
        case mediaHash = "media-hash"
        case mediaType = "media-type"
    }

    package var severity: Severity = .error
    package var line: Int
    /// 1-based character column; 0 where libxml2 gives no column.
    package var column: Int
    package var code: Code
    package var message: String
}

/// The verdict on one document.
package struct ENMLReport: Sendable, Equatable {
    package var diagnostics: [ENMLDiagnostic]

    package init(diagnostics: [ENMLDiagnostic]) {
        self.diagnostics = diagnostics
    }

    package var isValid: Bool { !diagnostics.contains { $0.severity == .error } }
    package var errors: [ENMLDiagnostic] { diagnostics.filter { $0.severity == .error } }
}
