/// Finds what would crash TOMLKit before TOMLKit reads it: the toml++ 3.4 inside it asserts (and
/// aborts the process) instead of reporting an error when a table header's first key starts with
/// a character no key can start with (`[(map]`, `[ !x]`, `[` at the end of a line).
///
/// A lexical scan, no more: strings, comments and brackets are followed so that a `[` inside a
/// value is not taken for a header; anything else is left to TOMLKit to accept or refuse.
enum TOMLHeaderGuard {
    /// Line and column (from 1, in Unicode scalars) of the first such character, or nil.
    static func firstBadHeaderKey(in text: String) -> (line: Int, column: Int)? {
        let scalars = Array(text.unicodeScalars)
        var index = 0, line = 1, lineStart = 0, depth = 0
        var onlySpaceSoFar = true
        if scalars.first == "\u{FEFF}" { (index, lineStart) = (1, 1) }   // toml++ skips a byte order mark
        func skipSpaces(from start: Int) -> Int {
            var at = start
            while at < scalars.count, scalars[at] == " " || scalars[at] == "\t" { at += 1 }
            return at
        }
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "\n":
                line += 1
                lineStart = index + 1
                onlySpaceSoFar = true
            case " ", "\t", "\r":
                break
            case "#":
                while index + 1 < scalars.count, scalars[index + 1] != "\n" { index += 1 }
            case "\"", "'":
                onlySpaceSoFar = false
                let triple = index + 2 < scalars.count && scalars[index + 1] == scalar && scalars[index + 2] == scalar
                index += triple ? 3 : 1
                while index < scalars.count {
                    let inside = scalars[index]
                    if inside == "\\" && scalar == "\"" {
                        index += 1
                    } else if inside == "\n" {
                        guard triple else { break }
                        line += 1
                        lineStart = index + 1
                    } else if inside == scalar && (!triple || index + 2 < scalars.count && scalars[index + 1] == scalar && scalars[index + 2] == scalar) {
                        index += triple ? 3 : 1
                        break
                    }
                    index += 1
                }
                continue
            case "[" where depth == 0 && onlySpaceSoFar:
                var key = skipSpaces(from: index + 1)
                if key == index + 1, key < scalars.count, scalars[key] == "[" { key = skipSpaces(from: key + 1) }
                if key < scalars.count, !canStartHeaderKey(scalars[key]) { return (line, key - lineStart + 1) }
                onlySpaceSoFar = false
            case "[", "{":
                depth += 1
                onlySpaceSoFar = false
            case "]", "}":
                depth = max(depth - 1, 0)
                onlySpaceSoFar = false
            default:
                onlySpaceSoFar = false
            }
            index += 1
        }
        return nil
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
