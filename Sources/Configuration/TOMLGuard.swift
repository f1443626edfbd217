/// Finds what would take TOMLKit's toml++ 3.4 into its own failures before TOMLKit reads it,
/// where toml++ asserts (aborting the process) or reaches code it marks unreachable (undefined
/// behaviour) instead of reporting an error:
/// - a table header whose first key starts with a character no key can start with (`[(map]`,
///   `[ !x]`, `[` at the end of a line): an assertion;
/// - a `}` inside an array (`tags = [}`): toml++ takes it for a value's start, which it asserts
///   (or, built without assertions, assumes) is none;
/// - a non-ASCII character where toml++ asks whether it is whitespace: its test of non-ASCII
///   whitespace is unreachable for U+00A1–U+0499, U+2C5E–U+2FFF, U+3001–U+3057 and
///   U+FB26–U+FEFE (é, ü, Cyrillic, Greek, kana…). It asks outside strings and comments, where
///   TOML allows no non-ASCII character anyway, and in a multi-line basic string of the character
///   right after a backslash and of the first one after a line-ending backslash's line break.
///
/// - an escaped NUL in a string (`\u0000`): toml++ keeps it, TOMLKit's C string ends there;
/// - nesting deeper than `maximumDepth` (`[a.a.a.…]`, `a.a.a.… = 1`, `[[[[…`, `{a={a={…`, and
///   any mix of them): toml++ and TOMLKit recurse once a level, and 150,000 levels (a 300 KB
///   file) overflowed the stack (SIGSEGV) of every command that reads the configuration.
///
/// A lexical scan, no more: strings, comments and brackets are followed as toml++ follows them,
/// so that a `[` or an `é` inside a value is not taken for a header or a stray character;
/// anything else is left to TOMLKit to accept or refuse.
enum TOMLGuard {
    struct Problem: Equatable {
        /// From 1; the column in Unicode scalars, as toml++ counts.
        let line: Int
        let column: Int
        let message: String
    }

    /// The deepest nesting accepted: a table header's or key's dotted parts, plus the arrays and
    /// inline tables open around a value, counted together from the document's root. enlog's own
    /// settings are two deep (`[note]` `tags = [...]` is three); toml++'s own limit for arrays and
    /// inline tables alone is 256.
    static let maximumDepth = 100

    static func firstProblem(in text: String) -> Problem? {
        var scan = Scan(scalars: Array(text.unicodeScalars))
        return scan.run()
    }
}

private struct Scan {
    let scalars: [Unicode.Scalar]
    var index = 0, line = 1, lineStart = 0
    var onlySpaceSoFar = true
    /// The arrays (`[`) and inline tables (`{`) open here, innermost last.
    var open: [Unicode.Scalar] = []
    /// The dotted parts of the last table header (`[a.b]`: 2), while it is read and after.
    var headerParts = 0
    var inHeader = false
    /// The dots of the key being read, beyond those counted at the arrays and inline tables open
    /// around it (`dotsAtOpen`, innermost last): a `,` in an inline table starts a sibling key.
    var keyDots = 0
    var dotsAtOpen: [Int] = []
    /// The last character outside strings and comments on this line, if any: a quote starts a
    /// string only at the line's start or after `=`, `,`, `[`, `{` or `.`. Elsewhere (`+"é"`,
    /// `1"é"`) toml++ reads it as part of a number and asks of each character after it, up to a
    /// space, `,`, `]`, `}` or `#`, whether it ends the value, so that it is no string here either.
    var lastOutside: Unicode.Scalar?
    /// The last character outside strings, comments and blanks, on any line before.
    var lastSignificant: Unicode.Scalar?

