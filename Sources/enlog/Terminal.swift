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

enum Terminal {
    static func standardError(_ text: String) {
        FileHandle.standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    static func standardOutput(_ text: String) {
        FileHandle.standardOutput.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }
}
