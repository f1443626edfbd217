import Support
// EDAM note-side structs (IDL Types.thrift, EDAM 1.28). Field ids are the IDL's; fields this
// client never uses (sharedNotes, restrictions, limits, …) are skipped on decode.

/// Namespace for Evernote's EDAM data model, so names such as `Data` and `Note` do not collide
/// with Foundation or with the rest of ENLogKit.
package enum EDAM {}

/// Timestamps are i64 milliseconds since 1970-01-01 UTC.
extension EDAM {
    package typealias Timestamp = Int64
    package typealias Guid = String
    package typealias UserID = Int32
}

extension EDAM {
    /// `applicationData`: either just the keys (`keysOnly`) or keys with values (`fullMap`).
    package struct LazyMap: Sendable, Hashable {
        package var keysOnly: Set<String>?
        package var fullMap: [String: String]?

        package init(keysOnly: Set<String>? = nil, fullMap: [String: String]? = nil) {
            self.keysOnly = keysOnly
            self.fullMap = fullMap
        }
    }

    package struct Data: Sendable, Hashable {
        /// Raw 16-byte MD5 of `body`.
        package var bodyHash: [UInt8]?
        package var size: Int32?
        package var body: [UInt8]?

        package init(bodyHash: [UInt8]? = nil, size: Int32? = nil, body: [UInt8]? = nil) {
            self.bodyHash = bodyHash
            self.size = size
            self.body = body
        }
    }

    package struct ResourceAttributes: Sendable, Hashable {
        package var sourceURL: String?
        package var timestamp: Timestamp?
        package var latitude: Double?
        package var longitude: Double?
        package var altitude: Double?
        package var cameraMake: String?
        package var cameraModel: String?
        package var clientWillIndex: Bool?
        package var recoType: String?
        package var fileName: String?
        package var attachment: Bool?
        package var applicationData: LazyMap?

        package init() {}
    }

    package struct Resource: Sendable, Hashable {
        package var guid: Guid?
        package var noteGuid: Guid?
        package var data: Data?
        package var mime: String?
        package var width: Int16?
        package var height: Int16?
        package var duration: Int16?
        package var active: Bool?
        package var recognition: Data?
        package var attributes: ResourceAttributes?
        package var updateSequenceNum: Int32?
        package var alternateData: Data?

        package init(data: Data? = nil, mime: String? = nil, attributes: ResourceAttributes? = nil) {
            self.data = data
            self.mime = mime
            self.attributes = attributes
        }
    }

    package struct NoteAttributes: Sendable, Hashable {
        package var subjectDate: Timestamp?
        package var latitude: Double?
        package var longitude: Double?
        package var altitude: Double?
        package var author: String?
        package var source: String?
        package var sourceURL: String?
        package var sourceApplication: String?
        package var shareDate: Timestamp?
        package var reminderOrder: Int64?
        package var reminderDoneTime: Timestamp?
        package var reminderTime: Timestamp?
        package var placeName: String?
        package var contentClass: String?
        package var applicationData: LazyMap?
        package var lastEditedBy: String?
        package var classifications: [String: String]?
        package var creatorId: UserID?
        package var lastEditorId: UserID?
        package var sharedWithBusiness: Bool?
        package var conflictSourceNoteGuid: Guid?
        package var noteTitleQuality: Int32?

        package init() {}
    }

    package struct Note: Sendable, Hashable {
        package var guid: Guid?
        package var title: String?
        /// ENML document.
        package var content: String?
        /// Raw 16-byte MD5 of the UTF-8 content; set by the service.
        package var contentHash: [UInt8]?
        package var contentLength: Int32?
        package var created: Timestamp?
        package var updated: Timestamp?
        package var deleted: Timestamp?
        package var active: Bool?
        package var updateSequenceNum: Int32?
        /// Omit to use the default notebook.
        package var notebookGuid: Guid?
        package var tagGuids: [Guid]?
        package var resources: [Resource]?
        package var attributes: NoteAttributes?
        /// createNote finds or creates these tags by name.
        package var tagNames: [String]?

        package init(title: String? = nil, content: String? = nil, notebookGuid: Guid? = nil,
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
    package static let thriftName = "LazyMap"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "keysOnly", \.keysOnly),
        .init(2, "fullMap", \.fullMap),
    ]
}

extension EDAM.Data: ThriftStruct {
    package static let thriftName = "Data"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "bodyHash", binary: \.bodyHash),
        .init(2, "size", \.size),
        .init(3, "body", binary: \.body),
    ]
}

extension EDAM.ResourceAttributes: ThriftStruct {
    package static let thriftName = "ResourceAttributes"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
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
    package static let thriftName = "Resource"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
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
    package static let thriftName = "NoteAttributes"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
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
    package static let thriftName = "Note"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
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
