import Foundation
import Crypto
import Support
import Outbox

/// A device's secret: 32 random bytes as 43 URL-safe base64 characters (they go into URLs,
/// passwords and tokens unchanged), shown once by `enlog devices add` and stored only as its
/// SHA-256. A secret that random needs no slow hash: nothing can be guessed from its digest.
package enum DeviceSecrets {
    package static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    package static func hash(_ secret: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Whether `secret` is the one `stored` is the hash of. Always hashes and compares every
    /// byte, also when there is no device (`stored` nil: compared with a hash no secret has), so
    /// a wrong name and a wrong secret take the same time.
    package static func matches(_ secret: String?, stored: [UInt8]?) -> Bool {
        let presented = hash(secret ?? "")
        let expected = stored ?? unmatchable
        guard expected.count == presented.count else { return false }
        var difference: UInt8 = 0
        for index in presented.indices { difference |= presented[index] ^ expected[index] }
        return difference == 0 && stored != nil && secret != nil
    }

    /// 32 bytes no SHA-256 of a secret is known to give.
    private static let unmatchable = [UInt8](repeating: 0, count: 32)

    /// What a device name may be: it goes into URLs, usernames and the history, so letters,
    /// digits, `-`, `_` and `.`, 1 to 64 of them.
    package static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F || byte == 0x2E
        } && name != "." && name != ".."
    }
}
