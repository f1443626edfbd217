import Support
// EDAM account-side structs: notebooks, tags, the user and their service URLs. Only the subset a
// note client reads is modelled; the rest (publishing, sharing, business, accounting …) is
// skipped as unknown on decode and therefore never written back.

extension EDAM {
    package struct Notebook: Sendable, Hashable {
        package var guid: Guid?
        package var name: String?
        package var updateSequenceNum: Int32?
        package var defaultNotebook: Bool?
        package var serviceCreated: Timestamp?
        package var serviceUpdated: Timestamp?
        package var stack: String?

        package init(name: String? = nil, stack: String? = nil) {
            self.name = name
            self.stack = stack
        }
    }

    package struct Tag: Sendable, Hashable {
        package var guid: Guid?
        package var name: String?
        package var parentGuid: Guid?
        package var updateSequenceNum: Int32?

        package init(name: String? = nil, parentGuid: Guid? = nil) {
            self.name = name
            self.parentGuid = parentGuid
        }
    }

    package struct User: Sendable, Hashable {
        package var id: UserID?
        package var username: String?
        package var email: String?
        package var name: String?
        package var timezone: String?
        /// PrivilegeLevel: 1 NORMAL, 3 PREMIUM, 5 VIP, 7 MANAGER, 8 SUPPORT, 9 ADMIN. Kept raw so
        /// a level newer than our IDL still decodes.
        package var privilege: Int32?
        /// ServiceLevel: 1 BASIC, 2 PLUS, 3 PREMIUM, 4 BUSINESS.
        package var serviceLevel: Int32?
        package var created: Timestamp?
        package var updated: Timestamp?
        package var active: Bool?
        package var shardId: String?

        package init() {}
    }

    package struct UserUrls: Sendable, Hashable {
        package var noteStoreUrl: String?
        package var webApiUrlPrefix: String?
        package var userStoreUrl: String?
        package var utilityUrl: String?
        package var messageStoreUrl: String?
        package var userWebSocketUrl: String?

        package init(noteStoreUrl: String? = nil, webApiUrlPrefix: String? = nil) {
            self.noteStoreUrl = noteStoreUrl
            self.webApiUrlPrefix = webApiUrlPrefix
        }
    }
}

// MARK: - Codec

extension EDAM.Notebook: ThriftStruct {
    package static let thriftName = "Notebook"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
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
    package static let thriftName = "Tag"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "guid", \.guid),
        .init(2, "name", \.name),
        .init(3, "parentGuid", \.parentGuid),
        .init(4, "updateSequenceNum", \.updateSequenceNum),
    ]
}

extension EDAM.User: ThriftStruct {
    package static let thriftName = "User"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
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
    package static let thriftName = "UserUrls"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "noteStoreUrl", \.noteStoreUrl),
        .init(2, "webApiUrlPrefix", \.webApiUrlPrefix),
        .init(3, "userStoreUrl", \.userStoreUrl),
        .init(4, "utilityUrl", \.utilityUrl),
        .init(5, "messageStoreUrl", \.messageStoreUrl),
        .init(6, "userWebSocketUrl", \.userWebSocketUrl),
    ]
}
