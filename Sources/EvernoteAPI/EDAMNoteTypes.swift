import Support
// EDAM note-side structs (IDL Types.thrift, EDAM 1.28). Field ids are the IDL's; fields this
// client never uses (sharedNotes, restrictions, limits, …) are skipped on decode.

/// Namespace for Evernote's EDAM data model, so names such as `Data` and `Note` do not collide
/// with Foundation or with the rest of ENLogKit.
public enum EDAM {}

/// Timestamps are i64 milliseconds since 1970-01-01 UTC.
extension EDAM {
    public typealias Timestamp = Int64
    public typealias Guid = String
    public typealias UserID = Int32
}

extension EDAM {
    /// `applicationData`: either just the keys (`keysOnly`) or keys with values (`fullMap`).
    public struct LazyMap: Sendable, Hashable {
        public var keysOnly: Set<String>?
        public var fullMap: [String: String]?

        public init(keysOnly: Set<String>? = nil, fullMap: [String: String]? = nil) {
            self.keysOnly = keysOnly
            self.fullMap = fullMap
        }
    }

    public struct Data: Sendable, Hashable {
        /// Raw 16-byte MD5 of `body`.
        public var bodyHash: [UInt8]?
        public var size: Int32?
        public var body: [UInt8]?

        public init(bodyHash: [UInt8]? = nil, size: Int32? = nil, body: [UInt8]? = nil) {
            self.bodyHash = bodyHash
            self.size = size
            self.body = body
        }
    }

    public struct ResourceAttributes: Sendable, Hashable {
        public var sourceURL: String?
        public var timestamp: Timestamp?
        public var latitude: Double?
        public var longitude: Double?
        public var altitude: Double?
        public var cameraMake: String?
        public var cameraModel: String?
        public var clientWillIndex: Bool?
        public var recoType: String?
        public var fileName: String?
        public var attachment: Bool?
        public var applicationData: LazyMap?

        public init() {}
    }

    public struct Resource: Sendable, Hashable {
        public var guid: Guid?
        public var noteGuid: Guid?
        public var data: Data?
        public var mime: String?
        public var width: Int16?
        public var height: Int16?
        public var duration: Int16?
        public var active: Bool?
        public var recognition: Data?
        public var attributes: ResourceAttributes?
        public var updateSequenceNum: Int32?
        public var alternateData: Data?

        public init(data: Data? = nil, mime: String? = nil, attributes: ResourceAttributes? = nil) {
            self.data = data
            self.mime = mime
            self.attributes = attributes
        }
    }

    public struct NoteAttributes: Sendable, Hashable {
        public var subjectDate: Timestamp?
        public var latitude: Double?
        public var longitude: Double?
        public var altitude: Double?
        public var author: String?
        public var source: String?
        public var sourceURL: String?
        public var sourceApplication: String?
        public var shareDate: Timestamp?
        public var reminderOrder: Int64?
        public var reminderDoneTime: Timestamp?
        public var reminderTime: Timestamp?
        public var placeName: String?
        public var contentClass: String?
        public var applicationData: LazyMap?
        public var lastEditedBy: String?
        public var classifications: [String: String]?
        public var creatorId: UserID?
        public var lastEditorId: UserID?
        public var sharedWithBusiness: Bool?
        public var conflictSourceNoteGuid: Guid?
        public var noteTitleQuality: Int32?

        public init() {}
    }

    public struct Note: Sendable, Hashable {
        public var guid: Guid?
        public var title: String?
        /// ENML document.
        public var content: String?
        /// Raw 16-byte MD5 of the UTF-8 content; set by the service.
        public var contentHash: [UInt8]?
        public var contentLength: Int32?
        public var created: Timestamp?
        public var updated: Timestamp?
        public var deleted: Timestamp?
        public var active: Bool?
        public var updateSequenceNum: Int32?
        /// Omit to use the default notebook.
        public var notebookGuid: Guid?
        public var tagGuids: [Guid]?
        public var resources: [Resource]?
        public var attributes: NoteAttributes?
        /// createNote finds or creates these tags by name.
        public var tagNames: [String]?

        public init(title: String? = nil, content: String? = nil, notebookGuid: Guid? = nil,
                    tagNames: [String]? = nil, resources: [Resource]? = nil,
                    attributes: NoteAttributes? = nil) {
            self.title = title
            self.content = content
            self.notebookGuid = notebookGuid
            self.tagNames = tagNames
            self.resources = resources
            self.attributes = attributes
        }
    }
}

// MARK: - Codec

extension EDAM.LazyMap: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .set): keysOnly = try r.readStringSet()
            case (2, .map): fullMap = try r.readStringMap()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, keysOnly)
        w.writeField(2, fullMap)
        w.writeFieldStop()
    }
}

extension EDAM.Data: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .string): bodyHash = try r.readBinary()
            case (2, .i32): size = try r.readI32()
            case (3, .string): body = try r.readBinary()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, binary: bodyHash)
        w.writeField(2, size)
        w.writeField(3, binary: body)
        w.writeFieldStop()
    }
}

