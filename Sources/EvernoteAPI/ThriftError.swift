import Support
/// Everything that can be wrong with bytes handed to `ThriftBinaryReader`. Input comes from the
/// network, so each of these is an expected outcome, never a trap.
package enum ThriftError: ENLogError, Equatable, Sendable {
    /// The input ended before a value was complete.
    case truncated(needed: Int, remaining: Int)
    /// A byte that is not a Thrift type id where one was expected.
    case invalidType(UInt8)
    /// A known field or container carried a type other than the IDL's.
    case unexpectedType(expected: ThriftType, found: ThriftType)
    case negativeLength(Int32)
    /// A string/binary longer than the configured limit or than the bytes left.
    case lengthLimitExceeded(length: Int, limit: Int)
    /// A container count above the configured limit or more than the bytes left could hold.
    case containerLimitExceeded(count: Int, limit: Int)
    case depthLimitExceeded(limit: Int)
    /// A strict message header whose version word is not `0x8001`.
    case badVersion(UInt32)
    case invalidMessageType(UInt8)
    case missingRequiredField(structName: String, field: String)

    package var reason: String {
        let detail: String
        switch self {
        case .truncated(let needed, let remaining):
            detail = "input ends early (needed \(needed) more bytes, \(remaining) left)"
        case .invalidType(let byte):
            detail = "unknown type id \(byte)"
        case .unexpectedType(let expected, let found):
            detail = "expected \(expected) but found \(found)"
        case .negativeLength(let length):
            detail = "negative length or count \(length)"
        case .lengthLimitExceeded(let length, let limit):
            detail = "a string of \(length) bytes exceeds the limit of \(limit)"
        case .containerLimitExceeded(let count, let limit):
            detail = "a container of \(count) elements exceeds the limit of \(limit)"
        case .depthLimitExceeded(let limit):
            detail = "nesting deeper than \(limit) levels"
        case .badVersion(let word):
            detail = "bad protocol version word 0x\(String(word, radix: 16))"
        case .invalidMessageType(let type):
            detail = "unknown message type \(type)"
        case .missingRequiredField(let structName, let field):
            detail = "\(structName).\(field) is required but missing"
        }
        return "malformed Thrift data: \(detail)"
    }

    package var recoverySuggestion: String? {
        "retry later; if it persists, check that the configured Evernote host is the real service and that no proxy rewrites its replies"
    }
}

extension ThriftError {
    /// Bytes that are not Thrift: the other side does not speak the protocol.
    package var category: ErrorCategory { .protocolError }
}