    init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
        if scalars.first == "\u{FEFF}" { (index, lineStart) = (1, 1) }   // toml++ skips a byte order mark
    }

    mutating func run() -> TOMLGuard.Problem? {
        while index < scalars.count {
            let scalar = scalars[index]
            if isValueStart, scalar == "+" || scalar == "-" || ("0"..."9").contains(scalar) {
                if let problem = skipScannedValue() { return problem }
                continue
            }
            switch scalar {
            case "\n":
                newLine()
                onlySpaceSoFar = true
                lastOutside = nil
                if open.isEmpty { (inHeader, keyDots) = (false, 0) }
            case " ", "\t", "\r":
                break
            case "#":
                while index + 1 < scalars.count, scalars[index + 1] != "\n" { index += 1 }
            case "\"" where lastOutside.map(Self.canPrecedeString) ?? true, "'" where lastOutside.map(Self.canPrecedeString) ?? true:
                onlySpaceSoFar = false
                (lastOutside, lastSignificant) = (scalar, scalar)
                if let problem = skipString(quote: scalar) { return problem }
                continue
            case "[" where open.isEmpty && onlySpaceSoFar:
                var key = skipSpaces(from: index + 1)
                if key == index + 1, key < scalars.count, scalars[key] == "[" { key = skipSpaces(from: key + 1) }
                if key < scalars.count, !Self.canStartHeaderKey(scalars[key]) {
                    return problem(at: key, "a table header's name must start with a letter, a digit, '-', '_' or a quote")
                }
                (inHeader, headerParts, keyDots) = (true, 1, 0)
                onlySpaceSoFar = false
            case "[", "{":
                open.append(scalar)
                dotsAtOpen.append(keyDots)
                onlySpaceSoFar = false
                if let problem = tooDeep(at: index) { return problem }
            case "}" where open.last == "[":
                return problem(at: index, "a '}' inside an array, which ends with ']'")
            case "]", "}":
                _ = open.popLast()
                keyDots = dotsAtOpen.popLast() ?? keyDots
                if open.isEmpty { inHeader = false }
                onlySpaceSoFar = false
            case "." where !isValueStart:
                if inHeader { headerParts += 1 } else { keyDots += 1 }
                onlySpaceSoFar = false
                if let problem = tooDeep(at: index) { return problem }
            case "=":
                onlySpaceSoFar = false
                if let problem = tooDeep(at: index) { return problem }
            case "," where open.last == "{":
                keyDots = dotsAtOpen.last ?? 0
                onlySpaceSoFar = false
            case _ where !scalar.isASCII:
                return problem(at: index, "a non-ASCII character (\(Self.codePoint(scalar))) outside a string or comment")
            default:
                onlySpaceSoFar = false
            }
            if scalar != " " && scalar != "\t" && scalar != "\r" && scalar != "\n" { lastOutside = scalar }
            if !Self.endsScannedValue(scalar) || [",", "]", "}"].contains(scalar) { lastSignificant = scalar }
            index += 1
        }
        return nil
    }

    /// Nesting past `TOMLGuard.maximumDepth` at `position`: the header's parts, the key's dots and
    /// the brackets open, together.
    private func tooDeep(at position: Int) -> TOMLGuard.Problem? {
        let depth = (inHeader ? headerParts : headerParts + keyDots + 1) + open.count
        guard depth > TOMLGuard.maximumDepth else { return nil }
        return problem(at: position, "tables, dotted keys, arrays and inline tables nested more than \(TOMLGuard.maximumDepth) "
                       + "levels deep; enlog's settings are two levels deep ([section] key = value)")
    }

    /// Where toml++ reads a value: after `=`, or after an array's `[` or `,`.
    private var isValueStart: Bool {
        lastSignificant == "=" || open.last == "[" && (lastSignificant == "[" || lastSignificant == ",")
    }

    /// Moves past a value that starts with a digit or a sign, as toml++ scans it to learn its
    /// type: up to a blank, `,`, `]`, `}` or `#`, quotes and all (`3.."é"`), on past a space
    /// between a date and a digit. It asks of every character whether it ends the value.
    ///
    /// toml++ counts the characters but underscores: when ten of them look like a date
    /// (`2026-11-24`, `9939-__29-___=f`) and a space and a digit follow, it reads the digit as
    /// a time's first and scans on from the character after it, which it asserts is no
    /// terminator. A lone digit there (`2026-11-24 9`) is no time in any TOML, so it is refused.
    private mutating func skipScannedValue() -> TOMLGuard.Problem? {
        var counted: [Unicode.Scalar] = []
        var mayBeDateAndTime = true
        while index < scalars.count {
            let scalar = scalars[index]
            if Self.endsScannedValue(scalar) {
                guard mayBeDateAndTime, counted.count == 10, counted[4] == "-", counted[7] == "-", scalar == " ",
                      index + 1 < scalars.count, ("0"..."9").contains(scalars[index + 1]) else { break }
                mayBeDateAndTime = false
                if index + 2 == scalars.count || Self.endsScannedValue(scalars[index + 2]) {
                    return problem(at: index + 1, "a date followed by a space and a lone digit; a time has hours and minutes "
                                   + "(2026-11-24 09:30:00)")
                }
                index += 2
                continue
            }
            if !scalar.isASCII {
                return problem(at: index, "a non-ASCII character (\(Self.codePoint(scalar))) outside a string or comment")
            }
            if scalar != "_" {
                if counted.count < 10 { counted.append(scalar) } else { mayBeDateAndTime = false }
            }
            index += 1
        }
        onlySpaceSoFar = false
        (lastOutside, lastSignificant) = (scalars[index - 1], scalars[index - 1])
        return nil
    }

    /// toml++'s value terminators but the non-ASCII blanks, which are refused anyway.
    private static func endsScannedValue(_ scalar: Unicode.Scalar) -> Bool {
        [" ", "\t", "\n", "\u{0B}", "\u{0C}", "\r", ",", "]", "}", "#"].contains(scalar)
    }

    /// Moves past the string that starts at `index`, as toml++ reads it: three quotes open a
    /// multi-line string, which a run of three to five closes (one or two of them its content).
    private mutating func skipString(quote: Unicode.Scalar) -> TOMLGuard.Problem? {
        let multiLine = index + 2 < scalars.count && scalars[index + 1] == quote && scalars[index + 2] == quote
        let basic = quote == "\""
        index += multiLine ? 3 : 1
        // After a line-ending backslash toml++ skips blanks, asking of each whether it is one.
        var skippingBlanks = false
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == quote {
                guard multiLine else {
                    index += 1
                    return nil
                }
                var run = 1
                while index + run < scalars.count, scalars[index + run] == quote { run += 1 }
                index += run
                if run >= 3 { return nil }
                skippingBlanks = false
                continue
            }
            if scalar == "\n" {
                guard multiLine else { return nil }   // toml++ refuses it; what follows is outside
                newLine()
                index += 1
                continue
            }
            guard basic else {
                index += 1
                continue
            }
            if scalar == "\\" {
                index += 1
                if let problem = nulEscape(at: index) { return problem }
                guard multiLine else {
                    if index < scalars.count, scalars[index] != "\n" { index += 1 }
                    continue
                }
                if index < scalars.count, !scalars[index].isASCII { return afterBackslash(at: index) }
                guard index < scalars.count, [" ", "\t", "\r", "\n"].contains(scalars[index]) else {
                    index += 1
                    skippingBlanks = false
                    continue
                }
                index = skipSpaces(from: index)
                if index < scalars.count, !scalars[index].isASCII { return afterBackslash(at: index) }
                skippingBlanks = true
                continue
            }
            if multiLine && skippingBlanks && ![" ", "\t", "\r"].contains(scalar) {
                if !scalar.isASCII { return afterBackslash(at: index) }
                skippingBlanks = false
            }
            index += 1
        }
        return nil
    }

    /// `\u0000`, `\U00000000` (or TOML 1.1's `\x00`) after the backslash at `position - 1`:
    /// TOMLKit hands strings over as C strings, which end at a NUL, so that
    /// `db = "real.sqlite\u0000.x"` named real.sqlite. No setting takes a NUL.
    private func nulEscape(at position: Int) -> TOMLGuard.Problem? {
        guard position < scalars.count else { return nil }
        let digits: Int
        switch scalars[position] {
        case "u": digits = 4
        case "U": digits = 8
        case "x": digits = 2
        default: return nil
        }
        guard position + digits < scalars.count, scalars[position + 1...position + digits].allSatisfy({ $0 == "0" }) else { return nil }
        return problem(at: position - 1, "a NUL character (\\\(scalars[position])\(String(repeating: "0", count: digits))) in a string; "
                       + "no setting takes one, and the string would end there")
    }

    private func afterBackslash(at position: Int) -> TOMLGuard.Problem {
        let scalar = scalars[position], hex = String(scalar.value, radix: 16, uppercase: true)
        let escape = scalar.value > 0xFFFF ? "\\U" + String(repeating: "0", count: 8 - hex.count) + hex : "\\u" + Self.codePoint(scalar).dropFirst(2)
        return problem(at: position, "a non-ASCII character (\(Self.codePoint(scalar))) right after a backslash or a line-ending "
                       + "backslash's line break in a multi-line string; write it as \(escape)")
    }

    private func problem(at position: Int, _ message: String) -> TOMLGuard.Problem {
        TOMLGuard.Problem(line: line, column: position - lineStart + 1, message: message)
    }

    private mutating func newLine() {
        line += 1
        lineStart = index + 1
    }

    private func skipSpaces(from start: Int) -> Int {
        var at = start
        while at < scalars.count, scalars[at] == " " || scalars[at] == "\t" { at += 1 }
        return at
    }

    /// `U+00E9`: the character itself may be invisible, or break the one-line message.
    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private static func canPrecedeString(_ scalar: Unicode.Scalar) -> Bool {
        ["=", ",", "[", "{", "."].contains(scalar)
    }

    /// A bare key's characters (ASCII letters, digits, `-`, `_`), a quote, or the `]` toml++
    /// refuses properly.
    private static func canStartHeaderKey(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "-", "_", "\"", "'", "]": return true
        default: return false
        }
    }
}
