/// "1 note", "2 notes", "0 notes": a count with its noun in the right number; `plural` for the
/// nouns that do not just add an s ("1 fix", "2 fixes").
package func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
}

/// "a string", "an integer": a noun with its indefinite article (by its first letter, which is
/// enough for the words enlog prints).
package func withArticle(_ noun: String) -> String {
    guard let first = noun.lowercased().first else { return noun }
    return ("aeiou".contains(first) ? "an " : "a ") + noun
}
