/// enlog's own reader of the TOML its configuration is written in (docs/configuration.md,
/// "What TOML config.toml may hold"): TOML 1.0's comments, table headers, dotted and quoted
/// keys, the four kinds of strings, integers, floats, booleans and arrays of those. It refuses,
/// each with a syntax error at its line and column, what no setting can hold: dates and times,
/// inline tables, arrays of tables, arrays inside arrays; and an escaped NUL, which no setting
/// takes either.
///
/// It cannot crash on any input by construction: no recursion (an array holds no array), every
/// loop moves forward through the text, every index is checked, the input is at most
/// `maximumLength` bytes and a dotted name at most `maximumDepth` parts.
package enum TOMLReader {
    /// The most dotted parts a name may have, a table header's and its keys' together (an
    /// array around a value counts as one more). enlog's settings are two deep: `[note]`, `tags`.
    package static let maximumDepth = 100
    /// config.toml's own limit (`InputLimit.smallText`), so that the reader is bounded without it.
    package static let maximumLength = 1 << 20

    /// The document's table headers and keys, in the order they stand in the text.
    package static func read(_ text: String) throws(TOMLError) -> [TOMLEntry] {
        guard text.utf8.count <= maximumLength else {
            throw TOMLError(TOMLPosition(line: 1, column: 1), "the file is longer than \(maximumLength >> 20) MiB")
        }
        var parser = TOMLParser(TOMLScanner(Array(text.unicodeScalars)))
        return try parser.document()
    }
}

/// A value a setting can be given.
package enum TOMLValue: Sendable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    /// Of strings, numbers and booleans only.
    case array([TOMLValue])
}

/// Line and column from 1; the column counts Unicode scalars (a byte order mark not counted).
package struct TOMLPosition: Sendable, Equatable {
    package var line: Int
    package var column: Int
}

package struct TOMLError: Error, Sendable, Equatable {
    package var position: TOMLPosition
    package var message: String

    init(_ position: TOMLPosition, _ message: String) {
        self.position = position
        self.message = message
    }
}

/// A table header (`[note]`) or a key and its value, named by its whole dotted path
/// (`note.tags` for `tags = […]` under `[note]`).
package struct TOMLEntry: Sendable {
    package enum Content: Sendable {
        case table
        case value(TOMLValue)
    }

    package var path: [String]
    package var content: Content
    package var position: TOMLPosition
}

// MARK: - The parser: lines, keys, values, and TOML's rules on defining a name once

struct TOMLParser {
    var scanner: TOMLScanner
    var names = TOMLNames()
    /// The path of the last table header (the root's is empty) and its node in `names`.
    var table: [String] = []
    var tableNode = TOMLNames.root

    init(_ scanner: TOMLScanner) { self.scanner = scanner }

    mutating func document() throws(TOMLError) -> [TOMLEntry] {
        var entries: [TOMLEntry] = []
        while !scanner.atEnd {
            scanner.skipBlanks()
            switch scanner.current {
            case "[": entries.append(try header())
            case nil, "#", "\n", "\r": break
            default: entries.append(try keyAndValue())
            }
            try scanner.endOfLine()
        }
        return entries
    }

    /// `[a.b]`; `[[a.b]]` is read to its end, then refused.
    private mutating func header() throws(TOMLError) -> TOMLEntry {
        let start = scanner.position
        scanner.advance()
        let isArrayOfTables = scanner.take("[")
        scanner.skipBlanks()
        guard let first = scanner.current, TOMLScanner.isBareKey(first) || first == "\"" || first == "'" else {
            throw scanner.error("a table header's name must start with a letter, a digit, '-', '_' or a quote")
        }
        let path = try dottedKey(depthBefore: 0)
        guard scanner.take("]"), !isArrayOfTables || scanner.take("]") else {
            throw scanner.unexpected(isArrayOfTables ? "']]' to end the header" : "']' to end the table header")
        }
        if isArrayOfTables {
            throw TOMLError(start, "an array of tables ([[…]]); no setting is one: write [section]")
        }
        tableNode = try names.defineTable(path, at: start)
        table = path
        return TOMLEntry(path: path, content: .table, position: start)
    }

    private mutating func keyAndValue() throws(TOMLError) -> TOMLEntry {
        let start = scanner.position
        let key = try dottedKey(depthBefore: table.count)
        guard scanner.take("=") else { throw scanner.unexpected("'=' after the key") }
        scanner.skipBlanks()
        let value = try self.value(depth: table.count + key.count)
        try names.defineValue(key, under: tableNode, table: table, at: start)
        return TOMLEntry(path: table + key, content: .value(value), position: start)
    }

