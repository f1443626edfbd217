import Auth
import Compose
import Configuration
import Diary
import EvernoteAPI
import Foundation
import Network

/// What comes from the services and the user's settings: Evernote's replies, sign-ins, config.
extension FuzzTarget {
    /// How the client decodes the reply to each call it makes (the reply's own name and seqid
    /// are taken, so that mutations reach the result instead of stopping at the header check).
    private static let replyDecoders: [String: @Sendable ([UInt8], Int32) throws -> Void] = [
        "checkVersion": { _ = try ThriftRPC.decodeReply($0, method: "checkVersion", seqid: $1, result: .decoded as ThriftResultReader<Bool>) },
        "getUser": { _ = try ThriftRPC.decodeReply($0, method: "getUser", seqid: $1, result: .decoded as ThriftResultReader<EDAM.User>) },
        "getUserUrls": {
            _ = try ThriftRPC.decodeReply($0, method: "getUserUrls", seqid: $1, result: .decoded as ThriftResultReader<EDAM.UserUrls>)
        },
        "listNotebooks": { _ = try ThriftRPC.decodeReply($0, method: "listNotebooks", seqid: $1, result: .decoded as ThriftResultReader<[EDAM.Notebook]>) },
        "getDefaultNotebook": {
            _ = try ThriftRPC.decodeReply($0, method: "getDefaultNotebook", seqid: $1, result: .decoded as ThriftResultReader<EDAM.Notebook>)
        },
        "createNotebook": {
            _ = try ThriftRPC.decodeReply($0, method: "createNotebook", seqid: $1, result: .decoded as ThriftResultReader<EDAM.Notebook>)
        },
        "listTags": { _ = try ThriftRPC.decodeReply($0, method: "listTags", seqid: $1, result: .decoded as ThriftResultReader<[EDAM.Tag]>) },
        "createNote": { _ = try ThriftRPC.decodeReply($0, method: "createNote", seqid: $1, result: .decoded as ThriftResultReader<EDAM.Note>) },
        "findNotesMetadata": {
            _ = try ThriftRPC.decodeReply($0, method: "findNotesMetadata", seqid: $1,
                                          result: .decoded as ThriftResultReader<EDAM.NotesMetadataList>)
        },
        "getNote": { _ = try ThriftRPC.decodeReply($0, method: "getNote", seqid: $1, result: .decoded as ThriftResultReader<EDAM.Note>) },
        "deleteNote": { _ = try ThriftRPC.decodeReply($0, method: "deleteNote", seqid: $1, result: .decoded as ThriftResultReader<Int32>) },
        "getNoteApplicationDataEntry": { _ = try ThriftRPC.decodeReply($0, method: "getNoteApplicationDataEntry", seqid: $1, result: .decoded as ThriftResultReader<String>) },
    ]

    /// A reply from an Evernote server (a NoteStore or UserStore Thrift message), decoded as the
    /// client decodes the reply to the call it names (one naming no call: as createNote's);
    /// every failure is an `EvernoteError` with its one-line reason.
    package static let thrift = FuzzTarget("thrift") { bytes throws(FuzzFinding) in
        var peek = ThriftBinaryReader(bytes)
        let header = try? peek.readMessageBegin()
        let decode = header.flatMap { replyDecoders[$0.name] } ?? replyDecoders["createNote"]!
        do {
            try decode(bytes, header?.seqid ?? 1)
        } catch {
            try explain(error)
        }
    }

    private static let state = "Zm9vYmFyLXN0YXRl"
    private static let temporaryToken = "en-temp-token"

    /// Every answer a sign-in reads from outside, fed the same bytes: the browser's request to
    /// the loopback listener (request line, callback query), a redirect URL pasted by the user,
    /// the token endpoint's JSON (with the JWTs in it), the OAuth 1.0a token response and the
    /// authorization server's metadata. Each gives a value or an `AuthError`, the errors the
    /// command line explains.
    package static let oauth = FuzzTarget("oauth") { bytes throws(FuzzFinding) in
        let text = String(decoding: bytes, as: UTF8.self)
        if let target = LoopbackCallbackListener.requestTarget(ofHead: text) {
            let callback = CallbackParameters(requestTarget: target)
            try expectAuthError { _ = try OAuth2.code(from: callback, expectedState: state) }
            try expectAuthError { _ = try OAuth1.verifier(from: callback, expectedToken: temporaryToken) }
        }
        try expectAuthError { _ = OAuth2.classifyCallback(try CallbackParameters.parsePastedURL(text), expectedState: state) }
        try expectAuthError { _ = try OAuth2TokenSet.parse(bytes, now: Date(timeIntervalSince1970: 1_764_000_000)) }
        try expectAuthError { _ = try OAuth1TokenResponse.parse(text) }
        if let metadata = try? JSONDecoder().decode(OAuth2ServerMetadata.self, from: Data(bytes)) {
            _ = OAuth2.authorizationURL(metadata: metadata, clientId: "enlog", redirectURI: "http://127.0.0.1:1/oauth_callback",
                                        state: state, pkce: PKCE(verifier: String(repeating: "v", count: 43)))
        }
    }

    private static func expectAuthError(_ parse: () throws -> Void) throws(FuzzFinding) {
        do {
            try parse()
        } catch let error as AuthError {
            try explain(error)
        } catch {
            throw FuzzFinding(description: "not an AuthError: \(error)")
        }
    }

    private static let paths = XDGPaths(environment: ["HOME": "/nonexistent"])

    /// A config.toml, read as every command reads it (with every concern's checks of its
    /// values), then every setting taken in every form, the services' settings built from
    /// them, and `enlog config show`. A file that is refused is refused with a `ConfigError`.
    package static let config = FuzzTarget("config") { bytes throws(FuzzFinding) in
        let config: Config
        do {
            config = try Config(filePath: "fuzz.toml", fileContents: bytes, paths: paths, environment: [:], checks: SettingChecks.all)
        } catch {
            try explain(error)
            return
        }
        for setting in Setting.all {
            _ = (config.string(setting), config.list(setting), config.boolean(setting))
            if setting.range != nil { _ = (config.number(setting), config.integer(setting), config.duration(setting)) }
        }
        _ = (NoteStyle(config: config), MapSettings(config: config), HTTPConfiguration(config: config), WatchThresholds(config: config))
        _ = ConfigReport.text(config)
        _ = try? ConfigReport.json(config)
    }
}
