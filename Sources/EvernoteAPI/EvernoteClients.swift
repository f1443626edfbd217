import Support
/// UserStore calls (`https://HOST/edam/user`). The token is the Thrift argument
/// `authenticationToken`, never an HTTP header: pass it at init or per call (per-call wins).
package final class UserStoreClient: Sendable {
    /// EDAM protocol version this client speaks (IDL 1.28).
    package static let edamVersionMajor: Int16 = 1
    package static let edamVersionMinor: Int16 = 28

    private let service: EvernoteService

    package init(transport: any ThriftTransport, authenticationToken: String? = nil,
                limits: ThriftReaderLimits = .default) {
        service = EvernoteService(transport: transport, authenticationToken: authenticationToken, limits: limits)
    }

    /// `false` means the service considers this client too old: stop and tell the user.
    package func checkVersion(clientName: String,
                             edamVersionMajor: Int16 = UserStoreClient.edamVersionMajor,
                             edamVersionMinor: Int16 = UserStoreClient.edamVersionMinor) async throws -> Bool {
        var args = ThriftBinaryWriter()
        args.writeField(1, clientName)
        args.writeField(2, edamVersionMajor)
        args.writeField(3, edamVersionMinor)
        return try await service.channel.call("checkVersion", arguments: args.bytes, result: .decoded)
    }

    package func getUser(authenticationToken token: String? = nil) async throws -> EDAM.User {
        let args = try service.arguments(token)
        return try await service.channel.call("getUser", arguments: args.bytes, result: .decoded)
    }

    package func getUserUrls(authenticationToken token: String? = nil) async throws -> EDAM.UserUrls {
        let args = try service.arguments(token)
        return try await service.channel.call("getUserUrls", arguments: args.bytes, result: .decoded)
    }
}

/// NoteStore calls (the per-user URL from `getUserUrls().noteStoreUrl` or OAuth's
/// `edam_noteStoreUrl`).
package final class NoteStoreClient: Sendable {
    private let service: EvernoteService

    package init(transport: any ThriftTransport, authenticationToken: String? = nil,
                limits: ThriftReaderLimits = .default) {
        service = EvernoteService(transport: transport, authenticationToken: authenticationToken, limits: limits)
    }

    package func listNotebooks(authenticationToken token: String? = nil) async throws -> [EDAM.Notebook] {
        let args = try service.arguments(token)
        return try await service.channel.call("listNotebooks", arguments: args.bytes, result: .decoded as ThriftResultReader<[EDAM.Notebook]>)
    }

    package func getDefaultNotebook(authenticationToken token: String? = nil) async throws -> EDAM.Notebook {
        let args = try service.arguments(token)
        return try await service.channel.call("getDefaultNotebook", arguments: args.bytes, result: .decoded)
    }

    package func createNotebook(_ notebook: EDAM.Notebook,
                               authenticationToken token: String? = nil) async throws -> EDAM.Notebook {
        var args = try service.arguments(token)
        args.writeField(2, notebook)
        return try await service.channel.call("createNotebook", arguments: args.bytes, result: .decoded)
    }

    package func listTags(authenticationToken token: String? = nil) async throws -> [EDAM.Tag] {
        let args = try service.arguments(token)
        return try await service.channel.call("listTags", arguments: args.bytes, result: .decoded as ThriftResultReader<[EDAM.Tag]>)
    }

    /// Not idempotent: if the reply is lost the note may exist anyway, so a retrying queue should
    /// look for it with `findNotesMetadata` first.
    package func createNote(_ note: EDAM.Note,
                           authenticationToken token: String? = nil) async throws -> EDAM.Note {
        var args = try service.arguments(token)
        args.writeField(2, note)
        return try await service.channel.call("createNote", arguments: args.bytes, result: .decoded)
    }

    /// `offset` is 0-based; the service returns at most 250 notes per call.
    package func findNotesMetadata(filter: EDAM.NoteFilter, offset: Int32, maxNotes: Int32,
                                  resultSpec: EDAM.NotesMetadataResultSpec,
                                  authenticationToken token: String? = nil) async throws -> EDAM.NotesMetadataList {
        var args = try service.arguments(token)
        args.writeField(2, filter)
        args.writeField(3, offset)
        args.writeField(4, maxNotes)
        args.writeField(5, resultSpec)
        return try await service.channel.call("findNotesMetadata", arguments: args.bytes,
                                      result: .decoded)
    }

    package func getNote(guid: EDAM.Guid, withContent: Bool, withResourcesData: Bool,
                        withResourcesRecognition: Bool = false, withResourcesAlternateData: Bool = false,
                        authenticationToken token: String? = nil) async throws -> EDAM.Note {
        var args = try service.arguments(token)
        args.writeField(2, guid)
        args.writeField(3, withContent)
        args.writeField(4, withResourcesData)
        args.writeField(5, withResourcesRecognition)
        args.writeField(6, withResourcesAlternateData)
        return try await service.channel.call("getNote", arguments: args.bytes, result: .decoded)
    }

    /// Moves a note to the trash (`expungeNote` is not open to third-party clients); returns
    /// the account's update sequence number after the change.
    @discardableResult
    package func deleteNote(guid: EDAM.Guid, authenticationToken token: String? = nil) async throws -> Int32 {
        var args = try service.arguments(token)
        args.writeField(2, guid)
        return try await service.channel.call("deleteNote", arguments: args.bytes, result: .decoded)
    }

    /// The value stored under `key` in the note's applicationData (a missing key is
    /// `EvernoteError.notFound`).
    package func getNoteApplicationDataEntry(guid: EDAM.Guid, key: String,
                                            authenticationToken token: String? = nil) async throws -> String {
        var args = try service.arguments(token)
        args.writeField(2, guid)
        args.writeField(3, key)
        return try await service.channel.call("getNoteApplicationDataEntry", arguments: args.bytes, result: .decoded)
    }
}

/// What both stores hold: the channel to their URL and the token a call uses unless given its own.
private struct EvernoteService: Sendable {
    let channel: ThriftServiceChannel
    let authenticationToken: String?

    init(transport: any ThriftTransport, authenticationToken: String?, limits: ThriftReaderLimits) {
        channel = ThriftServiceChannel(transport: transport, limits: limits)
        self.authenticationToken = authenticationToken
    }

    /// Starts an args struct with field 1 `authenticationToken` (the call's own, else the
    /// client's), which every authenticated call has.
    func arguments(_ token: String?) throws(EvernoteError) -> ThriftBinaryWriter {
        guard let token = token ?? authenticationToken, !token.isEmpty else { throw .missingAuthenticationToken }
        var writer = ThriftBinaryWriter()
        writer.writeField(1, token)
        return writer
    }
}
