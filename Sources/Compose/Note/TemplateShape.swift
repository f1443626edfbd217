import Foundation

/// A note template's sections as its text nests them, with the literal text each holds: what
/// bounds the work of rendering it (`RenderBudget`), read from the text because swift-mustache
/// keeps its parsed tokens to itself. Tags are found as swift-mustache finds them: `{{` and `}}`
/// until a set-delimiter tag (`{{=<% %>=}}`) changes them, sections opened by `#`, `^` or `$` and
/// closed by `/`, comments (`!`) and pragmas (`%`) skipped.
///
/// The scan runs on a template swift-mustache has parsed already; should it lose its way all the
/// same (a section closed under another name), it says so (`nil`), and rendering then charges
/// each repetition the whole template's text: still bounded, only coarser.
struct TemplateShape: Sendable {
    struct Section: Sendable {
        /// As written, transforms and dots and all: `message`, `reversed(message)`, `a.lines`.
        var name: String
        /// `^name` (rendered at most once, when the value is empty or false) or `$name` (a block,
        /// rendered once).
        var once: Bool
        /// UTF-16 code units of text directly inside, outside tags and nested sections.
        var literal = 0
        var children: [Section] = []

        /// The name the value is looked up under: `reversed(a.message)` → `message`.
        var baseName: String {
            var base = Substring(name)
            while let open = base.firstIndex(of: "(") { base = base[base.index(after: open)...] }
            while base.last == ")" { base = base.dropLast() }
            return String(base.split(separator: ".").last ?? base)
        }

        /// A section over a list whose name is plain (no transform): it repeats its body for each
        /// item, and is charged per item rather than with the section around it.
        func repeats(listNames: Set<String>) -> Bool {
            !once && !name.contains("(") && listNames.contains(baseName)
        }
    }

    /// A tag a note template cannot have: a partial (`{{>name}}`) or a parent (`{{<name}}`).
    struct Unsupported: Error, Equatable {
        /// From 1; the column in Characters.
        let line: Int
        let column: Int
    }

    /// The template's top level, as a section of its own.
    let root: Section
    /// The whole text's length, UTF-16 code units: what each repetition is charged when the scan
    /// lost its way (`root` is then empty).
    let textLength: Int
    let followed: Bool

    /// - Throws: `Unsupported` at the first partial or parent tag.
    init(_ text: String) throws(Unsupported) {
        textLength = text.utf16.count
        let characters = Array(text)
        var start: [Character] = ["{", "{"], end: [Character] = ["}", "}"]
        var stack = [Section(name: "", once: true)]
        var index = 0
        var line = 1, lineStart = 0
        var followed = true

        func matches(_ delimiter: [Character], at position: Int) -> Bool {
            position + delimiter.count <= characters.count && characters[position..<position + delimiter.count].elementsEqual(delimiter)
        }
        func find(_ delimiter: [Character], from position: Int) -> Int? {
            var at = position
            while at + delimiter.count <= characters.count {
                if characters[at] == delimiter[0], matches(delimiter, at: at) { return at }
                at += 1
            }
            return nil
        }
        func literal(_ range: Range<Int>) -> Int {
            characters[range].reduce(0) { $0 + $1.utf16.count }
        }
        func countLines(_ range: Range<Int>) {
            for position in range where characters[position] == "\n" {
                line += 1
                lineStart = position + 1
            }
        }

        scan: while index < characters.count {
            guard let tag = find(start, from: index) else {
                stack[stack.count - 1].literal += literal(index..<characters.count)
                break
            }
            stack[stack.count - 1].literal += literal(index..<tag)
            countLines(index..<tag)
            let contentStart = tag + start.count
            guard contentStart < characters.count, let close = find(end, from: contentStart) else {
                followed = false
                break
            }
            let sigil = characters[contentStart]
            let inside = String(characters[contentStart + 1..<close]).trimmingCharacters(in: .whitespacesAndNewlines)
            var next = close + end.count
            switch sigil {
            case ">", "<":
                throw Unsupported(line: line, column: tag - lineStart + 1)
            case "#", "^", "$":
                stack.append(Section(name: inside, once: sigil != "#"))
            case "/":
                guard stack.count > 1, stack[stack.count - 1].name == inside else {
                    followed = false
                    break scan
                }
                let section = stack.removeLast()
                stack[stack.count - 1].children.append(section)
            case "=":
                // `{{=<% %>=}}`: the new delimiters, blank-separated, before the closing `=`.
                let parts = inside.hasSuffix("=") ? inside.dropLast().split(whereSeparator: \.isWhitespace) : []
                guard parts.count == 2 else {
                    followed = false
                    break scan
                }
                (start, end) = (Array(parts[0]), Array(parts[1]))
            case "{":
                // `{{{name}}}`: the third brace follows the end delimiter.
                if next < characters.count, characters[next] == "}" { next += 1 }
            default:
                break   // a variable, a comment, a pragma
            }
            countLines(tag..<next)
            index = next
        }
        if stack.count != 1 { followed = false }
        self.followed = followed
        root = followed ? stack[0] : Section(name: "", once: true)
    }

    /// What rendering is charged, UTF-16 code units: the template's top level once (`top`), and
    /// each repetition of a list's section (`perItem`, by the list's name) the literal text of
    /// the largest section over it. A section's literal text counts its own and that of the
    /// sections inside it that render at most once per repetition; a section over a list inside
    /// it is charged by that list.
    func charges(listNames: Set<String>) -> (top: Int, perItem: [String: Int], unknown: Int) {
        guard followed else { return (textLength, [:], textLength) }
        func cost(_ section: Section) -> Int {
            section.children.reduce(section.literal) { total, child in
                child.repeats(listNames: listNames) ? total : total + cost(child)
            }
        }
        var perItem: [String: Int] = [:]
        func visit(_ section: Section) {
            for child in section.children {
                if !child.once, listNames.contains(child.baseName) {
                    perItem[child.baseName] = max(perItem[child.baseName] ?? 0, cost(child))
                }
                visit(child)
            }
        }
        visit(root)
        return (cost(root), perItem, textLength)
    }
}
