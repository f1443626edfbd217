import XCTest
@testable import EvernoteAPI
@testable import Capture

/// The reader must turn every malformed input into a ThriftError.
final class ThriftReaderDefenseTests: XCTestCase {
    private func expect(_ expected: ThriftError, _ input: [UInt8], limits: ThriftReaderLimits = .default,
                        file: StaticString = #filePath, line: UInt = #line,
                        _ body: (inout ThriftBinaryReader) throws(ThriftError) -> Void) {
        assertThrows(expected, file: file, line: line) {
            var reader = ThriftBinaryReader(input, limits: limits)
            try body(&reader)
        }
    }

    func testTruncatedScalars() {
        expect(.truncated(needed: 4, remaining: 3), [0, 0, 1]) { r throws(ThriftError) in _ = try r.readI32() }
        expect(.truncated(needed: 8, remaining: 0), []) { r throws(ThriftError) in _ = try r.readDouble() }
        expect(.truncated(needed: 5, remaining: 2), bytes("00 00 00 05 61 62")) { r throws(ThriftError) in _ = try r.readString() }
    }

    func testNegativeAndHugeLengths() {
        expect(.negativeLength(-1), bytes("ff ff ff ff")) { r throws(ThriftError) in _ = try r.readString() }
        expect(.lengthLimitExceeded(length: 0x7fff_ffff, limit: 16 << 20), bytes("7f ff ff ff")) { r throws(ThriftError) in _ = try r.readString() }
        // Under the limit but beyond the input: no allocation, just truncated.
        expect(.truncated(needed: 1000, remaining: 0), bytes("00 00 03 e8")) { r throws(ThriftError) in _ = try r.readBinary() }
        expect(.lengthLimitExceeded(length: 5, limit: 4), bytes(#"00 00 00 05 "hello""#),
               limits: ThriftReaderLimits(maxStringLength: 4)) { r throws(ThriftError) in _ = try r.readString() }
    }

    func testContainerCountsCheckedBeforeAllocation() {
        // 2^31-1 i64 elements promised by 0 bytes.
        expect(.containerLimitExceeded(count: 0x7fff_ffff, limit: 1 << 20), bytes("0a 7f ff ff ff")) { r throws(ThriftError) in _ = try [Int64](from: &r) }
        expect(.truncated(needed: 800, remaining: 8), bytes("0a 00 00 00 64") + Array(repeating: 0, count: 8)) { r throws(ThriftError) in _ = try [Int64](from: &r) }
        expect(.negativeLength(-2), bytes("0b ff ff ff fe")) { r throws(ThriftError) in _ = try [String](from: &r) }
        expect(.invalidType(0x10), bytes("10 00 00 00 01 00")) { r throws(ThriftError) in try r.skip(.list) }
        expect(.invalidType(1), bytes("0b 01 00 10 00 00")) { r throws(ThriftError) in try r.skip(.map) }
        expect(.unexpectedType(expected: .string, found: .i32), bytes("08 00 00 00 01 00 00 00 07")) { r throws(ThriftError) in _ = try [String](from: &r) }
    }

    func testDepthLimit() {
        // 100 nested lists of lists.
        let deep = Array(repeating: bytes("0f 00 00 00 01"), count: 100).flatMap { $0 }
        expect(.depthLimitExceeded(limit: 64), deep) { r throws(ThriftError) in try r.skip(.list) }
        // 10,000 nested structs as field 1 of each other.
        let structs = Array(repeating: bytes("0c 00 01"), count: 10_000).flatMap { $0 }
        expect(.depthLimitExceeded(limit: 64), structs) { r throws(ThriftError) in _ = try EDAM.Note(from: &r) }
        expect(.depthLimitExceeded(limit: 3), bytes("0c 00 0e  0c 00 17  0c 00 01 00 00 00 00"),
               limits: ThriftReaderLimits(maxDepth: 3)) { r throws(ThriftError) in _ = try EDAM.Note(from: &r) }
    }

    func testBadTypesAndHeaders() {
        expect(.invalidType(0x07), bytes("07 00 01 00")) { r throws(ThriftError) in _ = try EDAM.Tag(from: &r) }
        expect(.badVersion(0x8002_0001), bytes("80 02 00 01 00 00 00 00 00 00 00 00")) { r throws(ThriftError) in _ = try r.readMessageBegin() }
        expect(.invalidMessageType(9), bytes("80 01 00 09 00 00 00 00 00 00 00 00")) { r throws(ThriftError) in _ = try r.readMessageBegin() }
        expect(.invalidMessageType(0), bytes(#"00 00 00 01 "x" 00 00 00 00 01"#)) { r throws(ThriftError) in _ = try r.readMessageBegin() }
        expect(.invalidType(0), [0]) { r throws(ThriftError) in try r.skip(.stop) }
    }

    func testNonStrictMessageHeader() throws {
        var reader = ThriftBinaryReader(bytes(#"00 00 00 0c "checkVersion" 02 00 00 00 2a"#))
        XCTAssertEqual(try reader.readMessageBegin(), ThriftMessageHeader(name: "checkVersion", type: .reply, seqid: 42))
    }

    func testUnknownFieldsAreSkippedRecursively() throws {
        var w = ThriftBinaryWriter()
        w.writeFieldBegin(.map, id: 900)
        w.writeMapBegin(keyType: .string, valueType: .list, count: 1)
        w.writeString("k")
        w.writeListBegin(elementType: .struct, count: 1)
        w.writeField(1, 3.5); w.writeField(2, Int64(7)); w.writeField(3, [Int64(1)]); w.writeFieldStop()
        w.writeFieldBegin(.set, id: 901); w.writeSetBegin(elementType: .bool, count: 2); w.writeBool(true); w.writeBool(false)
        w.writeFieldBegin(.byte, id: 902); w.writeByte(1)
        w.writeField(2, "kept")
        w.writeFieldBegin(.i32, id: 2); w.writeI32(5) // known id, wrong type: skipped
        w.writeField(4, Int32(3))
        w.writeFieldStop()
        let tag = try EDAM.Tag(thriftEncoded: w.bytes)
        XCTAssertEqual(tag.name, "kept")
        XCTAssertEqual(tag.updateSequenceNum, 3)
    }

    func testRequiredFieldsEnforced() {
        XCTAssertThrowsError(try EDAM.NoteMetadata(thriftEncoded: [0])) { error in
            XCTAssertEqual(error as? ThriftError, .missingRequiredField(structName: "NoteMetadata", field: "guid"))
        }
        var w = ThriftBinaryWriter()
        w.writeField(1, Int32(0)); w.writeField(2, Int32(0)); w.writeFieldStop()
        XCTAssertThrowsError(try EDAM.NotesMetadataList(thriftEncoded: w.bytes)) { error in
            XCTAssertEqual(error as? ThriftError, .missingRequiredField(structName: "NotesMetadataList", field: "notes"))
        }
        XCTAssertThrowsError(try EDAM.UserException(thriftEncoded: bytes("0b 00 02 00 00 00 00 00"))) { error in
            XCTAssertEqual(error as? ThriftError, .missingRequiredField(structName: "EDAMUserException", field: "errorCode"))
        }
    }

    func testInvalidUTF8IsReplacedNotFatal() throws {
        var reader = ThriftBinaryReader(bytes("00 00 00 02 c3 28"))
        XCTAssertEqual(try reader.readString(), "\u{FFFD}(")
    }
}
