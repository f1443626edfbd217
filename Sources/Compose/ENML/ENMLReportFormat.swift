import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// How validation results are shown: compiler-style lines for people and editors, or one JSON
/// document for scripts.
package enum ENMLReportFormat {
    /// `PATH:LINE:COL: error: MESSAGE`, one line per problem (messages never span lines).
    package static func compilerLines(for result: ENMLFileResult) -> [String] {
        switch result.outcome {
        case .failure(let error):
            return [error.description]
        case .success(let report):
            return report.diagnostics.map { diagnostic in
                let message = diagnostic.message.replacingOccurrences(of: "\n", with: " ")
                return "\(result.path):\(diagnostic.line):\(diagnostic.column): \(diagnostic.severity.rawValue): \(message) [\(diagnostic.code.rawValue)]"
            }
        }
    }

    package static func json(for results: [ENMLFileResult]) throws -> String {
        let files = results.map(JSONFile.init)
        let document = JSONDocument(valid: results.allSatisfy(\.isValid), files: files)
        return try JSONOutput.encode(document)
    }

    private struct JSONDocument: Encodable {
        var valid: Bool
        var files: [JSONFile]
    }

    private struct JSONFile: Encodable {
        struct Entry: Encodable {
            var line: Int
            var column: Int
            var code: String
            var message: String
        }

        var path: String
        var valid: Bool
        var errors: [Entry]
        var warnings: [Entry]
        /// Set when the file could not be read at all.
        var ioError: String?

        init(_ result: ENMLFileResult) {
            path = result.source.jsonName
            valid = result.isValid
            let diagnostics = (try? result.outcome.get())?.diagnostics ?? []
            func entries(_ severity: ENMLDiagnostic.Severity) -> [Entry] {
                diagnostics.filter { $0.severity == severity }
                    .map { Entry(line: $0.line, column: $0.column, code: $0.code.rawValue, message: $0.message) }
            }
            errors = entries(.error)
            warnings = entries(.warning)
            if case .failure(let error) = result.outcome { ioError = error.reason }
        }
    }
}