extension EDAM.ResourceAttributes: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .string): sourceURL = try r.readString()
            case (2, .i64): timestamp = try r.readI64()
            case (3, .double): latitude = try r.readDouble()
            case (4, .double): longitude = try r.readDouble()
            case (5, .double): altitude = try r.readDouble()
            case (6, .string): cameraMake = try r.readString()
            case (7, .string): cameraModel = try r.readString()
            case (8, .bool): clientWillIndex = try r.readBool()
            case (9, .string): recoType = try r.readString()
            case (10, .string): fileName = try r.readString()
            case (11, .bool): attachment = try r.readBool()
            case (12, .struct): applicationData = try r.readStruct()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, sourceURL)
        w.writeField(2, timestamp)
        w.writeField(3, latitude)
        w.writeField(4, longitude)
        w.writeField(5, altitude)
        w.writeField(6, cameraMake)
        w.writeField(7, cameraModel)
        w.writeField(8, clientWillIndex)
        w.writeField(9, recoType)
        w.writeField(10, fileName)
        w.writeField(11, attachment)
        w.writeField(12, applicationData)
        w.writeFieldStop()
    }
}

extension EDAM.Resource: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .string): guid = try r.readString()
            case (2, .string): noteGuid = try r.readString()
            case (3, .struct): data = try r.readStruct()
            case (4, .string): mime = try r.readString()
            case (5, .i16): width = try r.readI16()
            case (6, .i16): height = try r.readI16()
            case (7, .i16): duration = try r.readI16()
            case (8, .bool): active = try r.readBool()
            case (9, .struct): recognition = try r.readStruct()
            case (11, .struct): attributes = try r.readStruct()
            case (12, .i32): updateSequenceNum = try r.readI32()
            case (13, .struct): alternateData = try r.readStruct()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, guid)
        w.writeField(2, noteGuid)
        w.writeField(3, data)
        w.writeField(4, mime)
        w.writeField(5, width)
        w.writeField(6, height)
        w.writeField(7, duration)
        w.writeField(8, active)
        w.writeField(9, recognition)
        w.writeField(11, attributes)
        w.writeField(12, updateSequenceNum)
        w.writeField(13, alternateData)
        w.writeFieldStop()
    }
}

extension EDAM.NoteAttributes: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .i64): subjectDate = try r.readI64()
            case (10, .double): latitude = try r.readDouble()
            case (11, .double): longitude = try r.readDouble()
            case (12, .double): altitude = try r.readDouble()
            case (13, .string): author = try r.readString()
            case (14, .string): source = try r.readString()
            case (15, .string): sourceURL = try r.readString()
            case (16, .string): sourceApplication = try r.readString()
            case (17, .i64): shareDate = try r.readI64()
            case (18, .i64): reminderOrder = try r.readI64()
            case (19, .i64): reminderDoneTime = try r.readI64()
            case (20, .i64): reminderTime = try r.readI64()
            case (21, .string): placeName = try r.readString()
            case (22, .string): contentClass = try r.readString()
            case (23, .struct): applicationData = try r.readStruct()
            case (24, .string): lastEditedBy = try r.readString()
            case (26, .map): classifications = try r.readStringMap()
            case (27, .i32): creatorId = try r.readI32()
            case (28, .i32): lastEditorId = try r.readI32()
            case (29, .bool): sharedWithBusiness = try r.readBool()
            case (30, .string): conflictSourceNoteGuid = try r.readString()
            case (31, .i32): noteTitleQuality = try r.readI32()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, subjectDate)
        w.writeField(10, latitude)
        w.writeField(11, longitude)
        w.writeField(12, altitude)
        w.writeField(13, author)
        w.writeField(14, source)
        w.writeField(15, sourceURL)
        w.writeField(16, sourceApplication)
        w.writeField(17, shareDate)
        w.writeField(18, reminderOrder)
        w.writeField(19, reminderDoneTime)
        w.writeField(20, reminderTime)
        w.writeField(21, placeName)
        w.writeField(22, contentClass)
        w.writeField(23, applicationData)
        w.writeField(24, lastEditedBy)
        w.writeField(26, classifications)
        w.writeField(27, creatorId)
        w.writeField(28, lastEditorId)
        w.writeField(29, sharedWithBusiness)
        w.writeField(30, conflictSourceNoteGuid)
        w.writeField(31, noteTitleQuality)
        w.writeFieldStop()
    }
}

extension EDAM.Note: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .string): guid = try r.readString()
            case (2, .string): title = try r.readString()
            case (3, .string): content = try r.readString()
            case (4, .string): contentHash = try r.readBinary()
            case (5, .i32): contentLength = try r.readI32()
            case (6, .i64): created = try r.readI64()
            case (7, .i64): updated = try r.readI64()
            case (8, .i64): deleted = try r.readI64()
            case (9, .bool): active = try r.readBool()
            case (10, .i32): updateSequenceNum = try r.readI32()
            case (11, .string): notebookGuid = try r.readString()
            case (12, .list): tagGuids = try r.readStringList()
            case (13, .list): resources = try r.readStructList()
            case (14, .struct): attributes = try r.readStruct()
            case (15, .list): tagNames = try r.readStringList()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, guid)
        w.writeField(2, title)
        w.writeField(3, content)
        w.writeField(4, binary: contentHash)
        w.writeField(5, contentLength)
        w.writeField(6, created)
        w.writeField(7, updated)
        w.writeField(8, deleted)
        w.writeField(9, active)
        w.writeField(10, updateSequenceNum)
        w.writeField(11, notebookGuid)
        w.writeField(12, tagGuids)
        w.writeField(13, resources)
        w.writeField(14, attributes)
        w.writeField(15, tagNames)
        w.writeFieldStop()
    }
}
