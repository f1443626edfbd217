import XCTest
@testable import EvernoteAPI
@testable import Capture

/// The worked bytes of PROTOCOL.md §3.4, in both directions.
final class ThriftGoldenBytesTests: XCTestCase {
    let checkVersionCall = bytes("""
        80 01 00 01  00 00 00 0c  "checkVersion"  00 00 00 01
        0b 00 01  00 00 00 11  "LocLog/0.1; Linux"
        06 00 02  00 01
        06 00 03  00 1c
        00
        """)
    let checkVersionTrueReply = bytes(#"80 01 00 02 00 00 00 0c "checkVersion" 00 00 00 01  02 00 00 01  00"#)
    let enmlValidationReply = bytes(#"80 01 00 02 00 00 00 0a "createNote" 00 00 00 07  0c 00 01  08 00 01 00 00 00 0b  0b 00 02 00 00 00 01 2a  00  00"#)
    let tagNamesField = bytes(#"0f 00 0f  0b 00 00 00 01  00 00 00 0f "LocationHistory""#)

    func testCheckVersionCallEncoding() async throws {
        let reply = checkVersionTrueReply
        let transport = ScriptedTransport { _ in reply }
        let client = UserStoreClient(transport: transport)
        let ok = try await client.checkVersion(clientName: "LocLog/0.1; Linux")
        XCTAssertTrue(ok)
        XCTAssertEqual(transport.requests, [checkVersionCall])
    }

    func testCheckVersionCallDecoding() throws {
        var reader = ThriftBinaryReader(checkVersionCall)
        XCTAssertEqual(try reader.readMessageBegin(), ThriftMessageHeader(name: "checkVersion", type: .call, seqid: 1))
        try reader.readStructBegin()
        XCTAssertEqual(try reader.readFieldBegin(), ThriftFieldHeader(type: .string, id: 1))
        XCTAssertEqual(try reader.readString(), "LocLog/0.1; Linux")
        XCTAssertEqual(try reader.readFieldBegin(), ThriftFieldHeader(type: .i16, id: 2))
        XCTAssertEqual(try reader.readI16(), 1)
        XCTAssertEqual(try reader.readFieldBegin(), ThriftFieldHeader(type: .i16, id: 3))
        XCTAssertEqual(try reader.readI16(), 28)
        XCTAssertNil(try reader.readFieldBegin())
        XCTAssertEqual(reader.remaining, 0)
    }

    func testTrueReplyBothWays() throws {
        XCTAssertTrue(try ThriftRPC.decodeReply(checkVersionTrueReply, method: "checkVersion", seqid: 1, result: .decoded))
        let encoded = replyMessage("checkVersion", seqid: 1) { w in
            w.writeField(0, true)
        }
        XCTAssertEqual(encoded, checkVersionTrueReply)
    }

    func testENMLValidationReplyBothWays() throws {
        XCTAssertThrowsError(try ThriftRPC.decodeReply(enmlValidationReply, method: "createNote", seqid: 7,
                                                       result: .decoded as ThriftResultReader<EDAM.Note>)) { error in
            XCTAssertEqual(error as? EvernoteError, .enmlValidation(parameter: "*"))
        }
        let encoded = replyMessage("createNote", seqid: 7) { w in
            w.writeField(1, EDAM.UserException(errorCode: .enmlValidation, parameter: "*"))
        }
        XCTAssertEqual(encoded, enmlValidationReply)
    }

    func testTagNamesFieldBothWays() throws {
        var writer = ThriftBinaryWriter()
        writer.writeField(15, ["LocationHistory"])
        XCTAssertEqual(writer.bytes, tagNamesField)

        let note = try EDAM.Note(thriftEncoded: tagNamesField + [0])
        XCTAssertEqual(note.tagNames, ["LocationHistory"])
        XCTAssertEqual(note, EDAM.Note(tagNames: ["LocationHistory"]))
        XCTAssertEqual(EDAM.Note(tagNames: ["LocationHistory"]).thriftEncoded(), tagNamesField + [0])
    }

    func testDoubleBothWays() throws {
        var writer = ThriftBinaryWriter()
        writer.writeDouble(35.681236)
        XCTAssertEqual(writer.bytes, bytes("40 41 d7 32 bd c2 6d ce"))
        var reader = ThriftBinaryReader(writer.bytes)
        XCTAssertEqual(try reader.readDouble(), 35.681236)
    }

    func testEveryScalarRoundTrips() throws {
        var w = ThriftBinaryWriter()
        w.writeBool(true); w.writeBool(false)
        w.writeByte(-128); w.writeI16(-2); w.writeI32(Int32.min); w.writeI64(Int64.max)
        w.writeDouble(-0.0); w.writeDouble(.infinity); w.writeString("é"); w.writeBinary([0, 255])
        w.writeMapBegin(keyType: .i32, valueType: .list, count: 0)
        w.writeSetBegin(elementType: .double, count: 0)
        XCTAssertEqual(w.bytes.prefix(4), [1, 0, 0x80, 0xff])
        var r = ThriftBinaryReader(w.bytes)
        XCTAssertEqual(try r.readBool(), true)
        XCTAssertEqual(try r.readBool(), false)
        XCTAssertEqual(try r.readByte(), -128)
        XCTAssertEqual(try r.readI16(), -2)
        XCTAssertEqual(try r.readI32(), Int32.min)
        XCTAssertEqual(try r.readI64(), Int64.max)
        XCTAssertEqual(try r.readDouble().sign, .minus)
        XCTAssertEqual(try r.readDouble(), .infinity)
        XCTAssertEqual(try r.readString(), "é")
        XCTAssertEqual(try r.readBinary(), [0, 255])
        let map = try r.readMapBegin()
        XCTAssertEqual(map.keyType, .i32); XCTAssertEqual(map.valueType, .list); XCTAssertEqual(map.count, 0)
        r.readMapEnd()
        let set = try r.readSetBegin()
        XCTAssertEqual(set.elementType, .double); XCTAssertEqual(set.count, 0)
        r.readSetEnd()
        XCTAssertEqual(r.remaining, 0)
    }
}
