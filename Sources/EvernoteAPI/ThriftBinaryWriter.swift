import Support
/// Builds Thrift binary-protocol bytes. Always writes the strict (versioned) message header,
/// which every Evernote SDK and server accepts.
package struct ThriftBinaryWriter: Sendable {
    package private(set) var bytes: [UInt8]

    package init(reservingCapacity capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: Messages and structs

    package mutating func writeMessageBegin(_ header: ThriftMessageHeader) {
        writeI32(Int32(bitPattern: 0x8001_0000 | UInt32(header.type.rawValue)))
        writeString(header.name)
        writeI32(header.seqid)
    }

    package mutating func writeMessageBegin(name: String, type: ThriftMessageType, seqid: Int32) {
        writeMessageBegin(ThriftMessageHeader(name: name, type: type, seqid: seqid))
    }

    package mutating func writeFieldBegin(_ type: ThriftType, id: Int16) {
        bytes.append(type.rawValue)
        writeI16(id)
    }

    /// Ends a struct; also ends the args/result struct of a message.
    package mutating func writeFieldStop() {
        bytes.append(ThriftType.stop.rawValue)
    }

    // MARK: Scalars

    package mutating func writeBool(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }

    package mutating func writeByte(_ value: Int8) {
        bytes.append(UInt8(bitPattern: value))
    }

    package mutating func writeI16(_ value: Int16) {
        let v = UInt16(bitPattern: value)
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }

    package mutating func writeI32(_ value: Int32) {
        let v = UInt32(bitPattern: value)
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift)))
        }
    }

    package mutating func writeI64(_ value: Int64) {
        let v = UInt64(bitPattern: value)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift)))
        }
    }

    package mutating func writeDouble(_ value: Double) {
        writeI64(Int64(bitPattern: value.bitPattern))
    }

    package mutating func writeString(_ value: String) {
        writeBinary(Array(value.utf8))
    }

    package mutating func writeBinary(_ value: [UInt8]) {
        writeLength(value.count)
        bytes.append(contentsOf: value)
    }

    /// Appends bytes that are already Thrift-encoded (e.g. pre-encoded call arguments).
    package mutating func writeRaw(_ encoded: [UInt8]) {
        bytes.append(contentsOf: encoded)
    }

    // MARK: Containers

    package mutating func writeListBegin(elementType: ThriftType, count: Int) {
        bytes.append(elementType.rawValue)
        writeLength(count)
    }

    package mutating func writeSetBegin(elementType: ThriftType, count: Int) {
        bytes.append(elementType.rawValue)
        writeLength(count)
    }

    package mutating func writeMapBegin(keyType: ThriftType, valueType: ThriftType, count: Int) {
        bytes.append(keyType.rawValue)
        bytes.append(valueType.rawValue)
        writeLength(count)
    }

    private mutating func writeLength(_ count: Int) {
        // Our own values cannot reach 2 GiB (EDAM caps a resource at 200 MiB); a larger one is a
        // programming error, not an input condition.
        precondition(count <= Int(Int32.max), "Thrift length \(count) does not fit in i32")
        writeI32(Int32(count))
    }
}
