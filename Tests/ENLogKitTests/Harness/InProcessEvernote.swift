import Foundation
import Synchronization
@testable import EvernoteAPI
@testable import Capture

/// An Evernote account in memory, behind the `ThriftTransport` seam: every CALL is decoded with
/// enlog's own codec and answered the way the service does (REPLY with the result, or the declared
/// EDAMUserException), for fast tests that need no process. The SDK-based server in
/// Tests/support remains the independent check.
final class InProcessEvernote: ThriftTransport, Sendable {
    struct ConnectionLost: Error {}

    let token: String
    private let account: Mutex<Account>

    init(token: String) {
        self.token = token
        var account = Account()
        account.notebooks[0].guid = UUID().uuidString.lowercased()
        account.notebooks[0].defaultNotebook = true
        self.account = Mutex(account)
    }

    var notes: [EDAM.Note] { account.withLock { $0.stored } }

    /// The `n`th createNote (1-based) stores its note, then loses the connection before replying.
    func dropReply(toCreate n: Int) { account.withLock { _ = $0.createsToDrop.insert(n) } }

    func roundTrip(_ request: [UInt8]) async throws -> [UInt8] {
        let token = self.token
        return try account.withLock { try $0.answer(request, token: token) }
    }
}

/// The account's contents; one call at a time changes them.
private struct Account {
    var notebooks = [EDAM.Notebook(name: "First Notebook")]
    var stored: [EDAM.Note] = []
    var usn: Int32 = 0
    var createsToDrop: Set<Int> = []
    var createCalls = 0

    mutating func answer(_ request: [UInt8], token: String) throws -> [UInt8] {
        var reader = ThriftBinaryReader(request)
        let call = try reader.readMessageBegin()
        var arguments = Arguments()
        try reader.readStructBegin()
        while let field = try reader.readFieldBegin() {
            switch (call.name, field.id, field.type) {
            case (_, 1, .string): arguments.token = try reader.readString()
            case ("createNote", 2, .struct): arguments.note = try EDAM.Note(from: &reader)
            case ("createNotebook", 2, .struct): arguments.notebook = try EDAM.Notebook(from: &reader)
            case ("findNotesMetadata", 2, .struct): arguments.filter = try EDAM.NoteFilter(from: &reader)
            case ("getNoteApplicationDataEntry", 2, .string): arguments.guid = try reader.readString()
            case ("getNoteApplicationDataEntry", 3, .string): arguments.key = try reader.readString()
            default: try reader.skip(field.type)
            }
        }
        var reply = ThriftBinaryWriter()
        reply.writeMessageBegin(name: call.name, type: .reply, seqid: call.seqid)
        guard arguments.token == token else {
            reply.writeField(1, EDAM.UserException(errorCode: .invalidAuth, parameter: "authenticationToken"))
            reply.writeFieldStop()
            return reply.bytes
        }
        switch call.name {
        case "listNotebooks":
            reply.writeField(0, notebooks)
        case "createNotebook":
            var notebook = arguments.notebook ?? EDAM.Notebook()
            guard !notebooks.contains(where: { $0.name?.lowercased() == notebook.name?.lowercased() }) else {
                reply.writeField(1, EDAM.UserException(errorCode: .dataConflict, parameter: "Notebook.name"))
                break
            }
            notebook.guid = UUID().uuidString.lowercased()
            notebooks.append(notebook)
            reply.writeField(0, notebook)
        case "createNote":
            createCalls += 1
            var note = arguments.note ?? EDAM.Note()
            usn += 1
            note.guid = UUID().uuidString.lowercased()
            note.updateSequenceNum = usn
            note.notebookGuid = note.notebookGuid ?? notebooks[0].guid
            stored.append(note)
            if createsToDrop.remove(createCalls) != nil { throw InProcessEvernote.ConnectionLost() }
            reply.writeField(0, note)
        case "findNotesMetadata":
            // The grammar the sync engine uses: `applicationData:KEY`, within a notebook.
            let key = arguments.filter?.words.flatMap { $0.hasPrefix("applicationData:") ? String($0.dropFirst(16)) : nil }
            let matches = stored.filter { note in
                (arguments.filter?.notebookGuid == nil || note.notebookGuid == arguments.filter?.notebookGuid)
                    && (key == nil || note.attributes?.applicationData?.fullMap?[key!] != nil)
            }
            let metadata = matches.reversed().map { note -> EDAM.NoteMetadata in
                var item = EDAM.NoteMetadata(guid: note.guid!)
                item.created = note.created
                item.notebookGuid = note.notebookGuid
                var attributes = EDAM.NoteAttributes()
                attributes.applicationData = EDAM.LazyMap(keysOnly: Set(note.attributes?.applicationData?.fullMap?.keys ?? [:].keys))
                item.attributes = attributes
                return item
            }
            reply.writeField(0, EDAM.NotesMetadataList(startIndex: 0, totalNotes: Int32(metadata.count), notes: metadata))
        case "getNoteApplicationDataEntry":
            guard let value = stored.first(where: { $0.guid == arguments.guid })?.attributes?.applicationData?.fullMap?[arguments.key ?? ""] else {
                reply.writeField(3, EDAM.NotFoundException(identifier: "NoteAttributes.applicationData", key: arguments.key))
                break
            }
            reply.writeField(0, value)
        default:
            reply.writeFieldStop()
            var unknown = ThriftBinaryWriter()
            unknown.writeMessageBegin(name: call.name, type: .exception, seqid: call.seqid)
            unknown.writeField(1, "unknown method \(call.name)")
            unknown.writeField(2, Int32(1))
            unknown.writeFieldStop()
            return unknown.bytes
        }
        reply.writeFieldStop()
        return reply.bytes
    }

    private struct Arguments {
        var token: String?
        var note: EDAM.Note?
        var notebook: EDAM.Notebook?
        var filter: EDAM.NoteFilter?
        var guid: String?
        var key: String?
    }
}
