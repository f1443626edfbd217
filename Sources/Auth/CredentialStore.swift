import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Support
import EvernoteAPI
import Configuration
import Network

/// What `enlog auth login` stores and every other command reads.
package struct Credentials: Sendable, Codable, Equatable {
    package var service: ServiceKind
    /// The service's base URL (`https://www.evernote.com`, or the custom `--host`).
    package var host: String
    package var authProtocol: AuthProtocolKind
    package var userId: Int?
    package var userName: String?
    package var shard: String?
    package var noteStoreUrl: String?
    package var webApiUrlPrefix: String?
    /// The Thrift `authenticationToken` (OAuth 1.0a `oauth_token`, or OAuth 2.0 claim `mono_authn_token`).
    package var token: String
    package var tokenExpires: Date?
    // OAuth 2.0 only.
    package var accessToken: String?
    package var accessTokenExpires: Date?
    package var refreshToken: String?
    package var refreshTokenExpires: Date?
    package var clientId: String?
    package var tokenEndpoint: String?

    enum CodingKeys: String, CodingKey {
        case service, host, userId = "user_id", userName = "user_name", shard
        case authProtocol = "protocol"
        case noteStoreUrl = "note_store_url", webApiUrlPrefix = "web_api_url_prefix"
        case token, tokenExpires = "token_expires"
        case accessToken = "access_token", accessTokenExpires = "access_token_expires"
        case refreshToken = "refresh_token", refreshTokenExpires = "refresh_token_expires"
        case clientId = "client_id", tokenEndpoint = "token_endpoint"
    }

    package init(service: ServiceKind, host: String, authProtocol: AuthProtocolKind, userId: Int? = nil, userName: String? = nil,
                shard: String? = nil, noteStoreUrl: String? = nil, webApiUrlPrefix: String? = nil, token: String,
                tokenExpires: Date? = nil, accessToken: String? = nil, accessTokenExpires: Date? = nil,
                refreshToken: String? = nil, refreshTokenExpires: Date? = nil, clientId: String? = nil,
                tokenEndpoint: String? = nil) {
        self.service = service
        self.host = host
        self.authProtocol = authProtocol
        self.userId = userId
        self.userName = userName
        self.shard = shard
        self.noteStoreUrl = noteStoreUrl
        self.webApiUrlPrefix = webApiUrlPrefix
        self.token = token
        self.tokenExpires = tokenExpires
        self.accessToken = accessToken
        self.accessTokenExpires = accessTokenExpires
        self.refreshToken = refreshToken
        self.refreshTokenExpires = refreshTokenExpires
        self.clientId = clientId
        self.tokenEndpoint = tokenEndpoint
    }

    /// UserStore URL for this service.
    package var userStoreUrl: String { host + "/edam/user" }

    /// "29 days 3 hours", "3 hours 12 minutes", "4 minutes".
    static func span(_ seconds: TimeInterval) -> String {
        let minutes = Int(seconds / 60), hours = minutes / 60, days = hours / 24
        func unit(_ count: Int, _ name: String) -> String { "\(count) \(name)\(count == 1 ? "" : "s")" }
        if days > 0 { return unit(days, "day") + " " + unit(hours % 24, "hour") }
        if hours > 0 { return unit(hours, "hour") + " " + unit(minutes % 60, "minute") }
        return unit(max(minutes, 0), "minute")
    }

    /// When the token expires: as the sign-in said, else as the token's own `E=` field says (a
    /// token given with `auth token` carries its expiry there).
    package var tokenExpiry: Date? { tokenExpires ?? ClassicToken(token).expires }

    /// For `enlog auth status`: every field except the tokens (and never a fragment of one).
    package func redacted(now: Date = Date()) -> String {
        func when(_ date: Date?) -> String {
            guard let date else { return "unknown" }
            let stamp = InstantText.string(date)
            return date <= now ? "\(stamp) (expired)" : "\(stamp) (in \(Self.span(date.timeIntervalSince(now))))"
        }
        var lines = [
            "service: \(service.rawValue)",
            "host: \(host)",
            "protocol: \(authProtocol.displayName)",
        ]
        if let userId { lines.append("user id: \(userId)") }
        if let userName { lines.append("user: \(userName)") }
        if let shard { lines.append("shard: \(shard)") }
        if let noteStoreUrl { lines.append("note store: \(noteStoreUrl)") }
        lines.append("token: present (hidden), expires \(when(tokenExpiry))")
        if authProtocol == .oauth2 {
            lines.append("access token expires: \(when(accessTokenExpires))")
            lines.append("refresh token: \(refreshToken == nil ? "none" : "present (hidden), expires \(when(refreshTokenExpires))")")
        }
        return lines.joined(separator: "\n")
    }
}

