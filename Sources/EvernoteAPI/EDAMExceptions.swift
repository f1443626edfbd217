import Support
// The exception structs a reply can carry (IDL Errors.thrift, plus Thrift's own
// TApplicationException), decoded as data; `EvernoteError` turns them into something to act on.

extension EDAM {
    /// EDAMErrorCode. A struct rather than an enum so a code newer than our IDL still decodes and
    /// still prints its number.
    public struct ErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public static let unknown = ErrorCode(rawValue: 1)
        public static let badDataFormat = ErrorCode(rawValue: 2)
        public static let permissionDenied = ErrorCode(rawValue: 3)
        public static let internalError = ErrorCode(rawValue: 4)
        public static let dataRequired = ErrorCode(rawValue: 5)
        public static let limitReached = ErrorCode(rawValue: 6)
        public static let quotaReached = ErrorCode(rawValue: 7)
        public static let invalidAuth = ErrorCode(rawValue: 8)
        public static let authExpired = ErrorCode(rawValue: 9)
        public static let dataConflict = ErrorCode(rawValue: 10)
        public static let enmlValidation = ErrorCode(rawValue: 11)
        public static let shardUnavailable = ErrorCode(rawValue: 12)
        public static let lenTooShort = ErrorCode(rawValue: 13)
        public static let lenTooLong = ErrorCode(rawValue: 14)
        public static let tooFew = ErrorCode(rawValue: 15)
        public static let tooMany = ErrorCode(rawValue: 16)
        public static let unsupportedOperation = ErrorCode(rawValue: 17)
        public static let takenDown = ErrorCode(rawValue: 18)
        public static let rateLimitReached = ErrorCode(rawValue: 19)
        public static let businessSecurityLoginRequired = ErrorCode(rawValue: 20)
        public static let deviceLimitReached = ErrorCode(rawValue: 21)
        public static let openIDAlreadyTaken = ErrorCode(rawValue: 22)
        public static let invalidOpenIDToken = ErrorCode(rawValue: 23)
        public static let userNotAssociated = ErrorCode(rawValue: 24)
        public static let userNotRegistered = ErrorCode(rawValue: 25)
        public static let userAlreadyAssociated = ErrorCode(rawValue: 26)
        public static let accountClear = ErrorCode(rawValue: 27)
        public static let ssoAuthenticationRequired = ErrorCode(rawValue: 28)

        private static let names: [Int32: String] = [
            1: "UNKNOWN", 2: "BAD_DATA_FORMAT", 3: "PERMISSION_DENIED", 4: "INTERNAL_ERROR",
            5: "DATA_REQUIRED", 6: "LIMIT_REACHED", 7: "QUOTA_REACHED", 8: "INVALID_AUTH",
            9: "AUTH_EXPIRED", 10: "DATA_CONFLICT", 11: "ENML_VALIDATION", 12: "SHARD_UNAVAILABLE",
            13: "LEN_TOO_SHORT", 14: "LEN_TOO_LONG", 15: "TOO_FEW", 16: "TOO_MANY",
            17: "UNSUPPORTED_OPERATION", 18: "TAKEN_DOWN", 19: "RATE_LIMIT_REACHED",
            20: "BUSINESS_SECURITY_LOGIN_REQUIRED", 21: "DEVICE_LIMIT_REACHED",
            22: "OPENID_ALREADY_TAKEN", 23: "INVALID_OPENID_TOKEN", 24: "USER_NOT_ASSOCIATED",
            25: "USER_NOT_REGISTERED", 26: "USER_ALREADY_ASSOCIATED", 27: "ACCOUNT_CLEAR",
            28: "SSO_AUTHENTICATION_REQUIRED",
        ]

