import Foundation
import Support

/// Every command's output: lines and bytes on standard output, which can fail (`OutputError`,
/// exit 74, or a quiet end when a pipe's reader is gone), and messages on standard error.
package enum Terminal {
    package static func standardError(_ text: String) {
        StandardError.line(text)
    }

    package static func standardOutput(_ text: String) throws(OutputError) {
        try StandardOutput.line(text)
    }

    package static func standardOutput(bytes: Data) throws(OutputError) {
        try StandardOutput.write(bytes)
    }
}
