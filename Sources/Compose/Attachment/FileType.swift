import CMagic
import Foundation
import Synchronization
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A file's MIME type from its content, through libmagic (the database file(1) uses), never from
/// its name: `receipt.pdf` holding a JPEG is `image/jpeg`.
package enum FileType {
    /// What nothing more specific is known about (libmagic's own answer for unknown bytes).
    package static let unknown = "application/octet-stream"

    /// One libmagic cookie for the process: loading the database costs a few milliseconds, and a
    /// cookie is not safe to use from two threads at once, hence the lock.
    /// (A `Mutex` is Sendable whatever it holds: the raw handle is reached only through its lock.)
    private static let cookie: Mutex<magic_t?> = Mutex(openDatabase())

    /// The MIME type of `bytes` ("image/png", "application/pdf", "text/plain"…); `unknown` when
    /// libmagic cannot be used (no database installed), which uploads the file all the same.
    package static func mimeType(of bytes: some ContiguousBytes & Sendable) -> String {
        cookie.withLock { cookie in
            guard let handle = cookie else { return unknown }
            let answer = bytes.withUnsafeBytes { buffer -> String? in
                // An empty buffer is refused by the caller (an empty file is not attached).
                guard let text = magic_buffer(handle, buffer.baseAddress, buffer.count) else { return nil }
                return String(cString: text)
            }
            guard let answer, isEDAMMime(answer) else { return unknown }
            return answer
        }
    }

    /// EDAM_MIME_REGEX (`^[A-Za-z]+/[A-Za-z0-9._+-]+$`) and EDAM_MIME_LEN_MAX: Evernote refuses a
    /// resource whose type breaks them, so libmagic's rarer answers become `unknown`.
    static func isEDAMMime(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard text.utf8.count <= 255, parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return false }
        return parts[0].unicodeScalars.allSatisfy { $0.isASCII && $0.properties.isAlphabetic }
            && parts[1].unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._+-".unicodeScalars.contains($0)) }
    }

    /// The loaded database, kept for the life of the process (never closed: it is needed until exit).
    private static func openDatabase() -> magic_t? {
        guard let handle = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR) else { return nil }
        // NULL: the system's default database (Debian's libmagic-mgc).
        guard magic_load(handle, nil) == 0 else {
            magic_close(handle)
            return nil
        }
        return handle
    }
}
