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
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .i32): order = try r.readI32()
            case (2, .bool): ascending = try r.readBool()
            case (3, .string): words = try r.readString()
            case (4, .string): notebookGuid = try r.readString()
            case (5, .list): tagGuids = try r.readStringList()
            case (6, .string): timeZone = try r.readString()
            case (7, .bool): inactive = try r.readBool()
            case (8, .string): emphasized = try r.readString()
            case (9, .bool): includeAllReadableNotebooks = try r.readBool()
            case (10, .string): context = try r.readString()
            case (11, .string): rawWords = try r.readString()
            case (12, .string): searchContextBytes = try r.readBinary()
            case (15, .bool): includeAllReadableWorkspaces = try r.readBool()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, order)
        w.writeField(2, ascending)
        w.writeField(3, words)
        w.writeField(4, notebookGuid)
        w.writeField(5, tagGuids)
        w.writeField(6, timeZone)
        w.writeField(7, inactive)
        w.writeField(8, emphasized)
        w.writeField(9, includeAllReadableNotebooks)
        w.writeField(10, context)
        w.writeField(11, rawWords)
        w.writeField(12, binary: searchContextBytes)
        w.writeField(15, includeAllReadableWorkspaces)
        w.writeFieldStop()
    }
}

extension EDAM.NotesMetadataResultSpec: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (2, .bool): includeTitle = try r.readBool()
            case (5, .bool): includeContentLength = try r.readBool()
            case (6, .bool): includeCreated = try r.readBool()
            case (7, .bool): includeUpdated = try r.readBool()
            case (8, .bool): includeDeleted = try r.readBool()
            case (10, .bool): includeUpdateSequenceNum = try r.readBool()
            case (11, .bool): includeNotebookGuid = try r.readBool()
            case (12, .bool): includeTagGuids = try r.readBool()
            case (14, .bool): includeAttributes = try r.readBool()
            case (20, .bool): includeLargestResourceMime = try r.readBool()
            case (21, .bool): includeLargestResourceSize = try r.readBool()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(2, includeTitle)
        w.writeField(5, includeContentLength)
        w.writeField(6, includeCreated)
        w.writeField(7, includeUpdated)
        w.writeField(8, includeDeleted)
        w.writeField(10, includeUpdateSequenceNum)
        w.writeField(11, includeNotebookGuid)
        w.writeField(12, includeTagGuids)
        w.writeField(14, includeAttributes)
        w.writeField(20, includeLargestResourceMime)
        w.writeField(21, includeLargestResourceSize)
        w.writeFieldStop()
    }
}

extension EDAM.NoteMetadata: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init(guid: "")
        var sawGuid = false
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .string): guid = try r.readString(); sawGuid = true
            case (2, .string): title = try r.readString()
            case (5, .i32): contentLength = try r.readI32()
            case (6, .i64): created = try r.readI64()
            case (7, .i64): updated = try r.readI64()
            case (8, .i64): deleted = try r.readI64()
            case (10, .i32): updateSequenceNum = try r.readI32()
            case (11, .string): notebookGuid = try r.readString()
            case (12, .list): tagGuids = try r.readStringList()
            case (14, .struct): attributes = try r.readStruct()
            case (20, .string): largestResourceMime = try r.readString()
            case (21, .i32): largestResourceSize = try r.readI32()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
        guard sawGuid else { throw .missingRequiredField(structName: "NoteMetadata", field: "guid") }
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, guid)
        w.writeField(2, title)
        w.writeField(5, contentLength)
        w.writeField(6, created)
        w.writeField(7, updated)
        w.writeField(8, deleted)
        w.writeField(10, updateSequenceNum)
        w.writeField(11, notebookGuid)
        w.writeField(12, tagGuids)
        w.writeField(14, attributes)
        w.writeField(20, largestResourceMime)
        w.writeField(21, largestResourceSize)
        w.writeFieldStop()
    }
}

extension EDAM.NotesMetadataList: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        var startIndex: Int32?
        var totalNotes: Int32?
        var notes: [EDAM.NoteMetadata]?
        var stoppedWords: [String]?
        var searchedWords: [String]?
        var updateCount: Int32?
        var searchContextBytes: [UInt8]?
        var debugInfo: String?
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .i32): startIndex = try r.readI32()
            case (2, .i32): totalNotes = try r.readI32()
            case (3, .list): notes = try r.readStructList()
            case (4, .list): stoppedWords = try r.readStringList()
            case (5, .list): searchedWords = try r.readStringList()
            case (6, .i32): updateCount = try r.readI32()
            case (7, .string): searchContextBytes = try r.readBinary()
            case (9, .string): debugInfo = try r.readString()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
        guard let startIndex else { throw .missingRequiredField(structName: "NotesMetadataList", field: "startIndex") }
        guard let totalNotes else { throw .missingRequiredField(structName: "NotesMetadataList", field: "totalNotes") }
        guard let notes else { throw .missingRequiredField(structName: "NotesMetadataList", field: "notes") }
        self.init(startIndex: startIndex, totalNotes: totalNotes, notes: notes)
        self.stoppedWords = stoppedWords
        self.searchedWords = searchedWords
        self.updateCount = updateCount
        self.searchContextBytes = searchContextBytes
        self.debugInfo = debugInfo
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, startIndex)
        w.writeField(2, totalNotes)
        w.writeField(3, notes)
        w.writeField(4, stoppedWords)
        w.writeField(5, searchedWords)
        w.writeField(6, updateCount)
        w.writeField(7, binary: searchContextBytes)
        w.writeField(9, debugInfo)
        w.writeFieldStop()
    }
}
