import Support
// EDAM account-side structs: notebooks, tags, the user and their service URLs. Only the subset a
// note client reads is modelled; the rest (publishing, sharing, business, accounting …) is
// skipped as unknown on decode and therefore never written back.

extension EDAM {
    public struct Notebook: Sendable, Hashable {
        public var guid: Guid?
        public var name: String?
        public var updateSequenceNum: Int32?
        public var defaultNotebook: Bool?
        public var serviceCreated: Timestamp?
        public var serviceUpdated: Timestamp?
        public var stack: String?

        public init(name: String? = nil, stack: String? = nil) {
            self.name = name
            self.stack = stack
        }
    }

    public struct Tag: Sendable, Hashable {
        public var guid: Guid?
        public var name: String?
        public var parentGuid: Guid?
        public var updateSequenceNum: Int32?

        public init(name: String? = nil, parentGuid: Guid? = nil) {
            self.name = name
            self.parentGuid = parentGuid
        }
    }

    public struct User: Sendable, Hashable {
        public var id: UserID?
        public var username: String?
        public var email: String?
        public var name: String?
        public var timezone: String?
        /// PrivilegeLevel: 1 NORMAL, 3 PREMIUM, 5 VIP, 7 MANAGER, 8 SUPPORT, 9 ADMIN. Kept raw so
        /// a level newer than our IDL still decodes.
        public var privilege: Int32?
        /// ServiceLevel: 1 BASIC, 2 PLUS, 3 PREMIUM, 4 BUSINESS.
        public var serviceLevel: Int32?
        public var created: Timestamp?
        public var updated: Timestamp?
        public var active: Bool?
        public var shardId: String?

        public init() {}
    }

    public struct UserUrls: Sendable, Hashable {
        public var noteStoreUrl: String?
        public var webApiUrlPrefix: String?
        public var userStoreUrl: String?
        public var utilityUrl: String?
        public var messageStoreUrl: String?
        public var userWebSocketUrl: String?

        public init(noteStoreUrl: String? = nil, webApiUrlPrefix: String? = nil) {
            self.noteStoreUrl = noteStoreUrl
            self.webApiUrlPrefix = webApiUrlPrefix
        }
    }
}

// MARK: - Codec

extension EDAM.Notebook: ThriftStruct {
    public static let thriftName = "Notebook"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "guid", \.guid),
        .init(2, "name", \.name),
        .init(5, "updateSequenceNum", \.updateSequenceNum),
        .init(6, "defaultNotebook", \.defaultNotebook),
        .init(7, "serviceCreated", \.serviceCreated),
        .init(8, "serviceUpdated", \.serviceUpdated),
        .init(12, "stack", \.stack),
    ]
}

extension EDAM.Tag: ThriftStruct {
    public static let thriftName = "Tag"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "guid", \.guid),
        .init(2, "name", \.name),
        .init(3, "parentGuid", \.parentGuid),
        .init(4, "updateSequenceNum", \.updateSequenceNum),
    ]
}

extension EDAM.User: ThriftStruct {
    public static let thriftName = "User"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "id", \.id),
        .init(2, "username", \.username),
        .init(3, "email", \.email),
        .init(4, "name", \.name),
        .init(6, "timezone", \.timezone),
        .init(7, "privilege", \.privilege),
        .init(9, "created", \.created),
        .init(10, "updated", \.updated),
        .init(13, "active", \.active),
        .init(14, "shardId", \.shardId),
        .init(21, "serviceLevel", \.serviceLevel),
    ]
}

extension EDAM.UserUrls: ThriftStruct {
    public static let thriftName = "UserUrls"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "noteStoreUrl", \.noteStoreUrl),
        .init(2, "webApiUrlPrefix", \.webApiUrlPrefix),
        .init(3, "userStoreUrl", \.userStoreUrl),
        .init(4, "utilityUrl", \.utilityUrl),
        .init(5, "messageStoreUrl", \.messageStoreUrl),
        .init(6, "userWebSocketUrl", \.userWebSocketUrl),
    ]
}
