extension String {
    /// The text of a NUL-terminated buffer a C function filled (libcurl's error buffer, a
    /// `mkstemp` template): the bytes before the first NUL, read as UTF-8, anything invalid replaced.
    package init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
