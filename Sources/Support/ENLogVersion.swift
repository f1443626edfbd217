package enum ENLogVersion {
    package static let current = "0.1.0"
}