        /// The IDL name, e.g. `ENML_VALIDATION`, or `code 42` for one we do not know.
        public var name: String { Self.names[rawValue] ?? "code \(rawValue)" }
        public var description: String { "\(rawValue) \(name)" }
    }

    public struct UserException: Sendable, Hashable {
        public var errorCode: ErrorCode
        /// Which input was bad, e.g. `Note.title`.
        public var parameter: String?

        public init(errorCode: ErrorCode, parameter: String? = nil) {
            self.errorCode = errorCode
            self.parameter = parameter
        }
    }

    public struct SystemException: Sendable, Hashable {
        public var errorCode: ErrorCode
        public var message: String?
        /// Seconds to wait, only with RATE_LIMIT_REACHED.
        public var rateLimitDuration: Int32?

        public init(errorCode: ErrorCode, message: String? = nil, rateLimitDuration: Int32? = nil) {
            self.errorCode = errorCode
            self.message = message
            self.rateLimitDuration = rateLimitDuration
        }
    }

    public struct NotFoundException: Sendable, Hashable {
        /// What was looked up, e.g. `Note.notebookGuid`.
        public var identifier: String?
        /// The value that was not found.
        public var key: String?

        public init(identifier: String? = nil, key: String? = nil) {
            self.identifier = identifier
            self.key = key
        }
    }
}

/// Thrift's own failure reply (message type EXCEPTION), used for undeclared server errors.
public struct ThriftApplicationException: Sendable, Hashable {
    public var message: String?
    /// 0 UNKNOWN, 1 UNKNOWN_METHOD, 2 INVALID_MESSAGE_TYPE, 3 WRONG_METHOD_NAME, 4 BAD_SEQUENCE_ID,
    /// 5 MISSING_RESULT, 6 INTERNAL_ERROR, 7 PROTOCOL_ERROR, 8 INVALID_TRANSFORM,
    /// 9 INVALID_PROTOCOL, 10 UNSUPPORTED_CLIENT_TYPE.
    public var type: Int32?

    public init(message: String? = nil, type: Int32? = nil) {
        self.message = message
        self.type = type
    }

    public static func typeName(_ type: Int32) -> String {
        let names = ["UNKNOWN", "UNKNOWN_METHOD", "INVALID_MESSAGE_TYPE", "WRONG_METHOD_NAME",
                     "BAD_SEQUENCE_ID", "MISSING_RESULT", "INTERNAL_ERROR", "PROTOCOL_ERROR",
                     "INVALID_TRANSFORM", "INVALID_PROTOCOL", "UNSUPPORTED_CLIENT_TYPE"]
        return names.indices.contains(Int(type)) ? names[Int(type)] : "type \(type)"
    }
}

// MARK: - Codec

extension EDAM.UserException: ThriftStruct {
    public static let thriftName = "EDAMUserException"
    public static var decodingStart: Self { Self(errorCode: EDAM.ErrorCode(rawValue: 0)) }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "errorCode", required: \.errorCode),
        .init(2, "parameter", \.parameter),
    ]
}

extension EDAM.SystemException: ThriftStruct {
    public static let thriftName = "EDAMSystemException"
    public static var decodingStart: Self { Self(errorCode: EDAM.ErrorCode(rawValue: 0)) }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "errorCode", required: \.errorCode),
        .init(2, "message", \.message),
        .init(3, "rateLimitDuration", \.rateLimitDuration),
    ]
}

extension EDAM.NotFoundException: ThriftStruct {
    public static let thriftName = "EDAMNotFoundException"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "identifier", \.identifier),
        .init(2, "key", \.key),
    ]
}

extension ThriftApplicationException: ThriftStruct {
    public static let thriftName = "TApplicationException"
    public static var decodingStart: Self { Self() }
    public static let thriftFields: [ThriftField<Self>] = [
        .init(1, "message", \.message),
        .init(2, "type", \.type),
    ]
}

/// On the wire an `EDAMErrorCode` is its i32; a code newer than our IDL still reads.
extension EDAM.ErrorCode: ThriftValue {
    public static var thriftType: ThriftType { .i32 }
    public static var idlType: String { "i32" }
    public init(from reader: inout ThriftBinaryReader) throws(ThriftError) { self.init(rawValue: try reader.readI32()) }
    public func write(to writer: inout ThriftBinaryWriter) { writer.writeI32(rawValue) }
}
