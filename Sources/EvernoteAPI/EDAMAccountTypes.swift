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
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .string): guid = try r.readString()
            case (2, .string): name = try r.readString()
            case (5, .i32): updateSequenceNum = try r.readI32()
            case (6, .bool): defaultNotebook = try r.readBool()
            case (7, .i64): serviceCreated = try r.readI64()
            case (8, .i64): serviceUpdated = try r.readI64()
            case (12, .string): stack = try r.readString()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, guid)
        w.writeField(2, name)
        w.writeField(5, updateSequenceNum)
        w.writeField(6, defaultNotebook)
        w.writeField(7, serviceCreated)
        w.writeField(8, serviceUpdated)
        w.writeField(12, stack)
        w.writeFieldStop()
    }
}

extension EDAM.Tag: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .string): guid = try r.readString()
            case (2, .string): name = try r.readString()
            case (3, .string): parentGuid = try r.readString()
            case (4, .i32): updateSequenceNum = try r.readI32()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, guid)
        w.writeField(2, name)
        w.writeField(3, parentGuid)
        w.writeField(4, updateSequenceNum)
        w.writeFieldStop()
    }
}

extension EDAM.User: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .i32): id = try r.readI32()
            case (2, .string): username = try r.readString()
            case (3, .string): email = try r.readString()
            case (4, .string): name = try r.readString()
            case (6, .string): timezone = try r.readString()
            case (7, .i32): privilege = try r.readI32()
            case (21, .i32): serviceLevel = try r.readI32()
            case (9, .i64): created = try r.readI64()
            case (10, .i64): updated = try r.readI64()
            case (13, .bool): active = try r.readBool()
            case (14, .string): shardId = try r.readString()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, id)
        w.writeField(2, username)
        w.writeField(3, email)
        w.writeField(4, name)
        w.writeField(6, timezone)
        w.writeField(7, privilege)
        w.writeField(9, created)
        w.writeField(10, updated)
        w.writeField(13, active)
        w.writeField(14, shardId)
        w.writeField(21, serviceLevel)
        w.writeFieldStop()
    }
}

extension EDAM.UserUrls: ThriftStruct {
    public init(from r: inout ThriftBinaryReader) throws(ThriftError) {
        self.init()
        try r.readStructBegin()
        while let field = try r.readFieldBegin() {
            switch (field.id, field.type) {
            case (1, .string): noteStoreUrl = try r.readString()
            case (2, .string): webApiUrlPrefix = try r.readString()
            case (3, .string): userStoreUrl = try r.readString()
            case (4, .string): utilityUrl = try r.readString()
            case (5, .string): messageStoreUrl = try r.readString()
            case (6, .string): userWebSocketUrl = try r.readString()
            default: try r.skip(field.type)
            }
        }
        r.readStructEnd()
    }

    public func write(to w: inout ThriftBinaryWriter) {
        w.writeField(1, noteStoreUrl)
        w.writeField(2, webApiUrlPrefix)
        w.writeField(3, userStoreUrl)
        w.writeField(4, utilityUrl)
        w.writeField(5, messageStoreUrl)
        w.writeField(6, userWebSocketUrl)
        w.writeFieldStop()
    }
}