    /// `a`, `a.b`, `"a b".'c'`, blanks around the dots, and the blanks after it.
    private mutating func dottedKey(depthBefore: Int) throws(TOMLError) -> [String] {
        var parts: [String] = []
        repeat {
            scanner.skipBlanks()
            guard depthBefore + parts.count < TOMLReader.maximumDepth else {
                throw scanner.error("tables, dotted keys and arrays nested more than \(TOMLReader.maximumDepth) levels deep; "
                                    + "enlog's settings are two levels deep ([section] key = value)")
            }
            parts.append(try scanner.simpleKey())
            scanner.skipBlanks()
        } while scanner.take(".")
        return parts
    }

    /// The value at `depth` (the dotted parts of its name).
    private mutating func value(depth: Int) throws(TOMLError) -> TOMLValue {
        guard scanner.current == "[" else { return try scalar() }
        guard depth < TOMLReader.maximumDepth else {
            throw scanner.error("tables, dotted keys and arrays nested more than \(TOMLReader.maximumDepth) levels deep; "
                                + "enlog's settings are two levels deep ([section] key = value)")
        }
        scanner.advance()
        var items: [TOMLValue] = []
        while true {
            try scanner.skipBlanksLinesAndComments()
            if scanner.take("]") { break }
            if scanner.current == "[" { throw scanner.error("an array inside an array; a list holds strings: [\"a\", \"b\"]") }
            items.append(try scalar())
            try scanner.skipBlanksLinesAndComments()
            if scanner.take(",") { continue }
            if scanner.take("]") { break }
            throw scanner.current == "}" ? scanner.error("a '}' inside an array, which ends with ']'")
                                         : scanner.unexpected("',' or ']' in the array")
        }
        return .array(items)
    }

    /// A string, a number or a boolean.
    private mutating func scalar() throws(TOMLError) -> TOMLValue {
        switch scanner.current {
        case "\"", "'": return .string(try scanner.string())
        case "{": throw scanner.error("an inline table ({…}); write the section as [section] and its settings as key = value lines")
        case "}": throw scanner.error("a '}' inside an array, which ends with ']'")
        default: return try scanner.bareValue()
        }
    }
}

/// Every name the document defines, as a tree of tables, so that TOML's rules hold: a key is
/// set once, a table header stands once, and a name is either a value or a table.
struct TOMLNames {
    enum Kind {
        case value
        /// Named by a table header.
        case header
        /// Made by a header of a table inside it (`[a.b]` makes `a`); a header may still name it.
        case implicit
        /// Made by a dotted key (`b.c = 1` makes `b`); only dotted keys of the same table go on.
        case dotted
    }

    struct Node {
        var kind: Kind
        var line: Int
        var children: [String: Int] = [:]
    }

    static let root = 0
    private var nodes = [Node(kind: .header, line: 0)]

    /// The table `[path]` defines, newly.
    mutating func defineTable(_ path: [String], at position: TOMLPosition) throws(TOMLError) -> Int {
        var node = Self.root
        for (index, part) in path.enumerated() {
            let isLast = index == path.count - 1
            guard let existing = nodes[node].children[part] else {
                node = add(part, under: node, kind: isLast ? .header : .implicit, line: position.line)
                continue
            }
            // Joined only for a message: a name of 100 parts is joined once, not once a part.
            var name: String { path[...index].joined(separator: ".") }
            switch (nodes[existing].kind, isLast) {
            case (.value, _):
                throw TOMLError(position, "'\(name)' is a value (line \(nodes[existing].line)), not a table")
            case (.header, true), (.dotted, true):
                throw TOMLError(position, "the table [\(name)] is defined twice (first on line \(nodes[existing].line))")
            case (.implicit, true):
                nodes[existing].kind = .header
                nodes[existing].line = position.line
            case (.header, false), (.implicit, false), (.dotted, false):
                break
            }
            node = existing
        }
        return node
    }

    /// `key = …` in the table at node `table` (`tablePath`, for messages).
    mutating func defineValue(_ key: [String], under table: Int, table tablePath: [String], at position: TOMLPosition) throws(TOMLError) {
        var node = table
        for (index, part) in key.enumerated() {
            let isLast = index == key.count - 1
            guard let existing = nodes[node].children[part] else {
                node = add(part, under: node, kind: isLast ? .value : .dotted, line: position.line)
                continue
            }
            var name: String { (tablePath + key[...index]).joined(separator: ".") }
            guard !isLast else {
                throw TOMLError(position, "'\(name)' is defined twice (first on line \(nodes[existing].line))")
            }
            guard nodes[existing].kind == .dotted else {
                throw TOMLError(position, nodes[existing].kind == .value
                                ? "'\(name)' is a value (line \(nodes[existing].line)), not a table"
                                : "the table [\(name)] has its own header (line \(nodes[existing].line)); set its keys there")
            }
            node = existing
        }
    }