/// The credentials file: JSON, mode 0600, written atomically, refused when others can read it.
package struct CredentialStore: Sendable {
    package let path: String

    /// `path` is normally `$XDG_CONFIG_HOME/enlog/credentials.json`.
    package init(path: String) {
        self.path = path
    }

    /// `$XDG_CONFIG_HOME/enlog/credentials.json`, `~/.config/enlog/credentials.json` without it.
    package static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return config + "/enlog/credentials.json"
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// Reads the credentials; `credentialsMissing` when there are none.
    package func load() throws -> Credentials {
        guard let credentials = try loadIfPresent() else { throw AuthError.credentialsMissing(path: path) }
        return credentials
    }

    package func loadIfPresent() throws -> Credentials? {
        let (bytes, status): ([UInt8], stat)
        do {
            (bytes, status) = try FileBytes.read(pathBytes: Array(path.utf8), limit: .smallText, accepting: .regularFilesOnly, followLinks: false)
        } catch {
            if error == .system(ENOENT) { return nil }
            throw AuthError.credentialsUnreadable(path: path, detail: error.reason)
        }
        if status.st_mode & 0o077 != 0 {
            throw AuthError.credentialsInsecure(path: path, mode: String(status.st_mode & 0o7777, radix: 8))
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(Credentials.self, from: Data(bytes))
        } catch {
            throw AuthError.credentialsInvalid(path: path)
        }
    }

    /// Writes atomically: a 0600 temp file in the same directory, fsync, rename, fsync the directory.
    /// A missing parent directory is created with mode 0700.
    package func save(_ credentials: Credentials) throws {
        let data: Data
        do { data = try Self.encoder().encode(credentials) } catch {
            throw AuthError.credentialsUnwritable(path: path, detail: "cannot encode")
        }
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        try makeDirectory(directory)
        var template = Array((directory + "/.credentials.json.XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw failure("cannot create a temporary file") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let tempPath = String(nulTerminated: template)
        var renamed = false
        defer {
            if !renamed { unlink(tempPath) }
        }
        do {
            defer { Glibc.close(fd) }
            // mkstemp creates 0600 already; fchmod makes it explicit and umask-proof.
            guard fchmod(fd, 0o600) == 0 else { throw failure("chmod") }
            var offset = 0
            let bytes = [UInt8](data) + [10]
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw failure("write")
                }
                offset += written
            }
            guard fsync(fd) == 0 else { throw failure("fsync") }
        }
        guard rename(tempPath, path) == 0 else { throw failure("rename") }
        renamed = true
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            fsync(dirFD)
            Glibc.close(dirFD)
        }
    }

    /// Removes the file (logout). Returns whether there was one.
    @discardableResult
    package func delete() throws -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw failure("delete")
    }

    private func makeDirectory(_ directory: String) throws {
        var status = stat()
        if stat(directory, &status) == 0 { return }
        let parent = (directory as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != directory { try makeDirectory(parent) }
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw failure("mkdir \(directory)") }
        chmod(directory, 0o700)
    }

    private func failure(_ what: String) -> AuthError {
        AuthError.credentialsUnwritable(path: path, detail: "\(what): \(String(cString: strerror(errno)))")
    }
}
