import Foundation
import Support
import EvernoteAPI
import Configuration
import Network

/// JSON for `enlog auth status --json` and `enlog notebooks --json`; tokens never appear.
package enum AccountReport {
    struct Status: Encodable {
        var signedIn = true
        var service: String
        var host: String
        var `protocol`: String
        var userId: Int?
        var user: String?
        var shard: String?
        var noteStoreUrl: String?
        var tokenExpires: Date?
        var tokenSecondsLeft: Int?
        var refreshable: Bool
    }

    struct Notebook: Encodable {
        var guid: String?
        var name: String?
        var stack: String?
        var isDefault: Bool
    }

    package static func json(_ credentials: Credentials, now: Date = Date()) throws -> String {
        try JSONOutput.encode(Status(service: credentials.service.rawValue, host: credentials.host,
                          protocol: credentials.authProtocol.rawValue, userId: credentials.userId,
                          user: credentials.userName, shard: credentials.shard, noteStoreUrl: credentials.noteStoreUrl,
                          tokenExpires: credentials.tokenExpiry,
                          tokenSecondsLeft: credentials.tokenExpiry.map { Int($0.timeIntervalSince(now)) },
                          refreshable: credentials.refreshToken != nil))
    }

    /// What `auth status --json` answers when there is no account: still JSON, so a script
    /// reads `signedIn` either way.
    package static func signedOutJSON(credentialsFile: String) throws -> String {
        struct SignedOut: Encodable {
            var signedIn = false
            var credentialsFile: String
        }
        return try JSONOutput.encode(SignedOut(credentialsFile: credentialsFile))
    }

    package static func json(_ notebooks: [EDAM.Notebook]) throws -> String {
        try JSONOutput.encode(notebooks.map { Notebook(guid: $0.guid, name: $0.name, stack: $0.stack, isDefault: $0.defaultNotebook ?? false) })
    }

}
