import Mustache

/// How `{{x}}` escapes a value in a note's content: `ENMLCharacters.escaped`, scalar by scalar.
/// swift-mustache's own HTML escaping compares Characters, so a `<` or `&` with a combining mark
/// after it (one Character) went into the note as it was, and the note was invalid ENML.
struct ENMLEscaping: MustacheContentType {
    func escapeText(_ text: String) -> String {
        ENMLCharacters.escaped(text)
    }

    /// Put in front of every content template: without a pragma swift-mustache escapes with its
    /// own HTML content type, whatever is registered.
    static let pragma = "{{% CONTENT_TYPE: HTML}}"

    /// Takes the place of swift-mustache's "HTML" content type, so that a template's own
    /// `{{% CONTENT_TYPE: HTML}}` escapes this way too. Before any template is parsed.
    static let installed: Void = MustacheContentTypes.register(ENMLEscaping(), named: "HTML")
}
