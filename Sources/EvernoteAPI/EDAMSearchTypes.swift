import Support
// EDAM search structs (IDL NoteStore.thrift) for findNotesMetadata, which a sync engine uses to
// list notes and to look for a note whose createNote reply was lost before retrying.

extension EDAM {
    public struct NoteFilter: Sendable, Hashable {
        /// NoteSortOrder: 1 CREATED, 2 UPDATED, 3 RELEVANCE, 4 UPDATE_SEQUENCE_NUMBER, 5 TITLE.
        public var order: Int32?
        public var ascending: Bool?
        /// Evernote search grammar.
        public var words: String?
        public var notebookGuid: Guid?
        public var tagGuids: [Guid]?
        public var timeZone: String?
        /// true = only notes in the trash.
        public var inactive: Bool?
        public var emphasized: String?
        public var includeAllReadableNotebooks: Bool?
        public var context: String?
        public var rawWords: String?
        public var searchContextBytes: [UInt8]?
        public var includeAllReadableWorkspaces: Bool?

        public init(order: Int32? = nil, ascending: Bool? = nil, words: String? = nil,
                    notebookGuid: Guid? = nil) {
            self.order = order
            self.ascending = ascending
            self.words = words
            self.notebookGuid = notebookGuid
        }
    }

    public struct NotesMetadataResultSpec: Sendable, Hashable {
        public var includeTitle: Bool?
        public var includeContentLength: Bool?
        public var includeCreated: Bool?
        public var includeUpdated: Bool?
        public var includeDeleted: Bool?
        public var includeUpdateSequenceNum: Bool?
        public var includeNotebookGuid: Bool?
        public var includeTagGuids: Bool?
        public var includeAttributes: Bool?
        public var includeLargestResourceMime: Bool?
        public var includeLargestResourceSize: Bool?

        public init(includeTitle: Bool? = nil, includeCreated: Bool? = nil,
                    includeUpdated: Bool? = nil, includeNotebookGuid: Bool? = nil,
                    includeAttributes: Bool? = nil) {
            self.includeTitle = includeTitle
            self.includeCreated = includeCreated
            self.includeUpdated = includeUpdated
            self.includeNotebookGuid = includeNotebookGuid
            self.includeAttributes = includeAttributes
        }
    }

    public struct NoteMetadata: Sendable, Hashable {
        public var guid: Guid
        public var title: String?
        public var contentLength: Int32?
        public var created: Timestamp?
        public var updated: Timestamp?
        public var deleted: Timestamp?
        public var updateSequenceNum: Int32?
        public var notebookGuid: Guid?
        public var tagGuids: [Guid]?
        public var attributes: NoteAttributes?
        public var largestResourceMime: String?
        public var largestResourceSize: Int32?

        public init(guid: Guid) {
            self.guid = guid
        }
    }

    public struct NotesMetadataList: Sendable, Hashable {
        public var startIndex: Int32
        public var totalNotes: Int32
        public var notes: [NoteMetadata]
        public var stoppedWords: [String]?
        public var searchedWords: [String]?
        public var updateCount: Int32?
        public var searchContextBytes: [UInt8]?
        public var debugInfo: String?

        public init(startIndex: Int32, totalNotes: Int32, notes: [NoteMetadata]) {
            self.startIndex = startIndex
            self.totalNotes = totalNotes
            self.notes = notes
        }
    }
}

// MARK: - Codec

extension EDAM.NoteFilter: ThriftStruct {
    public static let thriftName = "NoteFilter"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
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
    public static let thriftName = "NotesMetadataResultSpec"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
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
    public static let thriftName = "NoteMetadata"
    public static var decodingStart: Self { Self(guid: "") }
    public static let thriftFields: [ThriftField<Self>] = [
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
    public static let thriftName = "NotesMetadataList"
    public static var decodingStart: Self { Self(startIndex: 0, totalNotes: 0, notes: []) }
    public static let thriftFields: [ThriftField<Self>] = [
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
