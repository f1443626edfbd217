import Foundation
import Testing
@testable import Compose

/// The byte scan reads printable ASCII eight bytes at a time: a control, a DEL or a bad byte at any
/// place in or across those eight is still found, on its line and character column.
@Suite("ENML byte scan")
struct ENMLTextScanTests {
    private func scan(_ bytes: [UInt8]) -> ENMLTextScan {
        bytes.withUnsafeBufferPointer { ENMLTextScan($0) }
    }

    @Test(arguments: [UInt8(0x01), 0x7F, 0x0B])
    func aControlIsFoundAtEveryPlaceInAWord(_ control: UInt8) {
        // Line 2 starts with three characters of 2, 3 and 4 bytes: columns count characters.
        let lead = Array("<p>\n\té東😀".utf8)
        for place in 0..<24 {
            let bytes = lead + Array(repeating: UInt8(ascii: "a"), count: place) + [control] + Array(repeating: UInt8(ascii: "b"), count: 17)
            let found = scan(bytes).diagnostics
            #expect(found.map(\.code) == [.controlCharacter], "place \(place)")
            #expect(found.first.map { [$0.line, $0.column] } == [2, 5 + place], "place \(place)")
        }
    }

    @Test func aBadByteIsFoundAtEveryPlaceInAWord() {
        for place in 0..<20 {
            let bytes = Array(repeating: UInt8(ascii: "a"), count: place) + [0xFF] + Array(repeating: UInt8(ascii: "b"), count: 12)
            let result = scan(bytes)
            #expect(!result.isUTF8)
            #expect(result.diagnostics.first?.message == "invalid UTF-8 byte 0xFF at offset \(place); ENML must be UTF-8")
            #expect(result.diagnostics.first?.column == place + 1)
        }
    }

    @Test func printableASCIIIsCountedWholeAndTabsLineBreaksAndDELAreSeen() {
        #expect(scan(Array(String(repeating: "abcdefgh", count: 5).utf8)).utf16Length == 40)
        let mixed = scan(Array("abcdefg\tabcdefg\rabcdefg\nabcdefg😀".utf8))
        #expect(mixed.diagnostics.isEmpty && mixed.utf16Length == 33)
        #expect(scan(Array("abcdefg\u{7F}".utf8)).hasControlCharacters)
    }
}
