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
    public static let thriftName = "LazyMap"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "keysOnly", \.keysOnly),
        .init(2, "fullMap", \.fullMap),
    ]
}

extension EDAM.Data: ThriftStruct {
    public static let thriftName = "Data"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "bodyHash", binary: \.bodyHash),
        .init(2, "size", \.size),
        .init(3, "body", binary: \.body),
    ]
}

extension EDAM.ResourceAttributes: ThriftStruct {
    public static let thriftName = "ResourceAttributes"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "sourceURL", \.sourceURL),
        .init(2, "timestamp", \.timestamp),
        .init(3, "latitude", \.latitude),
        .init(4, "longitude", \.longitude),
        .init(5, "altitude", \.altitude),
        .init(6, "cameraMake", \.cameraMake),
        .init(7, "cameraModel", \.cameraModel),
        .init(8, "clientWillIndex", \.clientWillIndex),
        .init(9, "recoType", \.recoType),
        .init(10, "fileName", \.fileName),
        .init(11, "attachment", \.attachment),
        .init(12, "applicationData", \.applicationData),
    ]
}

extension EDAM.Resource: ThriftStruct {
    public static let thriftName = "Resource"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "guid", \.guid),
        .init(2, "noteGuid", \.noteGuid),
        .init(3, "data", \.data),
        .init(4, "mime", \.mime),
        .init(5, "width", \.width),
        .init(6, "height", \.height),
        .init(7, "duration", \.duration),
        .init(8, "active", \.active),
        .init(9, "recognition", \.recognition),
        .init(11, "attributes", \.attributes),
        .init(12, "updateSequenceNum", \.updateSequenceNum),
        .init(13, "alternateData", \.alternateData),
    ]
}

extension EDAM.NoteAttributes: ThriftStruct {
    public static let thriftName = "NoteAttributes"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "subjectDate", \.subjectDate),
        .init(10, "latitude", \.latitude),
        .init(11, "longitude", \.longitude),
        .init(12, "altitude", \.altitude),
        .init(13, "author", \.author),
        .init(14, "source", \.source),
        .init(15, "sourceURL", \.sourceURL),
        .init(16, "sourceApplication", \.sourceApplication),
        .init(17, "shareDate", \.shareDate),
        .init(18, "reminderOrder", \.reminderOrder),
        .init(19, "reminderDoneTime", \.reminderDoneTime),
        .init(20, "reminderTime", \.reminderTime),
        .init(21, "placeName", \.placeName),
        .init(22, "contentClass", \.contentClass),
        .init(23, "applicationData", \.applicationData),
        .init(24, "lastEditedBy", \.lastEditedBy),
        .init(26, "classifications", \.classifications),
        .init(27, "creatorId", \.creatorId),
        .init(28, "lastEditorId", \.lastEditorId),
        .init(29, "sharedWithBusiness", \.sharedWithBusiness),
        .init(30, "conflictSourceNoteGuid", \.conflictSourceNoteGuid),
        .init(31, "noteTitleQuality", \.noteTitleQuality),
    ]
}

extension EDAM.Note: ThriftStruct {
    public static let thriftName = "Note"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "guid", \.guid),
        .init(2, "title", \.title),
        .init(3, "content", \.content),
        .init(4, "contentHash", binary: \.contentHash),
        .init(5, "contentLength", \.contentLength),
        .init(6, "created", \.created),
        .init(7, "updated", \.updated),
        .init(8, "deleted", \.deleted),
        .init(9, "active", \.active),
        .init(10, "updateSequenceNum", \.updateSequenceNum),
        .init(11, "notebookGuid", \.notebookGuid),
        .init(12, "tagGuids", \.tagGuids),
        .init(13, "resources", \.resources),
        .init(14, "attributes", \.attributes),
        .init(15, "tagNames", \.tagNames),
    ]
}
