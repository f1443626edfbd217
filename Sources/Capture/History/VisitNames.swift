import Foundation

/// What an imported visit calls its place, told apart from what only stands in for a name.
///
/// Google's exports label a place by its kind where they have no name for it: `semanticType`
/// `TYPE_ALIASED_LOCATION` (a private label the export leaves out), `TYPE_SEARCHED_ADDRESS`,
/// `UNKNOWN`/`Unknown` (the phones' exports), and in some files random strings. Only the kinds
/// that name a place for the person (their Home and Work, set or inferred) are names; every
/// other kind, and a name that is only such a word ("Location", "Address", "Unknown"), is a
/// placeholder: the visit's address, or the geocoder, names the place instead.
package enum VisitNames {
    /// Where a visit's name came from.
    package enum Origin: Sendable, Equatable {
        /// The source's own name for the place (a venue, Home, Work).
        case name
        /// The source's address for the place, shortened.
        case address
    }

    /// `semanticType`s that name the place, by their last word: HOME, TYPE_HOME, INFERRED_HOME,
    /// Home → "Home"; the same for WORK.
    static let namingKinds = ["HOME": "Home", "WORK": "Work"]

    /// Words that stand in for a name (compared lower-cased, `_` as a space, a leading "type "
    /// dropped): the kinds of Google's exports, and the labels earlier versions made of them.
    package static let placeholderWords: Set<String> = [
        "", "unknown", "location", "address", "aliased location", "searched address", "unknown place",
        "unknown location", "unnamed", "unnamed place", "unnamed location", "dropped pin", "null", "none", "n/a",
    ]

    /// The kind's name for the place ("Home", "Work"), nil for a kind that names nothing.
    package static func label(semanticType: String) -> String? {
        let last = semanticType.split(separator: "_").last.map { $0.uppercased() } ?? ""
        return namingKinds[last]
    }

    /// Whether `name` only stands in for a name.
    package static func isPlaceholder(_ name: String) -> Bool {
        var word = name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().replacingOccurrences(of: "_", with: " ")
        if word.hasPrefix("type ") { word.removeFirst(5) }
        return placeholderWords.contains(word)
    }

    /// An address as a place's name: its first two parts ("83 Enford Cres, Brampton" of
    /// "83 Enford Cres, Brampton, ON L7A 0G1, Canada"), parts split at commas and line ends.
    package static func shortAddress(_ address: String) -> String? {
        let parts = address.split(whereSeparator: { $0 == "," || $0.isNewline })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !parts.isEmpty else { return nil }
        let short = parts.prefix(2).joined(separator: ", ")
        return isPlaceholder(short) ? nil : short
    }

    /// The visit's name for its place and where it came from, in order: the source's real name,
    /// the kind's name (Home, Work), the source's address; nil when it gives none of them.
    package static func name(name: String?, address: String?, semanticType: String?) -> (String, Origin)? {
        if let name, !isPlaceholder(name) { return (name.trimmingCharacters(in: .whitespacesAndNewlines), .name) }
        if let label = semanticType.flatMap({ label(semanticType: $0) }) { return (label, .name) }
        if let short = address.flatMap(shortAddress) { return (short, .address) }
        return nil
    }
}