    private mutating func add(_ part: String, under parent: Int, kind: Kind, line: Int) -> Int {
        nodes.append(Node(kind: kind, line: line))
        nodes[parent].children[part] = nodes.count - 1
        return nodes.count - 1
    }
}

// MARK: - The scanner: characters, positions, strings, keys and bare values

struct TOMLScanner {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
        if scalars.first == "\u{FEFF}" { (index, lineStart) = (1, 1) }   // a byte order mark, allowed and not counted
    }

    var atEnd: Bool { index >= scalars.count }
    var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }
    var position: TOMLPosition { TOMLPosition(line: line, column: index - lineStart + 1) }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    mutating func advance() {
        guard index < scalars.count else { return }
        if scalars[index] == "\n" {
            line += 1
            lineStart = index + 1
        }
        index += 1
    }

    mutating func take(_ scalar: Unicode.Scalar) -> Bool {
        guard current == scalar else { return false }
        advance()
        return true
    }

    func error(_ message: String) -> TOMLError { TOMLError(position, message) }

    /// What stands here instead of `expected`.
    func unexpected(_ expected: String) -> TOMLError {
        guard let scalar = current else { return error("\(expected) is missing at the end of the file") }
        if !scalar.isASCII { return error("a non-ASCII character (\(Self.codePoint(scalar))) outside a string or comment") }
        if scalar == "\n" || scalar == "\r" && peek(1) == "\n" { return error("\(expected) is missing at the end of the line") }
        if Self.isControl(scalar) { return error("a control character (\(Self.codePoint(scalar))) where \(expected) should be") }
        return error("\(expected) is expected here, not '\(scalar)'")
    }

    mutating func skipBlanks() {
        while current == " " || current == "\t" { advance() }
    }

    /// Blanks, an optional comment, then a line break or the end of the text.
    mutating func endOfLine() throws(TOMLError) {
        skipBlanks()
        try skipComment()
        if atEnd || take("\n") { return }
        if current == "\r", peek(1) == "\n" {
            advance()
            advance()
            return
        }
        throw unexpected("the end of the line")
    }

    /// Between an array's items: blanks, line breaks and comments.
    mutating func skipBlanksLinesAndComments() throws(TOMLError) {
        while true {
            skipBlanks()
            try skipComment()
            if take("\n") { continue }
            if current == "\r", peek(1) == "\n" {
                advance()
                advance()
                continue
            }
            return
        }
    }

    private mutating func skipComment() throws(TOMLError) {
        guard take("#") else { return }
        while let scalar = current, scalar != "\n" {
            if Self.isControl(scalar), scalar != "\t", !(scalar == "\r" && peek(1) == "\n") {
                throw error("a control character (\(Self.codePoint(scalar))) in a comment")
            }
            advance()
        }
    }

    // MARK: Keys

    static func isBareKey(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "-", "_": return true
        default: return false
        }
    }

    /// A bare key (`time_zone`) or a quoted one (`"time zone"`, `'x'`), on one line.
    mutating func simpleKey() throws(TOMLError) -> String {
        if current == "\"" || current == "'" {
            guard peek(1) != current || peek(2) != current else {
                throw error("a key in triple quotes; a key is on one line: \"key\" or 'key'")
            }
            return try string()
        }
        let start = index
        while let scalar = current, Self.isBareKey(scalar) { advance() }
        guard index > start else { throw unexpected("a key (letters, digits, '-', '_', or a quoted name)") }
        return String(String.UnicodeScalarView(scalars[start..<index]))
    }

    // MARK: Strings

    /// The string whose opening quote is here: "basic", 'literal', """multi-line basic""" or
    /// '''multi-line literal''', as TOML 1.0 reads them.
    mutating func string() throws(TOMLError) -> String {
        let start = position
        let quote = current!
        let isBasic = quote == "\""
        let isMultiLine = peek(1) == quote && peek(2) == quote
        for _ in 0..<(isMultiLine ? 3 : 1) { advance() }
        if isMultiLine {
            // A line break right after the opening quotes is not part of the string.
            if current == "\r", peek(1) == "\n" { advance() }
            _ = take("\n")
        }
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = current else { throw TOMLError(start, "a string that is never closed") }
            if scalar == quote {
                guard isMultiLine else {
                    advance()
                    return String(text)
                }
                let runStart = position
                var run = 0
                while current == quote, run < 6 {
                    advance()
                    run += 1
                }
                guard run < 6 else { throw TOMLError(runStart, "six quotes in a row in a multi-line string; escape one as \\\"") }
                // Three end the string; one or two more just before them are part of it. One
                // at a time: `append(contentsOf:)` would copy the whole text each time.
                for _ in 0..<(run >= 3 ? run - 3 : run) { text.append(quote) }
                if run >= 3 { return String(text) }
                continue
            }
            if isBasic, scalar == "\\" {
                try escape(into: &text, isMultiLine: isMultiLine)
                continue
            }
            if scalar == "\n" || scalar == "\r" && peek(1) == "\n" {
                guard isMultiLine else {
                    throw error("a line break in a one-line string; close it on its line, or use \"\"\" for several lines")
                }
                if scalar == "\r" { advance() }
                advance()
                text.append("\n")
                continue
            }
            if Self.isControl(scalar), scalar != "\t" {
                throw error("a control character (\(Self.codePoint(scalar))) in a string")
            }
            text.append(scalar)
            advance()
        }
    }

    private static let simpleEscapes: [Unicode.Scalar: Unicode.Scalar] = [
        "b": "\u{08}", "t": "\t", "n": "\n", "f": "\u{0C}", "r": "\r", "\"": "\"", "\\": "\\",
    ]

    private static func isHexDigit(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "0"..."9", "A"..."F", "a"..."f": return true
        default: return false
        }
    }

    /// The escape whose backslash is here, appended to `text`.
    private mutating func escape(into text: inout String.UnicodeScalarView, isMultiLine: Bool) throws(TOMLError) {
        let backslash = position
        advance()
        guard let letter = current else { return }   // the string is then never closed
        if let replacement = Self.simpleEscapes[letter] {
            advance()
            text.append(replacement)
            return
        }
        if letter == "u" || letter == "U" {
            advance()
            let digits = letter == "u" ? 4 : 8
            var value: UInt32 = 0
            for _ in 0..<digits {
                guard let digit = current, digit.isASCII, Self.isHexDigit(digit), let hex = UInt32(String(digit), radix: 16) else {
                    throw TOMLError(backslash, "\\\(letter) takes \(digits) hexadecimal digits")
                }
                value = value << 4 | hex
                advance()
            }
            guard let scalar = Unicode.Scalar(value) else {
                throw TOMLError(backslash, "\\\(letter) names no Unicode character (U+\(String(value, radix: 16, uppercase: true)))")
            }
            guard value != 0 else {
                throw TOMLError(backslash, "an escaped NUL (\\\(letter)\(String(repeating: "0", count: digits))) in a string; no setting takes one")
            }
            text.append(scalar)
            return
        }
        if isMultiLine, letter == " " || letter == "\t" || letter == "\n" || letter == "\r" {
            // A line-ending backslash: it, the line break and the blanks and lines after it go.
            var ahead = 0
            while peek(ahead) == " " || peek(ahead) == "\t" { ahead += 1 }
            if peek(ahead) == "\n" || peek(ahead) == "\r" && peek(ahead + 1) == "\n" {
                while let blank = current, blank == " " || blank == "\t" || blank == "\n" || blank == "\r" && peek(1) == "\n" {
                    advance()
                }
                return
            }
        }
        let shown = Self.isControl(letter) ? Self.codePoint(letter) : String(letter)
        throw TOMLError(backslash, "an escape TOML does not have (\\\(shown)); a backslash itself is written \\\\")
    }

    // MARK: Bare values: booleans and numbers

    private static func isBareValue(_ scalar: Unicode.Scalar) -> Bool {
        isBareKey(scalar) || scalar == "+" || scalar == "." || scalar == ":"
    }

    /// `true`, `false`, an integer (`12`, `-3`, `1_000`, `0x1F`, `0o17`, `0b101`) or a float
    /// (`2.5`, `1e3`, `-1.5E-2`, `inf`, `nan`).
    mutating func bareValue() throws(TOMLError) -> TOMLValue {
        let start = position
        let from = index
        while let scalar = current, Self.isBareValue(scalar) { advance() }
        guard index > from else { throw unexpected("a value") }
        let token = String(String.UnicodeScalarView(scalars[from..<index]))
        if let value = TOMLNumber.value(of: token) { return value }
        if TOMLNumber.isOutOfRange(token) {
            throw TOMLError(start, "\(token) is outside the integers TOML has (-9223372036854775808 to 9223372036854775807)")
        }
        if TOMLNumber.looksLikeDateOrTime(token) {
            throw TOMLError(start, "a date or time (\(token)); no setting takes one")
        }
        throw TOMLError(start, "'\(token)' is no value: a string is quoted (\"…\"), a boolean is true or false, "
                        + "a number is written like 12, -3.5 or 1e3")
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || scalar.value == 0x7F }

    /// `U+00E9`: the character itself may be invisible, or break the one-line message.
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// TOML's numbers and booleans, from the bare token that holds one (ASCII only).
enum TOMLNumber {
    static func value(of token: String) -> TOMLValue? {
        switch token {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case "inf", "+inf": return .float(.infinity)
        case "-inf": return .float(-.infinity)
        case "nan", "+nan", "-nan": return .float(.nan)
        default: break
        }
        let bytes = Array(token.utf8)
        if let radix = radix(bytes) {
            guard digits(bytes[2...], radix: radix) == bytes.count - 2 else { return nil }
            return Int64(String(decoding: bytes[2...].filter { $0 != UInt8(ascii: "_") }, as: UTF8.self), radix: radix).map(TOMLValue.integer)
        }
        // [sign] integer part, then a fraction, an exponent, both or neither.
        var at = bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") ? 1 : 0
        let integerDigits = digits(bytes[at...], radix: 10)
        guard integerDigits > 0, bytes[at] != UInt8(ascii: "0") || integerDigits == 1 else { return nil }
        at += integerDigits
        var isFloat = false
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            let fraction = digits(bytes[(at + 1)...], radix: 10)
            guard fraction > 0 else { return nil }
            at += 1 + fraction
            isFloat = true
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            let exponent = digits(bytes[at...], radix: 10)
            guard exponent > 0 else { return nil }
            at += exponent
            isFloat = true
        }
        guard at == bytes.count else { return nil }
        let plain = String(decoding: bytes.filter { $0 != UInt8(ascii: "_") }, as: UTF8.self)
        if isFloat {
            // strtod's reading: past Double's range it is an infinity, which the settings' ranges refuse.
            return .float(Double(plain) ?? (plain.hasPrefix("-") ? -.infinity : .infinity))
        }
        return Int64(plain).map(TOMLValue.integer)
    }

    /// A well-formed integer past Int64's range.
    static func isOutOfRange(_ token: String) -> Bool {
        guard case nil = value(of: token) else { return false }
        let bytes = Array(token.utf8)
        if let radix = radix(bytes) { return digits(bytes[2...], radix: radix) == bytes.count - 2 }
        let sign = bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") ? 1 : 0
        return bytes.count > sign && bytes[sign] != UInt8(ascii: "0") && sign + digits(bytes[sign...], radix: 10) == bytes.count
    }

    /// `2026-11-24`, `07:32:00`, `1979-05-27T07:32:00Z`: TOML's dates and times begin so.
    static func looksLikeDateOrTime(_ token: String) -> Bool {
        let bytes = Array(token.utf8)
        func isDigit(_ at: Int) -> Bool { at < bytes.count && (0x30...0x39).contains(bytes[at]) }
        let isDate = (0..<4).allSatisfy(isDigit) && bytes.count > 4 && bytes[4] == UInt8(ascii: "-")
        let isTime = (0..<2).allSatisfy(isDigit) && bytes.count > 2 && bytes[2] == UInt8(ascii: ":")
        return isDate || isTime
    }

    /// `0x`, `0o`, `0b`: the radix the prefix names.
    private static func radix(_ bytes: [UInt8]) -> Int? {
        guard bytes.count > 2, bytes[0] == UInt8(ascii: "0") else { return nil }
        switch bytes[1] {
        case UInt8(ascii: "x"): return 16
        case UInt8(ascii: "o"): return 8
        case UInt8(ascii: "b"): return 2
        default: return nil
        }
    }

    /// How many bytes from the start of `bytes` are digits of `radix` with single underscores
    /// between them (`1_000`); a trailing or doubled underscore ends them before it.
    private static func digits(_ bytes: ArraySlice<UInt8>, radix: Int) -> Int {
        func isDigit(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x30...0x39: return Int(byte - 0x30) < radix
            case 0x41...0x46, 0x61...0x66: return radix == 16
            default: return false
            }
        }
        var count = 0
        var at = bytes.startIndex
        while at < bytes.endIndex {
            if isDigit(bytes[at]) {
                at += 1
                count = at - bytes.startIndex
            } else if bytes[at] == UInt8(ascii: "_"), at > bytes.startIndex, isDigit(bytes[at - 1]),
                      at + 1 < bytes.endIndex, isDigit(bytes[at + 1]) {
                at += 1
            } else {
                break
            }
        }
        return count
    }
}
