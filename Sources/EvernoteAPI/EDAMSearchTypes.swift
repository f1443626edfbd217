import Support
// EDAM search structs (IDL NoteStore.thrift) for findNotesMetadata, which a sync engine uses to
// list notes and to look for a note whose createNote reply was lost before retrying.

extension EDAM {
    package struct NoteFilter: Sendable, Hashable {
        /// NoteSortOrder: 1 CREATED, 2 UPDATED, 3 RELEVANCE, 4 UPDATE_SEQUENCE_NUMBER, 5 TITLE.
        package var order: Int32?
        package var ascending: Bool?
        /// Evernote search grammar.
        package var words: String?
        package var notebookGuid: Guid?
        package var tagGuids: [Guid]?
        package var timeZone: String?
        /// true = only notes in the trash.
        package var inactive: Bool?
        package var emphasized: String?
        package var includeAllReadableNotebooks: Bool?
        package var context: String?
        package var rawWords: String?
        package var searchContextBytes: [UInt8]?
        package var includeAllReadableWorkspaces: Bool?

        package init(order: Int32? = nil, ascending: Bool? = nil, words: String? = nil,
                    notebookGuid: Guid? = nil) {
            self.order = order
            self.ascending = ascending
            self.words = words
            self.notebookGuid = notebookGuid
        }
    }

    package struct NotesMetadataResultSpec: Sendable, Hashable {
        package var includeTitle: Bool?
        package var includeContentLength: Bool?
        package var includeCreated: Bool?
        package var includeUpdated: Bool?
        package var includeDeleted: Bool?
        package var includeUpdateSequenceNum: Bool?
        package var includeNotebookGuid: Bool?
        package var includeTagGuids: Bool?
        package var includeAttributes: Bool?
        package var includeLargestResourceMime: Bool?
        package var includeLargestResourceSize: Bool?

        package init(includeTitle: Bool? = nil, includeCreated: Bool? = nil,
                    includeUpdated: Bool? = nil, includeNotebookGuid: Bool? = nil,
                    includeAttributes: Bool? = nil) {
            self.includeTitle = includeTitle
            self.includeCreated = includeCreated
            self.includeUpdated = includeUpdated
            self.includeNotebookGuid = includeNotebookGuid
            self.includeAttributes = includeAttributes
        }
    }

    package struct NoteMetadata: Sendable, Hashable {
        package var guid: Guid
        package var title: String?
        package var contentLength: Int32?
        package var created: Timestamp?
        package var updated: Timestamp?
        package var deleted: Timestamp?
        package var updateSequenceNum: Int32?
        package var notebookGuid: Guid?
        package var tagGuids: [Guid]?
        package var attributes: NoteAttributes?
        package var largestResourceMime: String?
        package var largestResourceSize: Int32?

        package init(guid: Guid) {
            self.guid = guid
        }
    }

    package struct NotesMetadataList: Sendable, Hashable {
        package var startIndex: Int32
        package var totalNotes: Int32
        package var notes: [NoteMetadata]
        package var stoppedWords: [String]?
        package var searchedWords: [String]?
        package var updateCount: Int32?
        package var searchContextBytes: [UInt8]?
        package var debugInfo: String?

        package init(startIndex: Int32, totalNotes: Int32, notes: [NoteMetadata]) {
            self.startIndex = startIndex
            self.totalNotes = totalNotes
            self.notes = notes
        }
    }
}

// MARK: - Codec

extension EDAM.NoteFilter: ThriftStruct {
    package static let thriftName = "NoteFilter"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "order", \.order),
        .init(2, "ascending", \.ascending),
        .init(3, "words", \.words),
        .init(4, "notebookGuid", \.notebookGuid),
        .init(5, "tagGuids", \.tagGuids),
        .init(6, "timeZone", \.timeZone),
        .init(7, "inactive", \.inactive),
        .init(8, "emphasized", \.emphasized),
        .init(9, "includeAllReadableNotebooks", \.includeAllReadableNotebooks),
        .init(10, "context", \.context),
        .init(11, "rawWords", \.rawWords),
        .init(12, "searchContextBytes", binary: \.searchContextBytes),
        .init(15, "includeAllReadableWorkspaces", \.includeAllReadableWorkspaces),
    ]
}

extension EDAM.NotesMetadataResultSpec: ThriftStruct {
    package static let thriftName = "NotesMetadataResultSpec"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(2, "includeTitle", \.includeTitle),
        .init(5, "includeContentLength", \.includeContentLength),
        .init(6, "includeCreated", \.includeCreated),
        .init(7, "includeUpdated", \.includeUpdated),
        .init(8, "includeDeleted", \.includeDeleted),
        .init(10, "includeUpdateSequenceNum", \.includeUpdateSequenceNum),
        .init(11, "includeNotebookGuid", \.includeNotebookGuid),
        .init(12, "includeTagGuids", \.includeTagGuids),
        .init(14, "includeAttributes", \.includeAttributes),
        .init(20, "includeLargestResourceMime", \.includeLargestResourceMime),
        .init(21, "includeLargestResourceSize", \.includeLargestResourceSize),
    ]
}

extension EDAM.NoteMetadata: ThriftStruct {
    package static let thriftName = "NoteMetadata"
    package static var decodingStart: Self { Self(guid: "") }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "guid", required: \.guid),
        .init(2, "title", \.title),
        .init(5, "contentLength", \.contentLength),
        .init(6, "created", \.created),
        .init(7, "updated", \.updated),
        .init(8, "deleted", \.deleted),
        .init(10, "updateSequenceNum", \.updateSequenceNum),
        .init(11, "notebookGuid", \.notebookGuid),
        .init(12, "tagGuids", \.tagGuids),
        .init(14, "attributes", \.attributes),
        .init(20, "largestResourceMime", \.largestResourceMime),
        .init(21, "largestResourceSize", \.largestResourceSize),
    ]
}

extension EDAM.NotesMetadataList: ThriftStruct {
    package static let thriftName = "NotesMetadataList"
    package static var decodingStart: Self { Self(startIndex: 0, totalNotes: 0, notes: []) }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "startIndex", required: \.startIndex),
        .init(2, "totalNotes", required: \.totalNotes),
        .init(3, "notes", required: \.notes),
        .init(4, "stoppedWords", \.stoppedWords),
        .init(5, "searchedWords", \.searchedWords),
        .init(6, "updateCount", \.updateCount),
        .init(7, "searchContextBytes", binary: \.searchContextBytes),
        .init(9, "debugInfo", \.debugInfo),
    ]
}
