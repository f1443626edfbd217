import Support
// Vocabulary of the Thrift binary protocol shared by the writer and the reader.

/// Wire type ids. Raw values are the bytes on the wire (PROTOCOL.md §3.2).
package enum ThriftType: UInt8, Sendable, Hashable, CustomStringConvertible {
    case stop = 0
    case void = 1
    case bool = 2
    case byte = 3
    case double = 4
    case i16 = 6
    case i32 = 8
    case i64 = 10
    case string = 11
    case `struct` = 12
    case map = 13
    case set = 14
    case list = 15

    /// The fewest bytes one value of this type can occupy; lets the reader reject a container
    /// count the remaining input could not possibly hold before allocating anything for it.
    var minimumEncodedSize: Int {
        switch self {
        case .stop, .void: return 0
        case .bool, .byte: return 1
        case .i16: return 2
        case .i32: return 4
        case .i64, .double: return 8
        case .string: return 4
        case .struct: return 1
        case .map: return 6
        case .set, .list: return 5
        }
    }

    package var description: String {
        switch self {
        case .stop: return "STOP"
        case .void: return "VOID"
        case .bool: return "BOOL"
        case .byte: return "BYTE"
        case .double: return "DOUBLE"
        case .i16: return "I16"
        case .i32: return "I32"
        case .i64: return "I64"
        case .string: return "STRING"
        case .struct: return "STRUCT"
        case .map: return "MAP"
        case .set: return "SET"
        case .list: return "LIST"
        }
    }
}

package enum ThriftMessageType: UInt8, Sendable, Hashable {
    case call = 1
    case reply = 2
    case exception = 3
    case oneway = 4
}

package struct ThriftMessageHeader: Sendable, Hashable {
    package var name: String
    package var type: ThriftMessageType
    package var seqid: Int32
}

package struct ThriftFieldHeader: Sendable, Hashable {
    package var type: ThriftType
    package var id: Int16
}
