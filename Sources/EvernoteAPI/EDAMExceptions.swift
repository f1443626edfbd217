import Support
// The exception structs a reply can carry (IDL Errors.thrift, plus Thrift's own
// TApplicationException), decoded as data; `EvernoteError` turns them into something to act on.

extension EDAM {
    /// EDAMErrorCode. A struct rather than an enum so a code newer than our IDL still decodes and
    /// still prints its number.
    package struct ErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        package var rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }

        package static let unknown = ErrorCode(rawValue: 1)
        package static let badDataFormat = ErrorCode(rawValue: 2)
        package static let permissionDenied = ErrorCode(rawValue: 3)
        package static let internalError = ErrorCode(rawValue: 4)
        package static let dataRequired = ErrorCode(rawValue: 5)
        package static let limitReached = ErrorCode(rawValue: 6)
        package static let quotaReached = ErrorCode(rawValue: 7)
        package static let invalidAuth = ErrorCode(rawValue: 8)
        package static let authExpired = ErrorCode(rawValue: 9)
        package static let dataConflict = ErrorCode(rawValue: 10)
        package static let enmlValidation = ErrorCode(rawValue: 11)
        package static let shardUnavailable = ErrorCode(rawValue: 12)
        package static let lenTooShort = ErrorCode(rawValue: 13)
        package static let lenTooLong = ErrorCode(rawValue: 14)
        package static let tooFew = ErrorCode(rawValue: 15)
        package static let tooMany = ErrorCode(rawValue: 16)
        package static let unsupportedOperation = ErrorCode(rawValue: 17)
        package static let takenDown = ErrorCode(rawValue: 18)
        package static let rateLimitReached = ErrorCode(rawValue: 19)
        package static let businessSecurityLoginRequired = ErrorCode(rawValue: 20)
        package static let deviceLimitReached = ErrorCode(rawValue: 21)
        package static let openIDAlreadyTaken = ErrorCode(rawValue: 22)
        package static let invalidOpenIDToken = ErrorCode(rawValue: 23)
        package static let userNotAssociated = ErrorCode(rawValue: 24)
        package static let userNotRegistered = ErrorCode(rawValue: 25)
        package static let userAlreadyAssociated = ErrorCode(rawValue: 26)
        package static let accountClear = ErrorCode(rawValue: 27)
        package static let ssoAuthenticationRequired = ErrorCode(rawValue: 28)

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
        package var name: String { Self.names[rawValue] ?? "code \(rawValue)" }
        package var description: String { "\(rawValue) \(name)" }
    }

    package struct UserException: Sendable, Hashable {
        package var errorCode: ErrorCode
        /// Which input was bad, e.g. `Note.title`.
        package var parameter: String?
    }

    package struct SystemException: Sendable, Hashable {
        package var errorCode: ErrorCode
        package var message: String?
        /// Seconds to wait, only with RATE_LIMIT_REACHED.
        package var rateLimitDuration: Int32?
    }

    package struct NotFoundException: Sendable, Hashable {
        /// What was looked up, e.g. `Note.notebookGuid`.
        package var identifier: String?
        /// The value that was not found.
        package var key: String?
    }
}

/// Thrift's own failure reply (message type EXCEPTION), used for undeclared server errors.
package struct ThriftApplicationException: Sendable, Hashable {
    package var message: String?
    /// 0 UNKNOWN, 1 UNKNOWN_METHOD, 2 INVALID_MESSAGE_TYPE, 3 WRONG_METHOD_NAME, 4 BAD_SEQUENCE_ID,
    /// 5 MISSING_RESULT, 6 INTERNAL_ERROR, 7 PROTOCOL_ERROR, 8 INVALID_TRANSFORM,
    /// 9 INVALID_PROTOCOL, 10 UNSUPPORTED_CLIENT_TYPE.
    package var type: Int32?

    package static func typeName(_ type: Int32) -> String {
        let names = ["UNKNOWN", "UNKNOWN_METHOD", "INVALID_MESSAGE_TYPE", "WRONG_METHOD_NAME",
                     "BAD_SEQUENCE_ID", "MISSING_RESULT", "INTERNAL_ERROR", "PROTOCOL_ERROR",
                     "INVALID_TRANSFORM", "INVALID_PROTOCOL", "UNSUPPORTED_CLIENT_TYPE"]
        return names.indices.contains(Int(type)) ? names[Int(type)] : "type \(type)"
    }
}

// MARK: - Codec

extension EDAM.UserException: ThriftStruct {
    package static let thriftName = "EDAMUserException"
    package static var decodingStart: Self { Self(errorCode: EDAM.ErrorCode(rawValue: 0)) }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "errorCode", required: \.errorCode),
        .init(2, "parameter", \.parameter),
    ]
}

extension EDAM.SystemException: ThriftStruct {
    package static let thriftName = "EDAMSystemException"
    package static var decodingStart: Self { Self(errorCode: EDAM.ErrorCode(rawValue: 0)) }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "errorCode", required: \.errorCode),
        .init(2, "message", \.message),
        .init(3, "rateLimitDuration", \.rateLimitDuration),
    ]
}

extension EDAM.NotFoundException: ThriftStruct {
    package static let thriftName = "EDAMNotFoundException"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "identifier", \.identifier),
        .init(2, "key", \.key),
    ]
}

extension ThriftApplicationException: ThriftStruct {
    package static let thriftName = "TApplicationException"
    package static var decodingStart: Self { Self() }
    package static let thriftFields: [ThriftField<Self>] = [
        .init(1, "message", \.message),
        .init(2, "type", \.type),
    ]
}

/// On the wire an `EDAMErrorCode` is its i32; a code newer than our IDL still reads.
extension EDAM.ErrorCode: ThriftScalar {
    package static var thriftScalar: ThriftScalarCoding<Self> {
        .init(.i32, "i32", read: { r throws(ThriftError) in Self(rawValue: try r.readI32()) }, write: { $0.writeI32($1.rawValue) })
    }
}
