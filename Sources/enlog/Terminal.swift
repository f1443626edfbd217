import Support
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
import Watch

/// Every command's output: lines and bytes on standard output, which can fail (`OutputError`,
/// exit 74, or a quiet end when a pipe's reader is gone), and messages on standard error.
enum Terminal {
    static func standardError(_ text: String) {
        StandardError.line(text)
    }

    static func standardOutput(_ text: String) throws(OutputError) {
        try StandardOutput.line(text)
    }

    static func standardOutput(bytes: Data) throws(OutputError) {
        try StandardOutput.write(bytes)
    }
}
