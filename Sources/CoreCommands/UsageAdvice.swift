import ArgumentParser
import Foundation

/// What to say about a command line argument-parser refused, when a better word than its own is
/// at hand: a mistyped command (`enlog queu list`: did you mean `enlog queue`?) or a bare word
/// where an option and its value are meant (`enlog export diary.enex`: `--enex diary.enex`).
///
/// It reads the command tree argument-parser itself describes (`--experimental-dump-help`'s
/// JSON), so every command, its subcommands and options, those added later included, are
/// covered without a list of their own here.
package struct UsageAdvice: Equatable {
    var reason: String
    var suggestion: String

    /// Advice for `arguments` (the command line without the program name), or nil when there is
    /// nothing better to say than argument-parser's `parserMessage`.
    package static func advice(arguments: [String], parserMessage: String, root: CommandTree) -> UsageAdvice? {
        let words = Array(arguments.prefix { $0 != "--" })
        var node = root
        var path = [root.name]
        var index = 0
        while index < words.count, let next = node.subcommands.first(where: { $0.name == words[index] }) {
            path.append(next.name)
            node = next
            index += 1
        }
        if index < words.count, !node.subcommands.isEmpty, !words[index].hasPrefix("-") {
            let word = words[index]
            // A word a default subcommand takes as its argument is not a mistyped command.
            let taken = node.defaultSubcommand.flatMap { name in node.subcommands.first { $0.name == name } }?.positionals ?? 0
            if taken == 0 {
                let nearest = nearestNames(to: word, among: node.subcommands.map(\.name))
                let shown = (path.count == 1 ? "" : " of `\(path.joined(separator: " "))`")
                guard !nearest.isEmpty else {
                    return UsageAdvice(reason: "unknown command '\(word)'\(shown)",
                                       suggestion: "the commands are \(node.subcommands.map(\.name).joined(separator: ", ")); see `\((path + ["--help"]).joined(separator: " "))`")
                }
                let choices = nearest.map { "`\((path + [$0]).joined(separator: " "))`" }.joined(separator: " or ")
                return UsageAdvice(reason: "unknown command '\(word)'\(shown)", suggestion: "did you mean \(choices)?")
            }
        }
        if let defaultName = node.defaultSubcommand, let chosen = node.subcommands.first(where: { $0.name == defaultName }) {
            node = chosen
            path.append(chosen.name)
        }
        guard node.subcommands.isEmpty,
              let stray = node.strayWord(in: Array(words[index...])) else { return nil }
        guard let option = node.option(for: stray, parserMessage: parserMessage) else { return nil }
        return UsageAdvice(reason: "'\(stray)' is not an argument of `\(path.joined(separator: " "))`",
                           suggestion: "did you mean `\((path + [option, Self.quoted(stray)]).joined(separator: " "))`?")
    }

    /// The word as a shell would need it to stay one word.
    static func quoted(_ word: String) -> String {
        let plain = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_./,:=+@%"))
        if !word.isEmpty, word.unicodeScalars.allSatisfy(plain.contains) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The names closest to `word`: within two edits (a swap of neighbours is one) and fewer
    /// than half its letters, or the one name it begins.
    static func nearestNames(to word: String, among names: [String]) -> [String] {
        let lowered = word.lowercased()
        let scored = names.map { ($0, editDistance(lowered, $0)) }
            .filter { $0.1 <= 2 && $0.1 * 2 < max($0.0.count, lowered.count) }
        if let best = scored.map(\.1).min() { return scored.filter { $0.1 == best }.map(\.0) }
        let prefixed = names.filter { lowered.count >= 2 && $0.hasPrefix(lowered) }
        return prefixed.count == 1 ? prefixed : []
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
    /// neighbouring characters each count one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}

/// A command as argument-parser describes it: its name, subcommands and arguments.
package struct CommandTree: Equatable {
    struct Option: Equatable {
        /// `--enex`, `-m`: every name the option answers to.
        var names: [String]
        /// False for a flag, which takes no value.
        var takesValue: Bool
        var valueName: String?
        var isOptional: Bool
    }

    var name: String
    var subcommands: [CommandTree]
    var defaultSubcommand: String?
    var options: [Option]
    /// How many positional arguments it takes (`Int.max` when one repeats).
    var positionals: Int

    /// An executable's tree (`Enlog`'s, `EnlogServe`'s), read from argument-parser.
    package static func of<Root: ParsableCommand>(_ root: Root.Type) -> CommandTree {
        guard let data = Root._dumpHelp().data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let command = object["command"] as? [String: Any] else { return CommandTree(name: "enlog", subcommands: [], options: [], positionals: 0) }
        return CommandTree(json: command)
    }

    init(name: String, subcommands: [CommandTree], defaultSubcommand: String? = nil, options: [Option], positionals: Int) {
        self.name = name
        self.subcommands = subcommands
        self.defaultSubcommand = defaultSubcommand
        self.options = options
        self.positionals = positionals
    }

    /// From one command object of argument-parser's `--experimental-dump-help` JSON (ToolInfoV0).
    init(json: [String: Any]) {
        name = json["commandName"] as? String ?? ""
        subcommands = (json["subcommands"] as? [[String: Any]] ?? []).map(CommandTree.init(json:))
        defaultSubcommand = json["defaultSubcommand"] as? String
        var options: [Option] = []
        var positionals = 0
        for argument in json["arguments"] as? [[String: Any]] ?? [] {
            let kind = argument["kind"] as? String
            if kind == "positional" {
                positionals = (argument["isRepeating"] as? Bool ?? false) ? Int.max : (positionals == Int.max ? Int.max : positionals + 1)
                continue
            }
            let names = (argument["names"] as? [[String: Any]] ?? []).compactMap { name -> String? in
                guard let text = name["name"] as? String else { return nil }
                return (name["kind"] as? String == "short" ? "-" : "--") + text
            }
            options.append(Option(names: names, takesValue: kind == "option", valueName: argument["valueName"] as? String,
                                  isOptional: argument["isOptional"] as? Bool ?? true))
        }
        self.options = options
        self.positionals = positionals
    }

    /// The first word of `words` (this command's part of the line) that is neither an option,
    /// an option's value, nor one of the positional arguments it takes.
    func strayWord(in words: [String]) -> String? {
        var bare: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word.hasPrefix("-") && word.count > 1 {
                let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
                if !word.contains("="), options.first(where: { $0.names.contains(name) })?.takesValue == true { index += 1 }
                continue
            }
            bare.append(word)
        }
        return bare.count > positionals ? bare[positionals] : nil
    }

    /// The option `word` is the value of: the one named in argument-parser's message (a missing
    /// required option), else the one named like the word's extension (`diary.enex`: `--enex`).
    /// Nil when neither: a guess among several options would mislead.
    func option(for word: String, parserMessage: String) -> String? {
        let valued = options.filter(\.takesValue)
        if let missing = valued.first(where: { option in
            option.names.contains { parserMessage.contains("'\($0) ") || parserMessage.contains("'\($0)'") }
        }) {
            return missing.names.first { $0.hasPrefix("--") } ?? missing.names.first
        }
        let suffix = (word as NSString).pathExtension.lowercased()
        if !suffix.isEmpty, valued.contains(where: { $0.names.contains("--" + suffix) }) { return "--" + suffix }
        return nil
    }
}
